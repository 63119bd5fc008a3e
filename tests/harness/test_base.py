"""What the harnesses share (harness/base.py): the answer shapes Claude Code defines and Codex and Qwen Code read,
and the state folder one hook call finds from its event's cwd, its config read once for the whole call."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rehydrate.harness import base
from rehydrate.store.state import State


def test_a_decision_is_claude_code_s_permission_answer_and_warn_is_a_message_that_lets_the_call_go() -> None:
    for decision in ("deny", "ask"):
        assert base.decision("PreToolUse", decision, "guarded") == {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": "guarded",
            }
        }
    assert base.decision("PreToolUse", "warn", "guarded") == {
        "systemMessage": "guarded",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "guarded"},
    }
    context = json.loads(base.context("SessionStart", "the brief"))
    assert context == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "the brief"}}


def test_the_event_s_cwd_finds_the_state_and_its_config_is_read_once(repo: Path, state: State) -> None:
    sub = repo / "src"
    sub.mkdir()
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    here = base.Located.find({"cwd": str(sub)})
    assert here.start == str(sub) and os.path.realpath(here.root) == os.path.realpath(state.root)
    assert here.config == {"guard": "deny"} == base.config(here.root)
    Path(state.path("config.json")).write_text('{"guard": "warn"}')
    assert here.config == {"guard": "deny"}  # kept for the rest of the call
    assert here.state is here.state and "Ship the parser" in (here.state.view_text("00_goal.md") or "")


def test_a_cwd_that_is_not_a_folder_is_no_start(repo: Path, state: State) -> None:
    for event in (None, {}, {"cwd": 7}, {"cwd": str(repo / "app.py")}):
        here = base.Located.find(event)  # type: ignore[arg-type]
        assert here.start is None, event
        assert os.path.realpath(here.root) == os.path.realpath(state.root)  # found from the current folder
