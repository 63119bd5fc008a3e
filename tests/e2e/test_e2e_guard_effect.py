"""The guard's check by effect in the real CLIs (pinned), driven by the mock model servers: a shell call writes a
guarded file in a way no check before the call can see (a script that writes it, a path built at run time), and the
model's next request must name the rejected approach, where the harness puts an after-tool hook's words (Claude
Code: inside the tool's result; Codex: a developer message before the call's output; Gemini CLI: inside the function
response; Copilot: appended to the tool message); the change is in this worktree's guard log; with `guard_restore`
the file is put back. A write after the last call (made by the mock while the agent waits for its answer) is named
at Stop (Claude Code) and agentStop (Copilot), which keep the agent going once.

Asserts on what the model was sent (the mock's request log), on the guard log and on the files, never on rehydrate's
stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import git, rehydrate
from e2e.e2e_harness import (
    SCHEMA,
    Harness,
    codex_exec,
    copilot_env,
    copilot_run,
    gemini_settings,
    make_harness,
)
from e2e.e2e_mock import MockModel, Reply, Request, Turns

pytestmark = pytest.mark.e2e

REJECTED = "Edit db/schema.sql directly"  # init_project's rejected approach guarding db/*
CHANGED = "changed a file that a rejected approach guards"
WRITTEN = "drop table t;\n"
# A script the shell call runs: the command names no guarded file, so the check before the call lets it through.
GEN = f"with open('db/schema.sql', 'w') as f:\n    f.write({WRITTEN!r})\n"
COMMAND = "python3 gen.py"
# A path built at run time: the shell expands it, the check before the call cannot.
BUILT = f"F=db/schema.sql; printf %s {WRITTEN.strip()!r} > $F; echo >> $F"
CASES = [("deny", COMMAND), (None, COMMAND), ("deny", BUILT)]  # (the guard's mode, the shell call)
CASE_IDS = ["deny-script", "default-script", "deny-built-path"]


def _project(h: Harness, mode: str | None, restore: bool = False) -> dict[str, Any]:
    """gen.py committed, the guard's mode and restore set; the rejected approach's record."""
    (h.repo / "gen.py").write_text(GEN)
    git(h.repo, "add", "gen.py")
    git(h.repo, "commit", "-qm", "gen")
    config: dict[str, Any] = {}
    if mode:
        config["guard"] = mode
    if restore:
        config["guard_restore"] = True
    if config:
        h.config(**config)
    return next(r["data"] for r in h.ops("reject") if r["data"]["text"] == REJECTED)


class WritesLater(Turns):
    """The model's script, with a write of the guarded file made by the mock itself when the request numbered `at`
    (from 0) arrives: after the call before it and its after-tool hook, before the agent stops. What a process the
    agent left running could do; only the check at Stop can see it."""

    def __init__(self, path: Path, at: int, *replies: Reply) -> None:
        super().__init__(*replies)
        self.path = path
        self.at = at
        self.seen = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.seen == self.at:
            self.path.write_text(WRITTEN)
        self.seen += 1
        return super().__call__(body)


def _log(h: Harness) -> list[dict[str, Any]]:
    path = h.repo / ".git" / "rehydrate" / "state" / "guard" / "changes.jsonl"
    assert path.exists(), f"no guard log at {path}"
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _told(before: Request, after: Request, rejected: dict[str, Any], where: str) -> None:
    """The request after the call names the rejected approach and the file, in `where` (the part of the request
    the harness put it in, as text); the request before it did not."""
    assert CHANGED not in before.text
    assert CHANGED in after.text, after.text[-3000:]
    assert CHANGED in where and REJECTED in where and rejected["id"] in where and "db/schema.sql was changed" in where


def _logged(h: Harness, rejected: dict[str, Any], restored: bool) -> None:
    log = _log(h)
    assert len(log) == 1, log
    entry = log[0]
    assert entry["path"] == str(h.repo / "db" / "schema.sql") and entry["how"] == "changed"
    assert entry["restored"] is restored
    assert any(REJECTED in line and rejected["id"] in line for line in entry["rejected"])


# ------------------------------------------------------------------------------------------------ Claude Code

CLAUDE_MODEL = "claude-sonnet-4-5"


@pytest.fixture
def claude(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("claude", repo, tmp_path)
    r = rehydrate("install", "claude", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    h.env.update(
        ANTHROPIC_API_KEY="dummy",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
    )
    return h


def _claude(h: Harness, tmp_path: Path, script: Turns) -> list[Request]:
    with MockModel("anthropic", script, tmp_path / "requests.jsonl") as mock:
        h.env["ANTHROPIC_BASE_URL"] = mock.url
        p = h.run("-p", "make the schema", "--output-format", "stream-json", "--verbose", "--model", CLAUDE_MODEL,
                  "--allowedTools", "Bash")  # fmt: skip
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    return mock.requests


def _claude_result(req: Request) -> str:
    """The tool's result in the request (Claude Code puts a PostToolUse hook's context inside it)."""
    content = req.body["messages"][-1]["content"]
    results = [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
    assert len(results) == 1, content
    return json.dumps(results[0]["content"], ensure_ascii=False)


def _claude_bash(command: str) -> Reply:
    return Reply(tool="Bash", args={"command": command, "description": "run it"})


@pytest.mark.parametrize(("mode", "command"), CASES, ids=CASE_IDS)
def test_claude_code_a_shell_call_writing_a_guarded_file_unseen_before_is_named_to_the_model_at_once(
    claude: Harness, tmp_path: Path, mode: str | None, command: str
) -> None:
    rejected = _project(claude, mode)
    requests = _claude(claude, tmp_path, Turns(_claude_bash(command), Reply(text="finished")))
    assert len(requests) == 2, [r.text[-300:] for r in requests[2:]]  # the call, its result: no extra turn
    _told(requests[0], requests[1], rejected, _claude_result(requests[1]))
    assert (claude.repo / "db" / "schema.sql").read_text() == WRITTEN  # detected, not prevented
    _logged(claude, rejected, restored=False)


def test_claude_code_with_guard_restore_the_file_is_put_back_and_the_model_told(
    claude: Harness, tmp_path: Path
) -> None:
    rejected = _project(claude, "deny", restore=True)
    requests = _claude(claude, tmp_path, Turns(_claude_bash(COMMAND), Reply(text="finished")))
    _told(requests[0], requests[1], rejected, _claude_result(requests[1]))
    assert "It was restored as it was before." in _claude_result(requests[1])
    assert (claude.repo / "db" / "schema.sql").read_text() == SCHEMA
    _logged(claude, rejected, restored=True)


@pytest.mark.parametrize("restore", [False, True])
def test_claude_code_a_write_after_the_last_call_is_named_at_stop_and_the_agent_kept_going_once(
    claude: Harness, tmp_path: Path, restore: bool
) -> None:
    rejected = _project(claude, None, restore=restore)
    target = claude.repo / "db" / "schema.sql"
    script = WritesLater(target, 1, _claude_bash("echo hi"), Reply(text="finished"))
    requests = _claude(claude, tmp_path, script)
    assert CHANGED not in _claude_result(requests[1])  # the call itself wrote nothing
    assert len(requests) == 3, [r.text[-300:] for r in requests[3:]]  # kept going once, not for ever
    last = json.dumps(requests[2].body["messages"][-1], ensure_ascii=False)
    _told(requests[1], requests[2], rejected, last)
    assert "this turn changed" in last
    assert target.read_text() == (SCHEMA if restore else WRITTEN)
    _logged(claude, rejected, restored=restore)


# ------------------------------------------------------------------------------------------------ Codex CLI

CODEX_MODEL = "gpt-5.5"


@pytest.fixture
def codex(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("codex", repo, tmp_path)
    r = rehydrate("install", "codex", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    h.env["MOCK_API_KEY"] = "dummy"
    return h


def _codex(h: Harness, tmp_path: Path, *replies: Reply) -> list[Request]:
    with MockModel("openai", Turns(*replies), tmp_path / "requests.jsonl") as mock:
        codex_exec(h, mock.url, CODEX_MODEL, "make the schema")
    return mock.requests


def _codex_after_call(req: Request) -> str:
    """The developer messages after the request's last tool call (Codex puts a PostToolUse hook's context in one,
    between the call and its output)."""
    items = req.body["input"]
    call = max(n for n, i in enumerate(items) if i.get("type") == "function_call")
    return json.dumps([i for i in items[call:] if i.get("role") == "developer"], ensure_ascii=False)


@pytest.mark.parametrize(("mode", "command"), CASES, ids=CASE_IDS)
def test_codex_a_shell_call_writing_a_guarded_file_unseen_before_is_named_to_the_model_at_once(
    codex: Harness, tmp_path: Path, mode: str | None, command: str
) -> None:
    rejected = _project(codex, mode)
    requests = _codex(codex, tmp_path, Reply(tool="exec_command", args={"cmd": command}))
    assert len(requests) == 2
    _told(requests[0], requests[1], rejected, _codex_after_call(requests[1]))
    assert (codex.repo / "db" / "schema.sql").read_text() == WRITTEN
    _logged(codex, rejected, restored=False)


def test_codex_with_guard_restore_the_file_is_put_back_and_the_model_told(codex: Harness, tmp_path: Path) -> None:
    rejected = _project(codex, "deny", restore=True)
    requests = _codex(codex, tmp_path, Reply(tool="exec_command", args={"cmd": COMMAND}))
    _told(requests[0], requests[1], rejected, _codex_after_call(requests[1]))
    assert "It was restored as it was before." in _codex_after_call(requests[1])
    assert (codex.repo / "db" / "schema.sql").read_text() == SCHEMA
    _logged(codex, rejected, restored=True)


# ------------------------------------------------------------------------------------------------ Gemini CLI

GEMINI_MODEL = "gemini-2.5-flash"


@pytest.fixture
def gemini(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("gemini", repo, tmp_path)
    r = rehydrate("install", "gemini", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    gemini_settings(h)
    return h


def _gemini(h: Harness, tmp_path: Path, *replies: Reply) -> tuple[Request, Request]:
    """The request that got the call and the one that carries its result."""
    with MockModel("gemini", Turns(*replies), tmp_path / "requests.jsonl") as mock:
        h.env["GOOGLE_GEMINI_BASE_URL"] = mock.url
        p = h.run("-p", "make the schema", "--yolo", "-m", GEMINI_MODEL, "-o", "json")
        assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    answered = [n for n, r in enumerate(mock.requests) if _gemini_responses(r)]
    assert len(answered) == 1, [r.path for r in mock.requests]
    return mock.requests[answered[0] - 1], mock.requests[answered[0]]


def _gemini_responses(req: Request) -> str:
    """The function responses of the request's last content (Gemini CLI puts an AfterTool hook's context inside
    the tool's output)."""
    parts = (req.body.get("contents") or [{}])[-1].get("parts") or []
    found = [p["functionResponse"] for p in parts if "functionResponse" in p]
    return json.dumps(found, ensure_ascii=False) if found else ""


@pytest.mark.parametrize("mode", ["deny", None])
def test_gemini_cli_a_shell_call_writing_a_guarded_file_unseen_before_is_named_to_the_model_at_once(
    gemini: Harness, tmp_path: Path, mode: str | None
) -> None:
    rejected = _project(gemini, mode)
    before, after = _gemini(gemini, tmp_path, Reply(tool="run_shell_command", args={"command": COMMAND}))
    _told(before, after, rejected, _gemini_responses(after))
    assert (gemini.repo / "db" / "schema.sql").read_text() == WRITTEN
    _logged(gemini, rejected, restored=False)


def test_gemini_cli_with_guard_restore_the_file_is_put_back_and_the_model_told(gemini: Harness, tmp_path: Path) -> None:
    rejected = _project(gemini, "deny", restore=True)
    before, after = _gemini(gemini, tmp_path, Reply(tool="run_shell_command", args={"command": COMMAND}))
    _told(before, after, rejected, _gemini_responses(after))
    assert "It was restored as it was before." in _gemini_responses(after)
    assert (gemini.repo / "db" / "schema.sql").read_text() == SCHEMA
    _logged(gemini, rejected, restored=True)


# ------------------------------------------------------------------------------------------------ Copilot CLI


@pytest.fixture
def copilot(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("copilot", repo, tmp_path)
    r = rehydrate("install", "copilot", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    return h


def _copilot(h: Harness, tmp_path: Path, script: Turns) -> list[Request]:
    with MockModel("chat", script, tmp_path / "requests.jsonl") as mock:
        copilot_env(h, mock.url)
        copilot_run(h, "make the schema")
    return mock.requests


def _copilot_results(req: Request) -> str:
    """The tool messages of the request (Copilot appends a postToolUse hook's context to the tool's result)."""
    return json.dumps([m.get("content") for m in req.body["messages"] if m.get("role") == "tool"], ensure_ascii=False)


def _copilot_bash(command: str) -> Reply:
    return Reply(tool="bash", args={"command": command, "description": "run it"})


@pytest.mark.parametrize("mode", ["deny", None])
def test_copilot_cli_a_shell_call_writing_a_guarded_file_unseen_before_is_named_to_the_model_at_once(
    copilot: Harness, tmp_path: Path, mode: str | None
) -> None:
    rejected = _project(copilot, mode)
    requests = _copilot(copilot, tmp_path, Turns(_copilot_bash(COMMAND)))
    assert len(requests) == 2
    _told(requests[0], requests[1], rejected, _copilot_results(requests[1]))
    assert (copilot.repo / "db" / "schema.sql").read_text() == WRITTEN
    _logged(copilot, rejected, restored=False)


def test_copilot_cli_with_guard_restore_the_file_is_put_back_and_the_model_told(
    copilot: Harness, tmp_path: Path
) -> None:
    rejected = _project(copilot, "deny", restore=True)
    requests = _copilot(copilot, tmp_path, Turns(_copilot_bash(COMMAND)))
    _told(requests[0], requests[1], rejected, _copilot_results(requests[1]))
    assert "It was restored as it was before." in _copilot_results(requests[1])
    assert (copilot.repo / "db" / "schema.sql").read_text() == SCHEMA
    _logged(copilot, rejected, restored=True)


@pytest.mark.parametrize("restore", [False, True])
def test_copilot_cli_a_write_after_the_last_call_is_named_at_agent_stop_and_the_agent_kept_going_once(
    copilot: Harness, tmp_path: Path, restore: bool
) -> None:
    rejected = _project(copilot, None, restore=restore)
    target = copilot.repo / "db" / "schema.sql"
    requests = _copilot(copilot, tmp_path, WritesLater(target, 1, _copilot_bash("echo hi"), Reply(text="finished")))
    assert CHANGED not in _copilot_results(requests[1])  # the call itself wrote nothing
    assert len(requests) == 3, [r.text[-300:] for r in requests[3:]]  # kept going once, not for ever
    last = json.dumps(requests[2].body["messages"][-1], ensure_ascii=False)
    _told(requests[1], requests[2], rejected, last)
    assert "this turn changed" in last
    assert target.read_text() == (SCHEMA if restore else WRITTEN)
    _logged(copilot, rejected, restored=restore)
