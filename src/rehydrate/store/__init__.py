"""Externalize: everything that writes the state (fsio is the one seam every byte goes through).

Problem, the one kind of discrepancy the store names (a WAL scan, reconciliation, verify), is defined here: every
store module reports with it; and WORDS, how the store words an error on a file of the state folder (a pipeline's
files and an install's targets have their own).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.fs.read import Words


def __getattr__(name: str) -> Words:
    """WORDS, made when first asked for: finding the state folder (store.locate, on every hook call) loads this
    package, and must not load the file layer with it."""
    if name != "WORDS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rehydrate.fs.read import ANY, Words

    words = Words(
        "rehydrate only reads and writes regular files inside the state folder",
        "move it away and run `rehydrate verify --repair`, or restore the file from git",
        ANY.failed_hint,
    )
    globals()["WORDS"] = words
    return words


# Problems that are information, not discrepancies: named, but no failure of verify and no degraded confidence.
INFO = frozenset({"duplicate-record", "switched", "view-merged", "duplicate-line", "key-rotated", "key-registered"})


class Problem:
    """One discrepancy, named with its file and (where it has one) its line."""

    def __init__(self, code: str, file: str, line: int | None, message: str, repairable: bool = False) -> None:
        self.code = code
        self.file = file
        self.line = line
        self.message = message
        self.repairable = repairable

    def __repr__(self) -> str:
        return f"Problem({self.code!r}, {self.file!r}, {self.line!r}, {self.message!r})"

    @property
    def info(self) -> bool:
        """Information only (INFO): named, but not a discrepancy."""
        return self.code in INFO

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("code", "file", "line", "message", "repairable")}
