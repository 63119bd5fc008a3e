"""Which transcript files an audit reads: the paths given, the user's Claude Code and Codex folders, a date."""

from __future__ import annotations

import datetime
import os

from rehydrate.errors import UsageError
from rehydrate.transcripts import claude, codex


def discover(paths: list[str], all_: bool, since: str | None) -> tuple[list[str], list[dict[str, str]]]:
    """The transcript files to read: each PATH (a file, or every .jsonl under a folder), and with all_ the user's
    Claude Code projects and Codex sessions. since (YYYY-MM-DD) keeps files modified on or after that day."""
    found: list[str] = []
    errors: list[dict[str, str]] = []
    roots = list(paths)
    if all_:
        homes = (os.path.join(claude.home(), "projects"), os.path.join(codex.home(), "sessions"))
        roots += [p for p in homes if os.path.isdir(p)]
    for root in roots:
        if os.path.isfile(root):
            found.append(root)
        elif os.path.isdir(root):
            for folder, _dirs, files in os.walk(root, onerror=lambda e: errors.append(unreadable(e.filename, e))):
                found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".jsonl")]
        else:
            errors.append({"path": root, "message": "no such file or folder"})
    if since:
        try:
            day = datetime.datetime.strptime(since, "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            raise UsageError(f"{since!r} is not a date", "use YYYY-MM-DD", field="since") from None
        found = [f for f in found if _mtime(f) >= day]
    return sorted(dict.fromkeys(found)), errors


def unreadable(path: str | None, e: BaseException) -> dict[str, str]:
    """A file the audit could not read, as the report lists it."""
    return {"path": str(path), "message": str(getattr(e, "strerror", None) or e)}


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
