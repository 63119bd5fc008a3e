"""Reading the WAL backwards from its end: the records newest first, at most a given number of bytes.

What `store.since` reads back to the last checkpoint with (through `wal.read_back`). The cost follows the bytes read,
never the length of the log. Each record is decoded strictly (`wal.decode`: canonical form, hash): the WAL arrived by
git pull, so a line that does not decode ends the read with BadRecord (its byte offset in the message), and nothing
before it is trusted. A last line without its newline is a write in progress or a torn one: it is left out, as the
state's own reads leave it out. Each record is checked on its own; the chain between them is not (reconciliation
verifies the tail; a caller quoting a record as evidence says where it came from).
"""

from __future__ import annotations

import os

from rehydrate.fs import write as fsio
from rehydrate.store import WORDS
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

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
