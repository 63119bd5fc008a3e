"""A log as lines, read forwards: every line with bounded memory (an oversized one skipped, not held), each decoded
strictly; the first record, the first bad line, a line's number; and how a log damaged before its tail, or holding
git's conflict markers, is worded."""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS
from rehydrate.store.wal import digest
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container, Iterator

    from rehydrate.store.wal.record import Record


class Line:
    def __init__(self, number: int, offset: int, raw: bytes | None, newline: bool) -> None:
        self.number = number
        self.offset = offset
        self.raw = raw  # None when the line is longer than wal.MAX_LINE (its bytes are skipped, not held)
        self.newline = newline


def iter_lines(path: str, end: int | None = None) -> Iterator[Line]:
    """Every line of a file (those that start before byte `end`, if given) with bounded memory; an oversized line
    is yielded with raw=None."""
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return
    with open(fd, "rb", buffering=1 << 20) as f:
        number = 0
        offset = 0
        while end is None or offset < end:
            raw = f.readline(wal.MAX_LINE + 1)
            if not raw:
                return
            number += 1
            start = offset
            offset += len(raw)
            if len(raw) > wal.MAX_LINE and not raw.endswith(b"\n"):
                while True:  # skip the rest of the oversized line
                    more = f.readline(1 << 20)
                    offset += len(more)
                    if not more or more.endswith(b"\n"):
                        break
                yield Line(number, start, None, True)
                continue
            if raw.endswith(b"\n"):
                yield Line(number, start, raw[:-1], True)
            else:
                yield Line(number, start, raw, False)


def scan(path: str, end: int | None = None) -> Iterator[tuple[Line, Record | None, str | None]]:
    """Every line of a log (up to byte `end`), decoded: (line, record, None), or (line, None, why it is not one).
    A line without its newline is decoded too: the caller tells a torn write from a lost newline."""
    for line in iter_lines(path, end):
        if line.raw is None:
            yield line, None, f"a line longer than {wal.MAX_LINE:,} bytes"
            continue
        try:
            yield line, wal.decode(line.raw), None
        except wal.BadRecord as e:
            yield line, None, str(e)


def parsed(path: str, end: int | None = None, skip: Container[int] = ()) -> Iterator[tuple[int, Record]]:
    """(offset, record) of each whole line of a log (before byte `end`, the offsets in skip left out) that parses to
    a record's shape (h, seq, op, data, prev), parsed and not hashed: for a second read of bytes a pass under the
    same lock has just checked (walscan._Known, graph.Graph)."""
    try:  # here: only a second read after a pass loads orjson (the hook path does not)
        from orjson import loads
    except ImportError:  # pragma: no cover - a platform without orjson's wheels
        from json import loads  # type: ignore[assignment]
    for line in iter_lines(path, end):
        if line.raw is None or not line.newline or line.offset in skip:
            continue
        try:
            rec = loads(line.raw)
        except ValueError:
            continue
        if (
            isinstance(rec, dict)
            and isinstance(rec.get("h"), str)
            and type(rec.get("seq")) is int
            and isinstance(rec.get("op"), str)
            and isinstance(rec.get("data"), dict)
            and (rec.get("prev") is None or isinstance(rec.get("prev"), str))
        ):
            yield line.offset, rec


def records(path: str) -> Iterator[Record]:
    """Every valid, complete record of a log, in file order (parents before children), each once: a line repeating
    an earlier record's h (a cherry-pick merged again) is skipped (full scan: verify and error paths only)."""
    digest.long_pass()
    known: set[str] = set()
    for line, rec, _ in scan(path):
        if rec is not None and line.newline and rec["h"] not in known:  # a repeated record (union) is skipped
            known.add(rec["h"])
            yield rec


def first_record(path: str, rel: str) -> Record:
    """The log's first record (init, or rotate after an archive); RehydrateError if its first line is damaged."""
    for _, rec, _ in scan(path):
        if rec is not None:
            return rec
        break
    raise RehydrateError(f"the first line of {rel} is damaged")


def first_bad_line(path: str) -> tuple[int, int, str, bool] | None:
    """(line number, byte offset, reason, whether it is the last line) of the first bad line of the log."""
    found: tuple[int, int, str] | None = None
    for line, rec, why in scan(path):
        if found is not None:
            return (*found, False)
        if rec is None:
            found = (line.number, line.offset, str(why))
    return (*found, True) if found is not None else None


def line_number(path: str, offset: int) -> int:
    """The 1-based line number of the byte at offset (reads the file up to there: error paths only)."""
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return 1
    n = 1
    done = 0
    try:
        while done < offset:
            chunk = os.pread(fd, min(1 << 20, offset - done), done)
            if not chunk:
                break
            n += chunk.count(b"\n")
            done += len(chunk)
    finally:
        os.close(fd)
    return n


def unrepairable(wal_rel: str) -> str:
    """The hint for a log damaged before its tail."""
    return (
        f"the WAL cannot be repaired safely: restore it from git (`git checkout -- {wal_rel}`) "
        "or move it away; `rehydrate verify` lists every problem"
    )


def conflicted(path: str, wal_rel: str) -> RehydrateError:
    """The log holds git's conflict markers (an unfinished merge): say where, and how to finish the merge."""
    lines = [line.number for line in iter_lines(path) if line.raw and wal.is_conflict_marker(line.raw)]
    where = f"line {lines[0]}" if lines else "its tail"
    return RehydrateError(
        f"{wal_rel} {where}: an unresolved git merge conflict ({len(lines)} marker line(s)) [merge-conflict]; "
        "rehydrate changes nothing in it until the merge is finished",
        "this actor's log was written on both branches and the merge did not use the union attributes of "
        "state/.gitattributes: `rehydrate resolve` keeps both sides' records and says what finishes the merge; "
        f"or keep one side (`git checkout --ours -- {wal_rel}` or `--theirs`, then `git add {wal_rel}`); or "
        "`git merge --abort`. `rehydrate team init` sets the union attributes up for this clone",
    )
