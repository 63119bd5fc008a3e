"""The canary through the real harnesses: `rehydrate canary run --agent '<claude -p | codex exec | gemini -p>'` against
a mock model that answers the two questions only from what its own request holds (it quotes every "next allowed
action:" and every "rejected:" line it was sent, and nothing else). With the hooks installed the brief arrives and
the canary passes, after a compaction too; with the hooks uninstalled nothing brings the state, and it fails."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from e2e.e2e_harness import Harness, codex_config, gemini_settings, make_harness
from e2e.e2e_mock import MockModel, Reply

pytestmark = pytest.mark.e2e

NEXT = "binding powers for + - * / CANARY-NEXT-5e1d"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def reader(body: dict[str, Any]) -> Reply:
    """A model that answers from its request alone: every next action and rejected approach it was sent."""
    text = "\n".join(_strings(body))
    found = re.findall(r"next allowed action: ([^\n]*)", text)
    rules = [m.split(" because: ")[0] for m in re.findall(r"rejected: ([^\n]*)", text)]
    if not found and not rules:
        return Reply(text="I do not know: nothing in my context says.")
    return Reply(text="1. " + " | ".join(found) + "\n2. " + "\n".join(rules))


class Script:
    """reader for the canary's questions; "ok" for any other prompt, and a summary with no state in it for a
    harness's compaction request: what the model quotes can only come from what its request holds now."""

    def __init__(self, is_compaction: Any = None, summary: str = "We worked on the parser.") -> None:
        self.is_compaction = is_compaction
        self.summary = summary

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.is_compaction is not None and self.is_compaction(body):
            return Reply(text=self.summary)
        if "off limits in this project" not in json.dumps(body):
            return Reply(text="ok")  # not the canary's questions: nothing of the state is said back
        return reader(body)


def _prepare(h: Harness) -> str:
    assert rehydrate("checkpoint", "--done", "tokenizer", "--next", NEXT, cwd=h.repo).code == 0
    res = rehydrate("canary", "plant", "--json", cwd=h.repo)
    assert res.code == 0, res.err
    return str(json.loads(res.out)["token"])


def _canary(h: Harness, agent: list[str]) -> tuple[int, str, dict[str, Any]]:
    res = rehydrate(
        "canary", "run", "--timeout", "240", "--agent", shlex.join(agent), cwd=h.repo, env=h.env, timeout=300
    )
    runs = [r for r in h.ops("canary") if r["data"]["event"] == "run"]
    return res.code, res.out + res.err, runs[-1]["data"]


def _uninstall(h: Harness, name: str) -> None:
    r = rehydrate("install", name, "--uninstall", cwd=h.repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err


# ---------------------------------------------------------------------------------------------------- Claude Code

CLAUDE_MODEL = "claude-sonnet-4-5"


def _claude_compaction(body: dict[str, Any]) -> bool:
    last = json.dumps((body.get("messages") or [{}])[-1].get("content"), ensure_ascii=False)
    return "Respond with TEXT ONLY" in last and "<summary>" in last


@pytest.fixture
def claude(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("claude", repo, tmp_path)
    assert rehydrate("install", "claude", cwd=repo, env={"PATH": h.env["PATH"]}).code == 0
    h.env.update(ANTHROPIC_API_KEY="dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1")
    h.env["DISABLE_AUTOUPDATER"] = "1"
    return h


def _claude(h: Harness, *extra: str) -> list[str]:
    return [str(h.exe), "-p", "--model", CLAUDE_MODEL, *extra]


def test_claude_code_passes_with_the_hooks_and_fails_without(claude: Harness, tmp_path: Path) -> None:
    token = _prepare(claude)
    script = Script(_claude_compaction, "<summary>We worked on the parser.</summary>")
    with MockModel("anthropic", script, tmp_path / "requests.jsonl") as mock:
        claude.env["ANTHROPIC_BASE_URL"] = mock.url
        code, said, run = _canary(claude, _claude(claude))
        assert code == 0 and run["passed"], said
        assert any(token in r.text and NEXT in r.text for r in mock.requests)  # what the model was sent
        _uninstall(claude, "claude")
        code, said, run = _canary(claude, _claude(claude))
    assert code == 1 and not run["passed"] and "canary: FAILED" in said
    assert any(token in m for m in run["missing"])


def test_claude_code_passes_after_a_compaction(claude: Harness, tmp_path: Path) -> None:
    _prepare(claude)
    script = Script(_claude_compaction, "<summary>We worked on the parser.</summary>")
    with MockModel("anthropic", script, tmp_path / "requests.jsonl") as mock:
        claude.env["ANTHROPIC_BASE_URL"] = mock.url
        p = claude.run("-p", "hello", "--output-format", "json", "--model", CLAUDE_MODEL)
        assert p.returncode == 0, p.stderr[-2000:]
        session = json.loads(p.stdout)["session_id"]
        p = claude.run("-p", "/compact", "--resume", session, "--output-format", "json", "--model", CLAUDE_MODEL)
        assert p.returncode == 0, p.stderr[-2000:]
        assert any(_claude_compaction(r.body) for r in mock.requests), "no compaction happened"
        assert claude.ops("compaction"), "the compaction was not recorded"
        code, said, run = _canary(claude, _claude(claude, "--resume", session))
    assert code == 0 and run["passed"], said


# ---------------------------------------------------------------------------------------------------- Codex CLI

CODEX_MODEL = "gpt-5.5"


@pytest.fixture
def codex(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("codex", repo, tmp_path)
    assert rehydrate("install", "codex", cwd=repo, env={"PATH": h.env["PATH"]}).code == 0
    h.env["MOCK_API_KEY"] = "dummy"
    return h


def test_codex_passes_with_the_hooks_and_fails_without(codex: Harness, tmp_path: Path) -> None:
    token = _prepare(codex)
    agent = [str(codex.exe), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check"]
    agent.append("--dangerously-bypass-approvals-and-sandbox")
    with MockModel("openai", Script(), tmp_path / "requests.jsonl") as mock:
        codex_config(codex, mock.url, CODEX_MODEL)
        code, said, run = _canary(codex, agent)
        assert code == 0 and run["passed"], said
        assert any(token in r.text for r in mock.requests)
        _uninstall(codex, "codex")
        code, said, run = _canary(codex, agent)
    assert code == 1 and not run["passed"], said


# ---------------------------------------------------------------------------------------------------- Gemini CLI

GEMINI_MODEL = "gemini-2.5-flash"


@pytest.fixture
def gemini(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("gemini", repo, tmp_path)
    assert rehydrate("install", "gemini", cwd=repo, env={"PATH": h.env["PATH"]}).code == 0
    gemini_settings(h)
    return h


def test_gemini_passes_with_the_hooks_and_fails_without(gemini: Harness, tmp_path: Path) -> None:
    token = _prepare(gemini)
    agent = [str(gemini.exe), "--yolo", "-m", GEMINI_MODEL, "-o", "text", "-p"]
    with MockModel("gemini", Script(), tmp_path / "requests.jsonl") as mock:
        gemini.env["GOOGLE_GEMINI_BASE_URL"] = mock.url
        code, said, run = _canary(gemini, agent)
        assert code == 0 and run["passed"], said
        assert any(token in r.text for r in mock.requests)
        _uninstall(gemini, "gemini")
        code, said, run = _canary(gemini, agent)
    assert code == 1 and not run["passed"], said
