"""aftercapture (checks/aftercapture.py): at the session start after a compaction, recency takes the compaction's
capture for the transcript up to where it read it and reads only what came after; a capture that cannot stand for
the file (cut, showing no change, of another checkpoint or host, or in recover) is not taken. The state, the
transcripts and the helpers are test_recency.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.checks.test_recency import ckpt, only

from rehydrate.checks import DEGRADED, HookEvent
from rehydrate.store.state import State
from rehydrate.store.wal import since
from scenarios.transcripts import Claude, stamp


def _captured(state: State, path: Path, host: str | None = None, **over: Any) -> dict[str, Any]:
    """A compaction record of this host (or host) naming path, its capture (of the last checkpoint) overridden."""
    seq = ckpt(state)["seq"]
    size = path.stat().st_size
    cap: dict[str, Any] = {
        "v": 1,
        "harness": "claude",
        "since": {"seq": seq, "ts": None},
        "read": {"from": 0, "to": size, "cut": False, "lines": 3, "bad": 0},
        "tool_calls": 4,
        "user_turns": 1,
        "todos": None,
        "user": [{"line": 1, "ts": None, "text": "captured instruction"}],
        "edited": {"files": ["from/capture.py"], "more": 0},
        "failed": [],
        "assistant": None,
        "error": None,
    }
    cap.update(over)
    data = {"phase": "pre", **since.ref_fields("claude", str(path)), "capture": cap}
    if host is not None:
        data["host"] = host
    state.record("compaction", data)
    return cap


def test_the_session_start_after_a_compaction_takes_its_capture_and_reads_only_what_came_after(
    repo: Path, state: State, isolated_home: Path
) -> None:
    """The hook event names the transcript this compaction's capture read: its facts stand for what it read (the
    file is not parsed again up to read.to), and only the lines written after it are read."""
    t = Claude(isolated_home, repo, start=stamp(ckpt(state)["ts"], 5))
    t.user("now do binding powers")
    t.write(str(repo / "calc" / "parser.py"))  # what the file holds; the capture says otherwise: it is believed
    _captured(state, t.path)
    event = HookEvent("claude", t.session, str(t.path), "compact")
    f = only(state, isolated_home, event=event)
    assert f.status == DEGRADED and 'files edited: "from/capture.py";' in f.said() and "parser.py" not in f.said()
    assert '"captured instruction"' in f.said() and "4 tool calls" in f.said()
    t.write(str(repo / "calc" / "after.py"))  # after the capture: read
    f = only(state, isolated_home, event=event)
    assert 'files edited: "from/capture.py, calc/after.py";' in f.said() and "5 tool calls" in f.said()


@pytest.mark.parametrize(
    "change",
    [
        {"read": {"from": 0, "to": 10, "cut": True, "lines": 1, "bad": 0}},  # it did not reach the checkpoint
        {"edited": {"files": [], "more": 0}},  # no change it can show: read-only calls, perhaps
        {"since": {"seq": 1, "ts": None}},  # read back to another checkpoint
        {"host": "elsewhere"},  # recorded on another host
        {"scope": "recover"},  # recover reads the file itself
    ],
)
def test_a_capture_that_cannot_stand_for_the_file_is_not_taken(
    repo: Path, state: State, isolated_home: Path, change: dict[str, Any]
) -> None:
    t = Claude(isolated_home, repo, start=stamp(ckpt(state)["ts"], 5))
    t.user("now do binding powers")
    t.write(str(repo / "calc" / "parser.py"))
    scope = change.pop("scope", "hook")
    _captured(state, t.path, **change)
    f = only(state, isolated_home, event=HookEvent("claude", t.session, str(t.path), "compact"), scope=scope)
    assert "calc/parser.py" in f.said() and "from/capture.py" not in f.said(), f.said()
