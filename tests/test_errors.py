"""errors: the exit code table and RehydrateError, a message with its hint, and the code each kind exits with."""

from __future__ import annotations

from rehydrate.errors import ExitCode, RehydrateError, StateMissing, UnsafeFile, UsageError


def test_a_message_shows_its_hint_on_a_line_of_its_own() -> None:
    e = RehydrateError("the reason is empty", "say why", field="because")
    assert (e.message, e.hint, e.field) == ("the reason is empty", "say why", "because")
    assert str(e) == "the reason is empty\n  hint: say why"
    assert str(RehydrateError("no state here")) == "no state here"


def test_each_kind_exits_with_its_code_from_the_table() -> None:
    assert ExitCode.ALL == (0, 1, 2, 3, 4, 130)
    assert RehydrateError("x").exit_code == StateMissing("x").exit_code == UnsafeFile("x").exit_code == ExitCode.STATE
    assert UsageError("x").exit_code == ExitCode.USAGE == 2
