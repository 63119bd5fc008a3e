"""The canary (canary.py) as a library, on a real state: plant a rule with a token, grade answers against the next
action and the active canaries, retire a canary, and run an agent command with the questions (`rehydrate canary`
through the CLI is tested with the CLI's tests, in tests/cli/)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rehydrate import canary
from rehydrate.errors import UsageError
from rehydrate.store.state import State


@pytest.fixture
def planted(tmp_path: Path) -> tuple[State, canary.Canary]:
    state, _ = State.init(str(tmp_path / "state"), "Ship the parser", "all tests pass")
    state.checkpoint(done="the tokenizer", next="write the binding powers table")
    planted, _ = canary.plant(state, "Edit db/schema.sql without a migration file.")
    return state, planted


def test_a_planted_canary_is_active_and_graded_against_the_next_action(planted: tuple[State, canary.Canary]) -> None:
    state, c = planted
    assert c.rule == f"Edit db/schema.sql without a migration file (canary {c.token})"
    want = canary.expected(state)
    assert want.next_action == "write the binding powers table" and want.source == "state/99_next.md"
    assert [(a.token, a.rule) for a in want.canaries] == [(c.token, c.rule)]
    answer = f"1. write the binding\n   powers table\n2. {c.rule}\n"  # wrapped lines: whitespace collapsed
    assert canary.grade(answer, want).passed
    summary = "1. the binding powers\n2. never edit the schema without a migration\n"
    missed = canary.grade(summary, want)
    assert not missed.passed
    assert missed.missing == [
        'the next action from state/99_next.md ("write the binding powers table")',
        f"the canary token {c.token}",
    ]
    assert canary.grade(f"write the binding powers table; {c.token}", want).missing == [f'the canary rule ("{c.rule}")']


def test_a_retired_canary_is_no_longer_asked(planted: tuple[State, canary.Canary]) -> None:
    state, c = planted
    assert canary.retire(state, c.token)[0] == [c.token]
    assert canary.expected(state).canaries == []
    assert canary.grade("write the binding powers table", canary.expected(state)).passed
    with pytest.raises(UsageError, match="no active canary to retire"):
        canary.retire(state, None)


def test_run_agent_gives_the_agent_the_questions_and_keeps_its_answer(tmp_path: Path) -> None:
    echo = f"{sys.executable} -c 'import sys; print(sys.argv[-1].splitlines()[0])'"
    ran = canary.run_agent(echo, str(tmp_path), 30, stdin=False)
    assert (ran.code, ran.timed_out) == (0, False)
    assert ran.answer == canary.QUESTIONS.splitlines()[0] + "\n" and ran.size == len(ran.answer)
    cat = f"{sys.executable} -c 'import sys; sys.stdout.write(sys.stdin.read())'"
    assert canary.run_agent(cat, str(tmp_path), 30, stdin=True).answer == canary.QUESTIONS
    silent = f"{sys.executable} -c 'import time; time.sleep(60)'"
    stopped = canary.run_agent(silent, str(tmp_path), 0.5, stdin=False)
    assert stopped.timed_out and stopped.answer == "" and stopped.duration < 30
