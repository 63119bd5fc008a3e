"""The history of a state folder: every record of every actor, from the live logs and the archives, oldest first.

Tests and tools read the history through this module rather than through the files' views. Every line goes
through the WAL's full scan (`lines.scan`: bounded line reads, the strict canonical decode): a line that is not a
valid record is returned as damaged, with its file and line number, and skipped. The logs are untrusted input (they
arrive with `git pull`): nothing here follows a link, blocks on a FIFO or trusts a field's type. Never prints.
"""

from __future__ import annotations

import difflib
import os
import re

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import write as fsio
from rehydrate.store import layout, records
from rehydrate.store.wal import digest
from rehydrate.store.wal import lines as wallines
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUMMARY = 100  # the most characters of a record's summary

_SINCE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?Z?)?\Z"


class Entry:
    """One record of the history."""

    def __init__(self, record: dict[str, Any], source: str, line: int) -> None:
        self.seq: int = record["seq"]
        self.actor: str = record["actor"]
        self.op: str = record["op"]
        self.ts: str = record["ts"]
        self.data: dict[str, Any] = record["data"]
        self.h: str = record["h"]
        self.source = source  # the file it was read from, from the state folder's parent (state/wal/agent.jsonl)
        self.line = line

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "actor": self.actor, "op": self.op, "ts": self.ts, "data": self.data, "h": self.h}

    def summary(self, limit: int = SUMMARY) -> str:
        """A short, cleaned, one-line summary of the record's data."""
        return _shorten(clean(records.of(self.op).summary(self.data), one_line=True), limit)


class Damaged:
    """A line (or a whole file) that was skipped, and why."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.source}{f':{self.line}' if self.line else ''}: {self.reason}"


class History:
    def __init__(self, entries: list[Entry], damaged: list[Damaged], files: list[str]) -> None:
        self.entries = entries  # oldest first: by time, then actor, then seq
        self.damaged = damaged
        self.files = files  # every log read, from the state folder's parent


def normalize_since(text: str) -> str:
    """A time to compare with records' `ts` (UTC, ISO 8601: 2026-11-29, 2026-11-29T22:04, ...). UsageError."""
    text = text.strip()
    if not re.match(_SINCE, text):
        raise UsageError(
            f"the time {text!r} is not a UTC date or time",
            "give it as YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] (UTC, as records carry it)",
        )
    return text.replace(" ", "T").rstrip("Z")


def read(
    root: str,
    *,
    ops: list[str] | None = None,
    actors: list[str] | None = None,
    since: str | None = None,
    grep: str | None = None,
) -> History:
    """Every record under root/wal/*.jsonl and root/archive/*.jsonl, filtered, oldest first, each once. grep: only
    the records whose data holds that text, case-insensitively (the data as `rehydrate log --json` shows it).

    since is compared with each record's `ts` as text (see normalize_since). A record that a rotate carried into a
    new log is also the archive's last: it is listed once. StateMissing-like RehydrateError if root is no state
    folder; UnsafeFile if it, wal/ or archive/ is not a real folder."""
    if not fsio.check_dir(root):
        raise RehydrateError(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
    base = os.path.basename(root)
    since = normalize_since(since) if since else None
    digest.long_pass()  # every log read whole: a long pass (OpenSSL, orjson)
    entries: dict[tuple[str, int, str], Entry] = {}
    damaged: list[Damaged] = []
    files: list[str] = []
    for folder in (layout.ARCHIVE_DIR, layout.WAL_DIR):
        path = os.path.join(root, folder)
        try:
            if not fsio.check_dir(path):
                continue
            names = sorted(n for n in os.listdir(path) if n.endswith(".jsonl") and not n.startswith("."))
        except (RehydrateError, OSError) as e:
            damaged.append(Damaged(os.path.join(base, folder), None, _why(e)))
            continue
        for name in names:
            rel = os.path.join(base, folder, name)
            files.append(rel)
            try:
                _read_file(os.path.join(path, name), rel, entries, damaged, ops, actors, since, grep)
            except (RehydrateError, OSError) as e:
                damaged.append(Damaged(rel, None, _why(e)))
    ordered = sorted(entries.values(), key=lambda e: (e.ts, e.actor, e.seq))
    return History(ordered, damaged, files)


def unknown_op(root: str, ops: list[str]) -> tuple[str, str | None, list[str]] | None:
    """The first of ops that no version defines and no record under root carries, the closest op name, and every
    op name (defined or carried); None when each is one or the other. (An op this version does not define is still
    a filter where a record has it: unknown ops are kept and shown.)"""
    unknown = [op for op in ops if op not in records.OPS]
    if not unknown:
        return None
    present = {e.op for e in read(root).entries}
    missing = [op for op in unknown if op not in present]
    if not missing:
        return None
    names = sorted(set(records.OPS) | present)
    close = difflib.get_close_matches(missing[0], names, n=1)
    return missing[0], close[0] if close else None, names


def _why(e: BaseException) -> str:
    if isinstance(e, RehydrateError):
        return e.message
    return f"cannot read it: {getattr(e, 'strerror', None) or e}"


def _read_file(
    path: str,
    rel: str,
    entries: dict[tuple[str, int, str], Entry],
    damaged: list[Damaged],
    ops: list[str] | None,
    actors: list[str] | None,
    since: str | None,
    grep: str | None = None,
) -> None:
    needle = grep.casefold() if grep else None
    for line, rec, why in wallines.scan(path):
        if line.raw is not None and not line.newline and rec is None:  # (a valid record only lost its newline)
            if line.raw.strip(b"\0 \t\r"):
                damaged.append(Damaged(rel, line.number, "the last line has no newline (a write in progress, or torn)"))
            continue
        if rec is None:
            damaged.append(Damaged(rel, line.number, str(why)))
            continue
        if not isinstance(rec["actor"], str) or not isinstance(rec["ts"], str):
            damaged.append(Damaged(rel, line.number, "a field has the wrong type"))
            continue
        if ops and rec["op"] not in ops:
            continue
        if actors and rec["actor"] not in actors:
            continue
        if since and rec["ts"] < since:
            continue
        if needle is not None and needle not in records.text(rec["data"]).casefold():
            continue
        entries.setdefault((rec["actor"], rec["seq"], rec["h"]), Entry(rec, rel, line.number))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
