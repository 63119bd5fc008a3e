"""Gemini CLI's hook (harness/gemini.py): its write_file guarded, its BeforeAgent brief after a compaction, once.

Issue 9 item 7: Gemini CLI's PreCompress is not a compaction.

Gemini fires PreCompress inside its compression service before it decides whether to compress: on every model
request. One `-p` run with two tool calls wrote three `compaction` records and compressed nothing, and BeforeAgent then
told the model "a context compaction just happened" on every prompt. Nothing a hook sees confirms a compression, so
PreCompress is logged as a `precompress` note: no compaction record, no notice, no brief. Real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import hook_answer, hook_event, says_nothing
from rehydrate.store import since
from rehydrate.store.state import State

SESSION = "8e4f2a1c-6b9d-4c3e-a7f0-5d2b8c1e9a46"  # the fixtures' session


def gemini(repo: Path, name: str) -> tuple[int, dict[str, Any] | None, str]:
    """`rehydrate hook gemini` in repo, given the documented input `name` (tests/fixtures/hooks/gemini/)."""
    return hook_answer("gemini", hook_event(repo, "gemini", name), repo)


def ops(state: State) -> list[str]:
    return [json.loads(x)["op"] for x in Path(state.wal_path).read_text().splitlines()]


def noted(repo: Path) -> list[dict[str, Any]]:
    """The worktree journal's records (store/journal.py): where PreCompress's notes go, never the committed log."""
    journal = repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"
    return [json.loads(x) for x in journal.read_text().splitlines()] if journal.exists() else []


@pytest.mark.parametrize("trigger", ["auto", "manual"])
def test_pre_compress_is_a_note_not_a_compaction(repo: Path, state: State, trigger: str) -> None:
    before = Path(state.wal_path).read_bytes()
    assert gemini(repo, f"PreCompress-{trigger}")[:2] == (0, None)
    assert Path(state.wal_path).read_bytes() == before  # nothing in the committed log for a model request
    note = noted(repo)[-1]
    assert note["op"] == "precompress"
    note = note["data"]
    assert note == {
        "trigger": trigger,
        "session_id": SESSION,
        "transcript_path": note["transcript_path"],
        "harness": "gemini",  # the transcript's reference, for recency at the next brief or in `recover`
        "host": since.host(),
        "transcript_size": None,
    }


def test_a_run_with_tool_calls_gets_no_compaction_and_no_notice(repo: Path, state: State) -> None:
    """What one `gemini -p` run with two tool calls fires: PreCompress before each of its three model requests."""
    assert gemini(repo, "SessionStart-startup")[1] is not None
    for _ in range(3):
        assert gemini(repo, "BeforeAgent")[:2] == (0, None)
        assert gemini(repo, "PreCompress-auto")[:2] == (0, None)
    assert gemini(repo, "BeforeAgent")[:2] == (0, None)
    assert "compaction" not in ops(state) and "precompress" not in ops(state)
    assert [r["op"] for r in noted(repo)].count("precompress") == 3
    assert state.verify().ok


def test_before_agent_gives_the_notice_after_a_real_compaction_of_this_session(repo: Path, state: State) -> None:
    state.record("compaction", {"phase": "post", "session_id": "another session"})
    assert gemini(repo, "BeforeAgent")[:2] == (0, None)  # not this conversation's
    state.record("compaction", {"phase": "post", "session_id": SESSION})  # confirmed (by whatever can confirm it)
    state.record("precompress", {"trigger": "auto", "session_id": SESSION})
    code, out, err = gemini(repo, "BeforeAgent")
    assert code == 0 and out is not None, err
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("A context compaction just happened")
    assert gemini(repo, "BeforeAgent")[:2] == (0, None)  # once


def test_gemini_compression_then_before_agent_injects_once(repo: Path, state: State) -> None:
    code, out, _ = gemini(repo, "SessionStart-startup")
    assert code == 0 and out is not None and out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert gemini(repo, "BeforeAgent")[1] is None  # no compression yet
    assert gemini(repo, "PreCompress-auto")[:2] == (0, None)
    assert noted(repo)[-1]["op"] == "precompress"  # Gemini fires it on every request: not a compaction
    assert gemini(repo, "BeforeAgent")[1] is None
    session = json.loads(hook_event(repo, "gemini", "BeforeAgent"))["session_id"]
    state.record("compaction", {"phase": "post", "session_id": session})  # a compaction that is confirmed
    code, out, _ = gemini(repo, "BeforeAgent")
    assert out is not None and out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("A context compaction just happened")
    assert gemini(repo, "BeforeAgent")[1] is None  # once
    assert state.verify().ok


def test_gemini_write_on_a_guarded_path(repo: Path, state: State) -> None:
    state.reject("Patch src/auth by hand", because="the auth code is generated", guard="src/auth*")
    code, out, _ = gemini(repo, "BeforeTool-write_file")
    assert code == 0 and out is not None and "Patch src/auth by hand" in out["systemMessage"]
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    out = gemini(repo, "BeforeTool-write_file")[1]
    assert out is not None and out["decision"] == "deny" and "generated" in out["reason"]


def test_only_gemini_cli_s_own_tools_and_events_are_answered(repo: Path, state: State) -> None:
    """Each harness takes only its own tools and events: a tool name or an event of Claude Code or Codex sent to
    `rehydrate hook gemini` gets no answer and writes no record (the installed matchers never send them)."""
    state.record("compaction", {"phase": "post", "session_id": SESSION})
    schema = {"file_path": str(repo / "db" / "schema.sql"), "content": "DROP TABLE users;\n"}
    own = hook_event(repo, "gemini", "BeforeTool-write_file", tool_input=schema)
    code, answer, _ = hook_answer("gemini", own, repo)
    assert code == 0 and answer is not None  # its own tool, the same input: guarded
    patch = {"command": "*** Begin Patch\n*** Update File: db/schema.sql\n@@\n+DROP TABLE users;\n*** End Patch\n"}
    for tool, tool_input in (
        ("Edit", schema),
        ("Write", schema),
        ("NotebookEdit", {"notebook_path": schema["file_path"]}),
        ("Bash", {"command": "rm db/schema.sql"}),
        ("apply_patch", patch),
    ):
        event = hook_event(repo, "gemini", "BeforeTool-write_file", tool_name=tool, tool_input=tool_input)
        assert says_nothing("gemini", event, repo), tool
    for name in ("PreToolUse", "PreCompact", "PostCompact", "Stop"):
        event = hook_event(repo, "gemini", "BeforeTool-write_file", hook_event_name=name, tool_input=schema)
        assert says_nothing("gemini", event, repo), name
