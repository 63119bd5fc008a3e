"""What the records' data hold, read where the log is shown: the start of one definition per WAL operation.

A record arrived with `git pull`: every function here takes the data as untrusted (a field of the wrong type counts
as empty) and never raises on its shape. The store shows records (`rehydrate log`, the brief's last-record line)
without importing the modules that write them: the harness writes a compaction's capture, the store reads it here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hook path's imports
    from typing import Any


def capture_counts(capture: dict[str, Any]) -> str:
    """A capture as counts, for `rehydrate log` and the brief's last-record line: "3 todos, 2 files edited, 1
    failed command" ("nothing captured" when all are empty, "not captured: <error>" on an error). The capture is
    untrusted (it arrived with the WAL): a field of the wrong type counts as empty, the error is cut to one line."""
    error = capture.get("error")
    if isinstance(error, str) and error:
        return "not captured: " + " ".join(error.split())[:200]
    failed = capture.get("failed")
    parts = []
    for n, one, many in (
        (_count(capture.get("todos"), "items"), "todo", "todos"),
        (_count(capture.get("edited"), "files"), "file edited", "files edited"),
        (len(failed) if isinstance(failed, list) else 0, "failed command", "failed commands"),
    ):
        if n:
            parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts) or "nothing captured"


def _count(part: object, key: str) -> int:
    """len(part[key]) plus part["more"] (what the bound left out), 0 for anything of the wrong shape."""
    if not isinstance(part, dict) or not isinstance(part.get(key), list):
        return 0
    more = part.get("more")
    return len(part[key]) + (more if isinstance(more, int) and not isinstance(more, bool) and more > 0 else 0)
