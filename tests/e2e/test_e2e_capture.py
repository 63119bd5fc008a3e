"""The capture at a compaction, through the real harnesses: Claude Code and Codex CLI, each
driven by a mock model through work after the last checkpoint (a task list, a file written, a command that fails),
then an automatic compaction. The PreCompact hook reads the transcript's tail into the `compaction` record, and the
request the model gets after the compaction holds the brief's "Just before the compaction" section and a ledger
whose next safe action is not the checkpoint's stale one.

Asserts on what the model was sent (the mock's request log) and on the WAL, never on rehydrate's stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from e2e.e2e_harness import Harness, codex_exec, make_harness
from e2e.e2e_mock import MockModel, Reply, Request

pytestmark = pytest.mark.e2e

SECTION = "## Just before the compaction"
STALE = "binding powers"
PROMPT = "now do the binding powers in calc/parser.py PROMPT-5e1b"
TASK = "Write the binding powers TASK-9c0d"


def _checkpoint(h: Harness) -> None:
    r = rehydrate("checkpoint", "--done", "the tokenizer", "--next", STALE, cwd=h.repo)
    assert r.code == 0, r.err


def _ledger(text: str) -> str:
    """The brief's ledger section, as the model got it (JSON-escaped in the request)."""
    at = text.rfind("## Ledger")
    assert at >= 0, "no ledger in the request"
    return text[at:]


def _quoted(text: str, label: str) -> str:
    """The one line a quote of the ledger holds (`[TOKEN quote: Qn, LABEL]` then `> LINE`), as the model got it: the
    quotes stand in their own section, before the ledger that names them."""
    at = text.find(label + "]\\n> ")
    assert 0 <= at < text.rfind("## Ledger"), f"no quote {label!r} before the ledger"
    return text[at + len(label) + 5 :].split("\\n", 1)[0]


def _capture(h: Harness) -> dict[str, Any]:
    records = h.ops("compaction")
    assert len(records) == 1, [r["data"] for r in records]
    capture = records[0]["data"].get("capture")
    assert isinstance(capture, dict) and capture.get("error") is None, capture
    return capture


# ------------------------------------------------------------------------------------------------------ Claude Code


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


class ClaudeScript:
    """Claude Code's model: the task list through whichever tool the CLI offers (TodoWrite, or TaskCreate loaded
    through ToolSearch as 2.1.332 defers it), a file written, a command that fails, then an answer reporting enough
    tokens for the next run to compact. The summarizer's request gets a summary."""

    SUMMARY = "<analysis>a</analysis>\n<summary>SUMMARY-E2E-capture</summary>"

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.replies: list[Reply] | None = None

    def __call__(self, body: dict[str, Any]) -> Reply:
        if _claude_summarizer(body):
            return Reply(text=self.SUMMARY)
        if self.replies is None:
            self.replies = self._plan(body)
        return self.replies.pop(0) if self.replies else Reply(text="done")

    def _plan(self, body: dict[str, Any]) -> list[Reply]:
        tools = {t.get("name") for t in body.get("tools") or []}
        if "TodoWrite" in tools:
            todo = [
                Reply(
                    tool="TodoWrite",
                    args={"todos": [{"content": TASK, "status": "in_progress", "activeForm": "Writing"}]},
                )
            ]
        else:
            todo = [
                Reply(tool="ToolSearch", args={"query": "select:TaskCreate,TaskUpdate"}),
                Reply(tool="TaskCreate", args={"subject": TASK, "description": "in calc/parser.py"}),
                Reply(tool="TaskUpdate", args={"taskId": "1", "status": "in_progress"}),
            ]
        write = Reply(tool="Write", args={"file_path": str(self.repo / "calc" / "parser.py"), "content": "BP = {}\n"})
        fail = Reply(tool="Bash", args={"command": "exit 3", "description": "run the parser tests"})
        return [*todo, write, fail, Reply(text="The parser tests fail.", input_tokens=190_000)]


def _claude_summarizer(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    last = json.dumps(messages[-1].get("content"), ensure_ascii=False)
    return "Respond with TEXT ONLY" in last and "<summary>" in last


def _claude_run(h: Harness, mock: MockModel, prompt: str, *extra: str) -> str:
    h.env["ANTHROPIC_BASE_URL"] = mock.url
    p = h.run("-p", prompt, "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-5", *extra)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    return str(json.loads(p.stdout.strip().splitlines()[-1])["session_id"])


def _after_summarizer(requests: list[Request], is_summarizer: Any) -> str:
    at = [n for n, r in enumerate(requests) if is_summarizer(r.body)]
    assert len(at) == 1, "the mock saw no summarizer's request, or more than one"
    assert at[0] + 1 < len(requests), "no request after the compaction"
    return requests[at[0] + 1].text


def test_claude_code_work_after_the_checkpoint_is_captured_at_compaction_and_shown_after_it(
    claude: Harness, tmp_path: Path
) -> None:
    _checkpoint(claude)
    with MockModel("anthropic", ClaudeScript(claude.repo), tmp_path / "requests.jsonl") as mock:
        session = _claude_run(claude, mock, PROMPT, "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
        assert claude.ops("compaction") == []
        _claude_run(claude, mock, "go on", "--resume", session, "--autocompact", "100000")
    capture = _capture(claude)
    assert [item[0] for item in capture["todos"]["items"]] == [TASK]
    assert capture["todos"]["tool"] in ("task store", "TodoWrite")  # 2.1.332 keeps its task list on disk
    assert capture["edited"]["files"] == ["calc/parser.py"]
    assert [f["command"] for f in capture["failed"]] == ["exit 3"]
    assert any(PROMPT in u["text"] for u in capture["user"])
    after = _after_summarizer(mock.requests, _claude_summarizer)
    assert SECTION in after
    assert TASK in after and "calc/parser.py" in after and PROMPT in after and "exit 3" in after
    ledger = _ledger(after)
    assert "recency: degraded" in ledger and "files edited: Q" in ledger and "calc/parser.py" not in ledger
    assert _quoted(after, "recency: files edited (claude transcript)") == "calc/parser.py"  # fenced, before it
    action = ledger[ledger.find("next safe action:") :]
    assert "was edited in Q" in action.split("\\n", 1)[0]  # not the checkpoint's bare "binding powers"


# -------------------------------------------------------------------------------------------------------- Codex CLI


@pytest.fixture
def codex(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("codex", repo, tmp_path)
    r = rehydrate("install", "codex", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    h.env["MOCK_API_KEY"] = "dummy"
    return h


def _codex_summarizer(body: dict[str, Any]) -> bool:
    items = body.get("input") or [{}]
    return "CONTEXT CHECKPOINT COMPACTION" in json.dumps(items[-1])


class CodexScript:
    """Codex's model: a file added by apply_patch, a command that fails reporting enough tokens to compact mid-turn.
    Codex 0.171's exec offers no plan tool (update_plan is answered "unsupported call"), so no task list here."""

    def __init__(self) -> None:
        patch = "*** Begin Patch\n*** Add File: calc/parser.py\n+BP = {}\n*** End Patch\n"
        self.replies = [
            Reply(tool="apply_patch", custom=True, args={"input": patch}),
            Reply(tool="exec_command", args={"cmd": "exit 3"}, input_tokens=900_000),
            Reply(text="The parser tests fail."),
        ]

    def __call__(self, body: dict[str, Any]) -> Reply:
        if _codex_summarizer(body):
            return Reply(text="SUMMARY-E2E-capture")
        return self.replies.pop(0) if self.replies else Reply(text="done")


def _codex_run(h: Harness, mock: MockModel, prompt: str, *config: str) -> None:
    codex_exec(h, mock.url, "gpt-5.5", prompt, "model_auto_compact_token_limit = 5000", *config)


def test_codex_work_after_the_checkpoint_is_captured_at_compaction_and_shown_after_it(
    codex: Harness, tmp_path: Path
) -> None:
    _checkpoint(codex)
    with MockModel("openai", CodexScript(), tmp_path / "requests.jsonl") as mock:
        _codex_run(codex, mock, PROMPT)
    capture = _capture(codex)
    assert capture["edited"]["files"] == ["calc/parser.py"]
    assert [f["command"] for f in capture["failed"]] == ["exit 3"]
    assert any(PROMPT in u["text"] for u in capture["user"])
    after = _after_summarizer(mock.requests, _codex_summarizer)
    assert SECTION in after and "calc/parser.py" in after and PROMPT in after and "exit 3" in after
    ledger = _ledger(after)
    assert "recency: degraded" in ledger and "files edited: Q" in ledger and "calc/parser.py" not in ledger
    assert _quoted(after, "recency: files edited (codex transcript)") == "calc/parser.py"
