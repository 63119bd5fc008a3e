"""Composing the brief (brief/compose.py): the ledger's lines in order, and what the terse ledger keeps. The input is
test_capture.py's."""

from __future__ import annotations

import pytest
from tests.brief.test_brief_budget import TOKEN
from tests.brief.test_capture import big_input

from rehydrate import brief
from rehydrate.brief.compose import RECORD, compose
from rehydrate.brief.plan import Draft, Plan


@pytest.fixture(autouse=True)
def _pinned_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brief, "new_token", lambda: TOKEN, raising=False)


def test_ask_a_human_when_no_step_is_known_and_the_deferred_note_goes_under_terse() -> None:
    inp = big_input(0)
    inp.next_action, inp.ask = None, "What is the task? state/00_goal.md is missing"
    inp.deferred = "not run at session start: PR and CI (gh), 2 user checks: `rehydrate recover` runs them"
    text = brief.render(inp, brief.DEFAULT_BUDGET).text
    tail = text.split(f"## Ledger {TOKEN}\n", 1)[1].split("\n")
    assert tail[-5:] == [
        "confidence: recovered",
        "ask a human: What is the task? state/00_goal.md is missing",
        "not run at session start: PR and CI (gh), 2 user checks: `rehydrate recover` runs them",
        RECORD,  # the last line says how to record
        "",
    ]
    d = Draft(inp, brief.DEFAULT_BUDGET, TOKEN)
    p = Plan(d)
    p.terse = True  # (the step after ledger level 3 in fit.py)
    terse = compose(d, p)[0]
    assert "ask a human: What is the task?" in terse and "not run at session start" not in terse


def test_the_brief_ends_with_how_to_record_given_up_second_under_pressure() -> None:
    """Every brief that fits ends with how the agent records (checkpoint, invariant, reject); a budget that
    cannot hold it gives it up right after the last WAL record, and gets it back if anything is left."""
    inp = big_input(0)
    roomy = brief.render(inp, brief.DEFAULT_BUDGET).text
    assert roomy.rstrip("\n").endswith(RECORD)
    for word in ("rehydrate checkpoint --done", "rehydrate invariant", "rehydrate reject"):
        assert word in RECORD
    d = Draft(inp, brief.DEFAULT_BUDGET, TOKEN)
    p = Plan(d)
    p.howto = False
    assert RECORD not in compose(d, p)[0]


def test_only_the_cleared_note_has_no_handoff_section_a_blank_one_is_still_shown_or_named() -> None:
    """`handoff --clear` writes one newline: no section. Any other note, blank or not, is shown or named as cut
    (a property test found a long run of spaces left unnamed when blank counted as cleared)."""
    for cleared in ("", "\n"):
        inp = big_input(0)
        inp.handoff = cleared
        assert "20_handoff.md" not in brief.render(inp, brief.DEFAULT_BUDGET).text
    inp = big_input(0)
    inp.handoff = " " * 30000
    assert "20_handoff.md" in brief.render(inp, 2000).text
