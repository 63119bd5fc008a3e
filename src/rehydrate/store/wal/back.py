"""Reading the WAL backwards from its end: the records newest first, at most a given number of bytes.

What `store.wal.since` reads back to the last checkpoint with (through `wal.read_back`). The cost follows the bytes
read, never the length of the log. Each record is decoded strictly (`wal.decode`: canonical form, hash): the WAL arrived
by git pull, so a line that does not decode ends the read with BadRecord (its byte offset in the message), and nothing
before it is trusted. A last line without its newline is a write in progress or a torn one: it is left out, as the
state's own reads leave it out. Each record is checked on its own; the chain between them is not (reconciliation
verifies the tail; a caller quoting a record as evidence says where it came from).
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, records
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from rehydrate.store.wal.record import Record

FIRST_CHUNK = 16 << 10  # the first read: a few records; each later read is four times larger, up to MAX_CHUNK
MAX_CHUNK = 1 << 20


class Back:
    """An iterator over (byte offset, record), newest first. After it is exhausted: `cut` is True when it stopped at
    max_bytes before the start of the file, `read` is how many bytes it read."""

    def __init__(self, path: str, max_bytes: int, end: int | None = None) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.end = end
        self.cut = False
        self.read = 0

    def __iter__(self) -> Iterator[tuple[int, Record]]:
        for offset, raw in self.lines():
            yield offset, decode(raw, offset)

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(byte offset, line without its newline), newest first, not decoded: for a reader that decodes only the
        lines it needs (`decode` each one it keeps). The same bounds and errors as the iterator's."""
        opened = fsio.open_stat(self.path, WORDS)
        if opened is None:
            return
        fd, st = opened
        try:
            yield from self._lines(fd, st.st_size if self.end is None else min(self.end, st.st_size))
        finally:
            fsio.close(fd)

    def _lines(self, fd: int, size: int) -> Iterator[tuple[int, bytes]]:
        start, carry, chunk, first = size, b"", FIRST_CHUNK, True
        while start > 0:
            if self.read >= self.max_bytes:
                self.cut = True
                return
            step = min(chunk, start, self.max_bytes - self.read)
            start -= step
            buf = _pread(fd, step, start, self.path) + carry
            self.read += step
            parts = buf.split(b"\n")
            if first:
                parts.pop()  # what follows the last newline: empty, or a torn last line left out
                first = False
            if start > 0:  # parts[0] may be the end of a line that began before this chunk: kept for the next
                carry, lines, offset = parts[0], parts[1:], start + len(parts[0]) + 1
            else:
                carry, lines, offset = b"", parts, 0
            found = []
            for raw in lines:
                found.append((offset, raw))
                offset += len(raw) + 1
            yield from reversed(found)
            if len(carry) > wal.MAX_LINE:
                raise wal.BadRecord(f"a line longer than {wal.MAX_LINE:,} bytes ends at byte {start + len(carry)}")
            chunk = min(chunk * 4, MAX_CHUNK)


def along(back: Iterable[tuple[int, Record]], head: str) -> Iterator[tuple[int, Record]]:
    """The records of one line of work, newest first: `head`, then its prev, and so on (a union merge interleaves
    two lines in the file: the other line's records are skipped). A parent always comes before its child in the
    file, so this is one backward pass over the bytes `back` reads. A merge record is followed along its prev (the
    line this worktree followed)."""
    want: object = head
    for offset, rec in back:
        if rec["h"] == want:
            yield offset, rec
            want = rec["prev"]
            if not isinstance(want, str):
                return


def _pread(fd: int, size: int, at: int, path: str) -> bytes:
    with fsio.failing(path, "read", WORDS):
        data = os.pread(fd, size, at)
    if len(data) != size:
        raise wal.BadRecord(f"the log changed while it was read back (short read at byte {at})")
    return data


def decode(raw: bytes, offset: int) -> Record:
    """wal.decode of the line at offset; BadRecord names the offset."""
    try:
        return wal.decode(raw)
    except wal.BadRecord as e:
        raise wal.BadRecord(f"damaged record at byte {offset}: {e}") from None


def anchor_of(rec: Record) -> Record | None:
    """The checkpoint a record is or carries: a checkpoint, the init (the first next step) or a join (an actor's
    first record), or a rotate record's data.checkpoint (the archived log's last checkpoint); else None."""
    op = records.op_of(rec)
    if op.recovery and op is not records.ROTATE:
        return rec
    carried = rec["data"].get("checkpoint") if op is records.ROTATE else None
    return carried if isinstance(carried, dict) else None


class Tail:
    """The end of a log, as read without reading the rest."""

    def __init__(
        self,
        records: list[tuple[int, Record]],
        torn: bytes,
        torn_offset: int,
        torn_reason: str,
    ) -> None:
        self.records = records  # (byte offset, record), oldest first; the last is the recovery point
        self.torn = torn  # bytes after the last valid record (a torn or damaged last line); empty if none
        self.torn_offset = torn_offset
        self.torn_reason = torn_reason


def read_tail(path: str, want: int = 2, end: int | None = None) -> Tail:
    """The last `want` valid records; a bad last line is returned as `torn`.

    A bad line before the last one is damage, not a torn write: BadRecord is raised with its byte offset.
    A git conflict marker among the lines read raises Conflicted: a conflicted log is neither torn nor damaged.
    """
    start, buf, at_start = fsio.read_tail(path, want + 1, wal.MAX_LINE + 65536, end, WORDS)
    size = start + len(buf)
    lines = buf.split(b"\n")
    # lines[-1] is what follows the last newline: empty, or a torn line
    tail_parts: list[tuple[int, bytes]] = []
    pos = start
    for i, raw in enumerate(lines):
        tail_parts.append((pos, raw))
        pos += len(raw) + (1 if i < len(lines) - 1 else 0)
    if not at_start and tail_parts:
        tail_parts = tail_parts[1:]  # the first piece may be the end of a longer line
    for off, raw in tail_parts:  # an unfinished merge: nothing may be cut or appended until a person finishes it
        if wal.is_conflict_marker(raw):
            raise wal.Conflicted(off)
    last_raw_off, last_raw = tail_parts[-1] if tail_parts else (size, b"")
    complete = tail_parts[:-1]
    torn = b""
    torn_off = size
    reason = ""
    if last_raw:  # no newline at the end: a torn write
        torn, torn_off, reason = last_raw, last_raw_off, "the last line has no newline (a torn write)"
    if torn.strip(b"\0") == b"" and torn:
        reason = "the file ends in zero bytes (a torn write)"
    if not at_start and not complete:
        raise wal.BadRecord(f"the last line is longer than {wal.MAX_LINE:,} bytes")
    records: list[tuple[int, Record]] = []
    for idx in range(len(complete) - 1, -1, -1):
        off, raw = complete[idx]
        try:
            rec = wal.decode(raw)
        except wal.BadRecord as e:
            if not records and not torn:  # the last complete line: damage at the tail, cut like a torn write
                torn, torn_off, reason = raw + b"\n", off, f"the last line is damaged: {e}"
                continue
            raise wal.BadRecord(f"damaged record at byte {off}: {e}") from None
        records.append((off, rec))
        if len(records) >= want:
            break
    records.reverse()
    return Tail(records, torn, torn_off, reason)


def tail(path: str, wal_rel: str) -> Tail:
    """The log's last two records. An oversized bad last line is returned as torn; damage before it, or a
    conflicted log, raises RehydrateError (StateMissing for no log)."""
    try:
        return read_tail(path, 2)
    except FileNotFoundError:
        raise StateMissing(f"no WAL at {wal_rel}", "run `rehydrate init --goal TEXT`") from None
    except wal.Conflicted:
        raise wallines.conflicted(path, wal_rel) from None
    except wal.BadRecord as e:
        bad = wallines.first_bad_line(path)
        if bad is None or not bad[3]:
            where = f"line {bad[0]}: {bad[2]}" if bad else str(e)
            raise RehydrateError(
                f"{wal_rel} is damaged before its last line ({where})", wallines.unrepairable(wal_rel)
            ) from None
        _, offset, reason, _ = bad  # the bad line is the last one (an oversized torn write): a torn tail
        fd = fsio.open_read(path, WORDS)
        assert fd is not None
        try:
            torn = os.pread(fd, os.fstat(fd).st_size - offset, offset)
        finally:
            os.close(fd)
        return Tail(read_tail(path, 2, end=offset).records, torn, offset, reason)


def read_at(path: str, offset: int) -> Record | None:
    """The record whose line starts at byte offset (one bounded read), or None if there is none there."""
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return None
    try:
        data = b""
        while b"\n" not in data and len(data) <= wal.MAX_LINE:
            chunk = os.pread(fd, 1 << 16, offset + len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if b"\n" not in data:
        return None
    try:
        return wal.decode(data.split(b"\n", 1)[0])
    except wal.BadRecord:
        return None


def only_newline_lost(t: Tail, path: str | None = None) -> bool:
    """The torn piece is a whole, valid record that follows the one before it, or (given the log's path) any
    earlier record of the log (a union merge puts the other side's records last): only its newline is missing
    (an editor or a merge tool stripped it). It is kept, not cut."""
    if t.torn.endswith(b"\n"):
        return False
    try:
        rec = wal.decode(t.torn)
    except wal.BadRecord:
        return False
    before = t.records[-1][1] if t.records else None
    if rec["prev"] == (before["h"] if before else None):
        return True
    wanted = set(wal.parents_of(rec))
    if path is None or not wanted:
        return False
    for _, earlier, _ in wallines.scan(path, t.torn_offset):  # the graph rule: every parent is an earlier record
        if earlier is not None:
            wanted.discard(earlier["h"])
            if not wanted:
                return True
    return False


def cut_torn(path: str, wal_rel: str, t: Tail) -> str:
    """Cut a torn last line off the log, keeping the cut bytes in a .broken file beside it; says what it did."""
    n = wallines.line_number(path, t.torn_offset)
    broken = fsio.cut_tail(path, t.torn_offset, t.torn, "repair", WORDS)
    kept = os.path.join(os.path.dirname(wal_rel), os.path.basename(broken))
    return f"cut a torn last line off {wal_rel} (line {n}, {len(t.torn)} bytes: {t.torn_reason}); kept in {kept}"


def recent_records(path: str, count: int) -> list[dict[str, Any]]:
    """The log's last count records, newest first; none when its tail cannot be read (a conflicted or damaged log):
    the caller then does what it does without them, and `State` names the problem where a brief is given."""
    try:
        return [rec for _, rec in reversed(read_tail(path, count).records)]
    except wal.BadRecord:
        return []
