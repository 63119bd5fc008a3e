"""Which sessions had a compaction that their brief has not yet followed: a hint kept in the worktree's local folder
(never committed), so that a hook run after every tool call (GitHub Copilot CLI's postToolUse and its prompts:
events.after_compaction) reads two small files, not the WAL.

Before each `compaction` record of a session, `compactions/<session>.compacted` gets a new mark; when the WAL has
been read for that session (the brief given, or found given since), `compactions/<session>.seen` gets the mark that
was there when the reading began. The WAL decides; the marks say only when it need not be read: a session with no
compacted mark, or whose seen mark is the compacted one, had no compaction since its brief. A compaction recorded
while the WAL was being read leaves the two different, so the next call reads it again. A session whose id is not a
plain name ([A-Za-z0-9_.-], not starting with a dot) has no marks: its calls always read the WAL.
"""

from __future__ import annotations

import os
import time

from rehydrate.store.local import place as local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLDER = "compactions"
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_MAX_NAME = 128
UNMARKED = "?"  # what unseen() gives for a session that cannot have marks: read the WAL


def key(event: dict[str, Any]) -> str | None:
    """The event's session id when it can name a file; None otherwise."""
    sid = event.get("session_id")
    if not isinstance(sid, str) or not sid or len(sid) > _MAX_NAME or sid[0] == ".":
        return None
    return sid if _NAME_CHARS.issuperset(sid) else None


def compacted(root: str, event: dict[str, Any]) -> None:
    """A new compacted mark for the event's session: written before its `compaction` record, so that no record is
    ever without one. Raises OSError when it cannot be written (the record is then not written either)."""
    session = key(event)
    if session is None:
        return
    folder = os.path.join(local.local_dir(root), FOLDER)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    _put(os.path.join(folder, session + ".compacted"), f"{time.time_ns()}-{os.getpid()}")


def unseen(root: str, event: dict[str, Any]) -> str | None:
    """The session's compacted mark when the WAL must be read for it (not yet seen; UNMARKED for a session that
    cannot have marks); None when it had no compaction since its brief."""
    session = key(event)
    if session is None:
        return UNMARKED
    base = os.path.join(local.local_dir(root), FOLDER, session)
    mark = _get(base + ".compacted")
    if mark is None or mark == _get(base + ".seen"):
        return None
    return mark


def seen(root: str, event: dict[str, Any], mark: str | None) -> None:
    """Record that the WAL was read for the session when its compacted mark was `mark` (unseen's answer before the
    reading). Never fails: a mark not written only means the WAL is read again."""
    session = key(event)
    if session is None or mark is None or mark == UNMARKED:
        return
    try:
        _put(os.path.join(local.local_dir(root), FOLDER, session + ".seen"), mark)
    except OSError:
        pass


def _get(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        return os.read(fd, 256).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _put(path: str, mark: str) -> None:
    """The file holds mark, replaced whole (a reader sees the old mark or the new one)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        try:
            os.write(fd, mark.encode("ascii"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
