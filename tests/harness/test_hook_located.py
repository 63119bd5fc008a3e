"""One hook call finds the state folder, reads state/config.json and builds its State at most once, whatever
handlers its event runs (harness/base.Located): counted by the calls Python makes, not by the handlers' say-so."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rehydrate.harness import hook
from rehydrate.store import config, locate
from rehydrate.store.state import State

WATCHED = {
    # the upward search for the state folder (State.open given the folder found takes it as named: no search)
    (locate.locate.__code__.co_filename, "_search"): "search",
    (config.read.__code__.co_filename, "read"): "config",
    (State.__init__.__code__.co_filename, "__init__"): "State",
}


@contextmanager
def counted() -> Iterator[Counter[str]]:
    calls: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = WATCHED.get((frame.f_code.co_filename, frame.f_code.co_name))
            if name is not None:
                calls[name] += 1

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)


EVENTS = {
    "SessionStart": {"source": "startup"},
    "PreToolUse": {
        "tool_name": "Edit",
        "tool_input": {"file_path": "src/app.py", "old_string": "a", "new_string": "b"},
    },
    "PostToolUse": {"tool_name": "Edit", "tool_input": {"file_path": "src/app.py"}, "tool_response": {}},
    "Stop": {"stop_hook_active": False},
    "PreCompact": {"trigger": "auto", "custom_instructions": ""},
}


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_a_hook_call_locates_reads_config_and_opens_state_at_most_once(repo: Path, state: State, name: str) -> None:
    (repo / "state" / "config.json").write_text(json.dumps({"stop_reminder_after": 1}))
    event = {"hook_event_name": name, "session_id": "s1", "cwd": str(repo), "transcript_path": "", **EVENTS[name]}
    with counted() as calls:
        answer = hook.run("claude", json.dumps(event).encode())
    assert answer.code == 0, answer.stderr
    assert calls["search"] == 1, calls
    # exact counts: a count of 0 where the handler does open the state would mean the counting no longer sees the
    # call; the guard and the check by effect never build a State (they read the files they need)
    assert calls["config"] == 1, calls
    assert calls["State"] == (0 if name in ("PreToolUse", "PostToolUse") else 1), calls
