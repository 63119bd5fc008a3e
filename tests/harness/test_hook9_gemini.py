"""Issue 9 item 7: Gemini CLI's PreCompress is not a compaction.

Gemini fires PreCompress inside its compression service before it decides whether to compress: on every model
request. One `-p` run with two tool calls wrote three `compaction` records and compressed nothing, and BeforeAgent then
told the model "a context compaction just happened" on every prompt. Nothing a hook sees confirms a compression, so
PreCompress is logged as a `precompress` note: no compaction record, no notice, no brief. Real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hook_harnesses import event, hook

from rehydrate.store.state import State

SESSION = "8e4f2a1c-6b9d-4c3e-a7f0-5d2b8c1e9a46"  # the fixtures' session


def ops(state: State) -> list[str]:
    return [json.loads(x)["op"] for x in Path(state.wal_path).read_text().splitlines()]


@pytest.mark.parametrize("trigger", ["auto", "manual"])
def test_pre_compress_is_a_note_not_a_compaction(repo: Path, state: State, trigger: str) -> None:
    before = ops(state)
    assert hook("gemini", event(repo, "gemini", f"PreCompress-{trigger}"), repo)[:2] == (0, None)
    after = ops(state)
    assert after[: len(before)] == before and after[len(before) :] == ["precompress"]
    note = json.loads(Path(state.wal_path).read_text().splitlines()[-1])["data"]
    assert note == {"trigger": trigger, "session_id": SESSION, "transcript_path": note["transcript_path"]}


def test_a_run_with_tool_calls_gets_no_compaction_and_no_notice(repo: Path, state: State) -> None:
    """What one `gemini -p` run with two tool calls fires: PreCompress before each of its three model requests."""
    assert hook("gemini", event(repo, "gemini", "SessionStart-startup"), repo)[1] is not None
    for _ in range(3):
        assert hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)[:2] == (0, None)
        assert hook("gemini", event(repo, "gemini", "PreCompress-auto"), repo)[:2] == (0, None)
    assert hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)[:2] == (0, None)
    assert "compaction" not in ops(state) and ops(state).count("precompress") == 3
    assert state.verify().ok


def test_before_agent_gives_the_notice_after_a_real_compaction_of_this_session(repo: Path, state: State) -> None:
    state.record("compaction", {"phase": "post", "session_id": "another session"})
    assert hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)[:2] == (0, None)  # not this conversation's
    state.record("compaction", {"phase": "post", "session_id": SESSION})  # confirmed (by whatever can confirm it)
    state.record("precompress", {"trigger": "auto", "session_id": SESSION})
    code, out, err = hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)
    assert code == 0 and out is not None, err
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("A context compaction just happened")
    assert hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)[:2] == (0, None)  # once
