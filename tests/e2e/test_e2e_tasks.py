"""The live task list, through the real harnesses: the model keeps a task list with the harness's own tools (Claude
Code's TaskCreate and TaskUpdate, Codex's update_plan), the PostToolUse hook that `rehydrate install` wrote mirrors it
into state/30_tasks.md as it changes, and the list reaches the model again, verbatim, in the request right after a
real automatic compaction and in the first request of a new session.

Asserts on what the model was sent (the mock's request log) and on the state files, never on rehydrate's stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from e2e.e2e_harness import Harness
from e2e.e2e_mock import MockModel, Reply, Request
from e2e.test_e2e_capture import (
    _after_summarizer,
    _checkpoint,
    _claude_run,
    _claude_summarizer,
    _codex_run,
    _codex_summarizer,
    claude,  # noqa: F401 - the fixture
    codex,  # noqa: F401 - the fixture
)

pytestmark = pytest.mark.e2e

FIRST = "Write the binding powers TASK-3a7e"
SECOND = "Wire the calculator CLI TASK-b41c"


def _items(repo: Path) -> list[str]:
    view = repo / "state" / "30_tasks.md"
    assert view.is_file(), "the task-tool hook wrote no task list"
    return [line for line in view.read_text().splitlines() if line.startswith("- [")]


def _task_list(text: str) -> str:
    """The brief's task list section as the model got it (JSON-escaped in the request)."""
    at = text.find("## Task list\\n")
    assert at >= 0, "no task list in the request"
    return text[at : text.find("\\n## ", at + 1)]


def _receipts(repo: Path) -> list[dict[str, Any]]:
    """The delivery receipts in this worktree's journal, oldest first, each with the `resume` record it judges."""
    journal = repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"
    recs = [json.loads(line) for line in journal.read_text().splitlines()]
    by_h = {r["h"]: r for r in recs}
    return [{**r["data"], "resume": by_h.get(r["data"]["of"])} for r in recs if r["op"] == "delivery"]


def _first_request_of_run(requests: list[Request], before: int) -> str:
    assert len(requests) > before, "the run sent no request"
    return requests[before].text


WRONG = "refactor the lexer"  # not the checkpoint's next step: the restatement the state must refuse


class ClaudeTasks:
    """Two tasks made with the task tools (loaded through ToolSearch, as 2.1.332 defers them), the first set in
    progress, then an answer reporting enough tokens for the next run to compact; after the compaction, a wrong
    restatement of the next action through `rehydrate ack`."""

    def __init__(self) -> None:
        self.replies = [
            Reply(tool="ToolSearch", args={"query": "select:TaskCreate,TaskUpdate"}),
            Reply(tool="TaskCreate", args={"subject": FIRST, "description": "in calc/parser.py"}),
            Reply(tool="TaskCreate", args={"subject": SECOND, "description": "calc/cli.py"}),
            Reply(tool="TaskUpdate", args={"taskId": "1", "status": "in_progress"}),
            Reply(text="Working on the binding powers.", input_tokens=190_000),
        ]
        self.after = [
            Reply(tool="Bash", args={"command": f"rehydrate ack --next '{WRONG}'", "description": "restate"}),
            Reply(text="Restated."),
        ]
        self.compacted = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        if _claude_summarizer(body):
            self.compacted = True
            return Reply(text="<analysis>a</analysis>\n<summary>SUMMARY-E2E-tasks</summary>")
        if self.compacted and self.after:
            return self.after.pop(0)
        return self.replies.pop(0) if self.replies else Reply(text="done")


def test_claude_code_s_task_list_survives_a_real_compaction_and_a_new_session(
    claude: Harness,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    _checkpoint(claude)
    with MockModel("anthropic", ClaudeTasks(), tmp_path / "requests.jsonl") as mock:
        session = _claude_run(claude, mock, "plan the parser work")
        assert _items(claude.repo) == [f"- [in_progress] #1 {FIRST}", f"- [pending] #2 {SECOND}"]
        assert len(claude.ops("tasks")) == 3  # one record per change, each with the whole list
        _claude_run(claude, mock, "go on", "--resume", session, "--autocompact", "100000", "--allowedTools", "Bash")
        assert "rehydrate ack --next" in _after_summarizer(mock.requests, _claude_summarizer)  # asked to restate
        # the wrong restatement is named to the model at once, in the tool result of the next request
        assert "does NOT match the state" in mock.requests[-1].text
        assert "the state's next allowed action: binding powers" in mock.requests[-1].text
        after = _task_list(_after_summarizer(mock.requests, _claude_summarizer))
        assert f"> - [in_progress] #1 {FIRST}" in after and f"> - [pending] #2 {SECOND}" in after
        # the Stop hook at the end of the turn judged the post-compaction brief from the transcript Claude Code wrote
        last = _receipts(claude.repo)[-1]
        assert last["verdict"] == "delivered", last
        assert last["resume"]["data"]["brief"]["token"] in _after_summarizer(mock.requests, _claude_summarizer)
        before = len(mock.requests)
        _claude_run(claude, mock, "what is next?")  # a new session: no --resume
        fresh = _task_list(_first_request_of_run(mock.requests, before))
        assert f"> - [in_progress] #1 {FIRST}" in fresh and f"> - [pending] #2 {SECOND}" in fresh
        # and the next brief's ledger names the mismatch, without quoting the restated text
        ledger = _first_request_of_run(mock.requests, before).rsplit("## Ledger", 1)[1]
        assert "recency: degraded: the agent's restatement at" in ledger and WRONG not in ledger


class CodexPlan:
    """A plan set with update_plan, then a command reporting enough tokens to compact mid-turn; after it, a reply
    whose marked line restates the next action wrongly."""

    def __init__(self) -> None:
        plan = [{"step": FIRST, "status": "in_progress"}, {"step": SECOND, "status": "pending"}]
        self.replies = [
            Reply(tool="update_plan", args={"explanation": "parser first", "plan": plan}),
            Reply(tool="exec_command", args={"cmd": "true"}, input_tokens=900_000),
            Reply(text=f"Re-read the brief.\nrehydrate ack: next: {WRONG}; rejected:\nGoing on."),
        ]

    def __call__(self, body: dict[str, Any]) -> Reply:
        if _codex_summarizer(body):
            return Reply(text="SUMMARY-E2E-tasks")
        return self.replies.pop(0) if self.replies else Reply(text="done")


def _codex_exec(h: Harness, mock: MockModel, prompt: str) -> None:
    _codex_run(h, mock, prompt, "[tools.update_plan]", "enabled = true")  # else `codex exec` offers no plan tool


def test_codex_s_plan_survives_a_real_compaction_and_a_new_session(
    codex: Harness,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    _checkpoint(codex)
    with MockModel("openai", CodexPlan(), tmp_path / "requests.jsonl") as mock:
        _codex_exec(codex, mock, "plan the parser work")
        assert _items(codex.repo) == [f"- [in_progress] {FIRST}", f"- [pending] {SECOND}"]
        after = _task_list(_after_summarizer(mock.requests, _codex_summarizer))
        assert f"> - [in_progress] {FIRST}" in after and f"> - [pending] {SECOND}" in after
        before = len(mock.requests)
        _codex_exec(codex, mock, "what is next?")
        fresh = _task_list(_first_request_of_run(mock.requests, before))
        # no Stop hook in Codex: the new session's SessionStart judged the post-compaction brief from the rollout
        receipt = _receipts(codex.repo)[-1]
        assert receipt["verdict"] == "delivered", receipt
        assert receipt["resume"]["data"]["brief"]["token"] in _after_summarizer(mock.requests, _codex_summarizer)
        assert "reached the model whole (delivery receipt" in _first_request_of_run(mock.requests, before)
        # the marked line of the reply after the compaction, read from the rollout by the next SessionStart
        ledger = _first_request_of_run(mock.requests, before).rsplit("## Ledger", 1)[1]
        assert "recency: degraded: the agent's restatement at" in ledger and WRONG not in ledger
        assert f"> - [in_progress] {FIRST}" in fresh and f"> - [pending] {SECOND}" in fresh
