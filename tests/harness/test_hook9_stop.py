"""Issue 9 item 5: Claude Code's Stop reminder adds no model turn and never loops.

Claude Code feeds a Stop hook's `hookSpecificOutput.additionalContext` to the model as a new turn, then fires Stop
again with `stop_hook_active: true`; a plain `systemMessage` is shown and adds no turn. Real subprocesses, as Claude
Code runs the hook."""

from __future__ import annotations

import json
from pathlib import Path

from test_hook_claude import _transcript, common, hook

from rehydrate.store.state import State


def test_the_reminder_is_a_plain_system_message(repo: Path, state: State, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "session.jsonl", 3, "2999-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2}')
    code, out, err = hook(common(repo, "Stop", stop_hook_active=False, transcript_path=str(transcript)), repo)
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert list(answer) == ["systemMessage"]  # no additionalContext: nothing the model gets as a new turn
    assert answer["systemMessage"].startswith("rehydrate: 3 tool calls since the last checkpoint (")
    assert "rehydrate checkpoint --done" in answer["systemMessage"]
    assert "additionalContext" not in out and "hookSpecificOutput" not in out and "decision" not in out


def test_nothing_at_all_while_a_stop_hook_keeps_the_agent_going(repo: Path, state: State, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "session.jsonl", 3, "2999-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2}')
    before = Path(state.wal_path).read_bytes()
    event = common(repo, "Stop", stop_hook_active=True, transcript_path=str(transcript))
    assert hook(event, repo) == (0, "", "")
    assert Path(state.wal_path).read_bytes() == before  # nothing logged either
    # the same call without the flag reminds: the silence above is the flag's doing
    assert json.loads(hook({**event, "stop_hook_active": False}, repo)[1])["systemMessage"]
