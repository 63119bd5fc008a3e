"""10_invariants.md read as far as a brief could show it, whatever its size, and that read's summary, cached per clone.

Every rejected approach is found by a scan of the file's bytes for the lines' prefix (`- R-` and six hex digits),
streamed in chunks and never decoded as text; each one's id, line number and offset are noted, and the start of the
newest few kept (only those could be shown). The newest decisions come from a bounded read of its end. A view too
long to show whole (20_handoff.md) is read the same way: its start and its end, each a bounded read (head_tail).

Its summary, cached per clone, stands in for the scan where it holds (store/latches/summary.py). A view
reconciliation already read (`snap.seen`) is read from memory the same way; any other, from the file (never
following a link, never blocking: fs/read.py).
"""

from __future__ import annotations

import os

from rehydrate.fs import read as fsread
from rehydrate.store import WORDS
from rehydrate.store.latches import lifts

CHUNK = 1 << 20  # bytes read at a time by the scan
HEAD = 4 * 1200 + 64  # bytes kept of each rejected approach's line: its longest shown form (plan.REJECTED_CAP)
_CARRY = 64 << 10  # an unfinished line longer than this is noted and the rest of it skipped


class Source:
    """A file's bytes: held in memory (as reconciliation read them), or read on demand from an open descriptor."""

    def __init__(self, data: bytes | None = None, fd: int = -1, size: int = 0, path: str = "") -> None:
        self.data, self.fd, self.path = data, fd, path
        self.size = len(data) if data is not None else size

    def read(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if self.data is not None:
            return self.data[offset : offset + n]
        parts: list[bytes] = []
        with fsread.failing(self.path, "read", WORDS):
            while n > 0:
                got = os.pread(self.fd, min(n, CHUNK), offset)
                if not got:
                    break
                parts.append(got)
                offset += len(got)
                n -= len(got)
        return b"".join(parts)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def open_view(path: str, seen: dict[str, bytes | None] | None, name: str) -> Source | None:
    """The view as reconciliation read it (if it did), else the file opened for reading; None if absent."""
    if seen is not None and name in seen:
        data = seen[name]
        return None if data is None else Source(data)
    fd = fsread.open_read(path, WORDS)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
    except OSError:
        os.close(fd)
        raise
    return Source(fd=fd, size=size, path=path)


def head_tail(src: Source, room: int) -> tuple[bytes, bytes | None]:
    """The whole file if it holds at most 2 * room bytes; else its first and its last `room` bytes."""
    if src.size <= 2 * room:
        return src.read(0, src.size), None
    return src.read(0, room), src.read(src.size - room, room)


class Invariants:
    """What the brief reads of 10_invariants.md: every rejected approach in force (id, line number, offset; the
    start of the newest `keep`), how many lines start with `- `, what is out of force, and the end of the file."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.ids: list[bytes] = []  # every rejected approach's id (ASCII) in force, in file order
        self.lines: list[int] = []  # its line number (from 1)
        self.offsets: list[int] = []  # its offset in the file
        self.heads: list[tuple[bytes, bool]] = []  # the newest ones: the start of the line, whether there is more
        self.head_at: list[int] = []  # each one's offset
        # lines starting with `- `, rejected approaches included, less the entries out of force and the lines that
        # took them out of force (withdrawals; an entry that supersedes another is itself in force)
        self.dashes = 0
        self.lifts: list[lifts.Lift] = []  # the lines that take an entry out of force (store/latches/lifts.py)
        self.out: set[bytes] = set()  # the ids (ASCII) they take out of force
        self.tail = b""  # the end of the file, from a line's start (whole lines)
        self.tail_start = 0  # its offset


_HEX = frozenset(b"0123456789abcdef")


def rejected_starts(buf: bytes, end: int, gone: set[bytes] | None = None) -> list[int]:
    """The offsets of the lines in buf[:end] (buf starts a line) that start a rejected approach: `- R-`, six
    lowercase hex digits and a space (the first line may run past end), less those whose id is in `gone` (out of
    force). Bytes methods: no `re` on the hook path."""

    def rejected(at: int, stop: int) -> bool:
        return at + 11 <= stop and buf[at + 10] == 32 and all(c in _HEX for c in buf[at + 4 : at + 10])

    out = [0] if buf.startswith(b"- R-") and rejected(0, len(buf)) else []
    i = buf.find(b"\n- R-", 0, end)
    while i >= 0:
        if rejected(i + 1, end):
            out.append(i + 1)
        i = buf.find(b"\n- R-", i + 1, end)
    return [at for at in out if buf[at + 2 : at + 10] not in gone] if gone else out


def _lifts(inv: Invariants, buf: bytes, end: int, base: int) -> None:
    """The lines in buf[:end] that take an entry out of force, noted with their offsets in the file."""
    if b"- W-" in buf or lifts.SUPERSEDING in buf:  # (mostly neither: one pass of find each)
        inv.lifts += [(base + at, ident, target) for at, ident, target in lifts.found(buf, end)]


def _lines(inv: Invariants, buf: bytes, end: int, nl: int, base: int, keep: int, cut: bool = False) -> None:
    """The whole lines buf[:end] (buf starts a line; end 0: buf is one unfinished line, which goes on past buf if
    cut), the first being line nl + 1: their rejected approaches noted, the start of the newest `keep` kept."""
    inv.dashes += buf.count(b"\n- ", 0, end) + buf.startswith(b"- ")
    _lifts(inv, buf, end or len(buf), base)
    starts = rejected_starts(buf, end)
    if not starts:
        return
    inv.ids += [buf[at + 2 : at + 10] for at in starts]
    last = 0
    lines, offsets = inv.lines, inv.offsets
    for at in starts:
        nl += buf.count(b"\n", last, at)
        last = at
        lines.append(nl + 1)
        offsets.append(base + at)
    limit = len(buf) if end == 0 else end  # an unfinished line (end 0) runs to the end of what was read
    for at in starts[-keep:] if keep else ():
        stop = buf.find(b"\n", at, min(limit, at + HEAD + 1))
        more = stop < 0 and (limit > at + HEAD or cut)
        inv.heads.append((buf[at : (stop if stop >= 0 else min(limit, at + HEAD))], more))
        inv.head_at.append(base + at)
    if len(inv.heads) > 2 * keep:
        del inv.heads[: len(inv.heads) - keep], inv.head_at[: len(inv.head_at) - keep]


def scan_invariants(src: Source, keep: int, tail_room: int) -> Invariants:
    """One pass over the bytes, chunk by chunk: every rejected approach noted (the start of the newest `keep` kept),
    then the end of the file read until it holds tail_room bytes that are not rejected approaches (or up to
    16 * tail_room bytes, or the start of the file)."""
    inv = Invariants(src.size)
    buf, base, nl, off, skipping = b"", 0, 0, 0, False
    if src.data is not None:  # in memory: the whole lines at once, no copies
        end = src.data.rfind(b"\n") + 1
        _lines(inv, src.data, end, 0, 0, keep)
        buf, base, off = src.data[end:], end, src.size
        nl = src.data.count(b"\n", 0, end) if buf.startswith(b"- R-") else 0  # (only a rejected line needs it)
    while off < src.size:
        chunk = src.read(off, CHUNK)
        if not chunk:
            break
        off += len(chunk)
        if skipping:  # the rest of an overlong line
            i = chunk.find(b"\n")
            if i < 0:
                continue
            nl, skipping, base, chunk = nl + 1, False, off - len(chunk) + i + 1, chunk[i + 1 :]
        buf = buf + chunk if buf else chunk
        end = buf.rfind(b"\n") + 1
        if end:
            _lines(inv, buf, end, nl, base, keep)
            nl += buf.count(b"\n", 0, end)
            buf, base = buf[end:], base + end
        if len(buf) > _CARRY:  # an unfinished line this long: noted from its start, the rest skipped
            _lines(inv, buf, 0, nl, base, keep, cut=True)
            buf, skipping = b"", True
    if buf:
        _lines(inv, buf, 0, nl, base, keep)
    if inv.lifts:
        _in_force(inv, src, keep)
    del inv.heads[: max(0, len(inv.heads) - keep)], inv.head_at[: max(0, len(inv.head_at) - keep)]
    fill_tail(inv, src, tail_room, keep)
    return inv


def _in_force(inv: Invariants, src: Source, keep: int) -> None:
    """The scan made what is in force: the rejected approaches taken out of force dropped (the newest `keep` left
    read again where the scan had not kept them), and the count of entries less those out and the withdrawals. Only
    an entry the file holds is out of force: a line may name one that is not there (by hand, or from elsewhere)."""
    named = {target.encode() for _, _, target in inv.lifts}
    decisions = present(src, {t for t in named if t.startswith(b"D-")})
    inv.out = {t for t in named if t in set(inv.ids)} | decisions
    kept = [i for i, ident in enumerate(inv.ids) if ident not in inv.out]
    dropped = len(inv.ids) - len(kept)
    withdrawals = sum(1 for _, ident, _ in inv.lifts if ident[0] == "W")
    inv.ids = [inv.ids[i] for i in kept]
    inv.lines = [inv.lines[i] for i in kept]
    inv.offsets = [inv.offsets[i] for i in kept]
    inv.dashes = max(len(inv.ids), inv.dashes - dropped - withdrawals - len(decisions))
    had = dict(zip(inv.head_at, inv.heads, strict=True))
    inv.head_at = inv.offsets[max(0, len(inv.offsets) - keep) :] if keep else []
    inv.heads = [had.get(off) or _head(src, off) for off in inv.head_at]


def present(src: Source, ids: set[bytes]) -> set[bytes]:
    """Those of ids whose entry's line the file holds (`- ID ` at a line's start), found by one more read of the file
    (only when a line takes a decision out of force: rare)."""
    if not ids:
        return set()
    keys = {ident: b"\n- " + ident + b" " for ident in ids}
    found = {ident for ident in ids if src.read(0, 11) == b"- " + ident + b" "}
    carry, off = b"", 0
    while off < src.size and len(found) < len(ids):
        chunk = src.read(off, CHUNK)
        if not chunk:
            break
        off += len(chunk)
        buf = carry + chunk
        found |= {ident for ident, key in keys.items() if key in buf}
        carry = buf[-12:]
    return found


def _head(src: Source, off: int) -> tuple[bytes, bool]:
    """The start of the line at off (at most HEAD bytes), and whether there is more."""
    line = src.read(off, HEAD + 1)
    stop = line.find(b"\n", 0, HEAD + 1)
    return line[: stop if stop >= 0 else HEAD], stop < 0 and src.size > off + HEAD


def fill_tail(inv: Invariants, src: Source, room: int, most: int) -> None:
    """The end of the file, from a line's start: grown until it holds about room bytes of lines that are not rejected
    approaches, or more than `most` rejected approaches (no brief could show a decision older than those: decisions
    give way before rejected approaches do), or 16 * room bytes, or the whole file."""
    n = min(src.size, room)
    offsets = inv.offsets
    while True:
        start = src.size - n
        data = src.read(start, n)
        if start > 0:  # from the first whole line
            cut = data.find(b"\n") + 1
            data, start = data[cut:], start + cut
        lo, hi = 0, len(offsets)  # the first rejected approach at or past start
        while lo < hi:
            mid = (lo + hi) // 2
            if offsets[mid] < start:
                lo = mid + 1
            else:
                hi = mid
        rejected = len(offsets) - lo
        lines = max(1, data.count(b"\n"))
        if start == 0 or rejected > most or n >= 16 * room or len(data) * (lines - rejected) >= room * lines:
            break
        n = min(src.size, 2 * n)
    inv.tail, inv.tail_start = data, start
