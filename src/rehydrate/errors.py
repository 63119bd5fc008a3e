"""Exit codes and the one exception the library raises."""

from __future__ import annotations


class ExitCode:
    """The process exit codes; README.md documents the same table. (Plain ints: an IntEnum costs start-up time.)"""

    OK = 0
    DISCREPANCY = 1  # a check found a discrepancy, or confidence is degraded
    USAGE = 2
    STATE = 3  # state missing or unreadable
    BUG = 4  # internal bug, with the path of a crash log
    INTERRUPTED = 130
    ALL = (OK, DISCREPANCY, USAGE, STATE, BUG, INTERRUPTED)


class RehydrateError(Exception):
    """A problem the user can act on: the message says what is wrong, the hint what to do.

    The library words both in the domain ("the reason is empty"); `field` names the input the message is about
    ("because", "budget"), so that each face adds its own name for it (the CLI: "--because")."""

    exit_code: int = ExitCode.STATE

    def __init__(self, message: str, hint: str | None = None, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.field = field

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class StateMissing(RehydrateError):
    """No state folder (or no log for this actor) where one was expected."""


class UnsafeFile(RehydrateError):
    """A state path is a symlink, a FIFO, a folder or otherwise not a regular file."""


class UsageError(RehydrateError):
    """Bad input that the user typed (exit 2)."""

    exit_code = ExitCode.USAGE
