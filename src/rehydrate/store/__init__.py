"""Externalize: everything that writes the state (fsio is the one seam every byte goes through).

Problem, the one kind of discrepancy the store names (a WAL scan, reconciliation, verify), is defined here: every
store module reports with it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any


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

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("code", "file", "line", "message", "repairable")}
