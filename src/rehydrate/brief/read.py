"""Reading the views for the brief, bounded by what it can show, whatever their size.

10_invariants.md: every rejected approach is found by a scan of its bytes for the lines' prefix (`- R-` and six hex
digits), streamed in chunks and never decoded as text; each one's id, line number and offset are noted, and the start
of the newest few kept (only those could be shown). The newest decisions come from a bounded read of its end.
20_handoff.md (and any view too long to show whole): its start and its end, each a bounded read.

A view reconciliation already read (`snap.seen`) is read from memory the same way; any other, from the file
(never following a link, never blocking: fs/read.py).
"""

from __future__ import annotations

import os

from rehydrate.fs import read as fsread
from rehydrate.store import WORDS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State

CHUNK = 1 << 20  # bytes read at a time by the scan
HEAD = 4 * 1200 + 64  # bytes kept of each rejected approach's line: its longest shown form (draft.REJECTED_CAP)
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
    """What the brief reads of 10_invariants.md: every rejected approach (id, line number, offset; the start of the
    newest `keep`), how many lines start with `- `, and the end of the file."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.ids: list[bytes] = []  # every rejected approach's id (ASCII), in file order
        self.lines: list[int] = []  # its line number (from 1)
        self.offsets: list[int] = []  # its offset in the file
        self.heads: list[tuple[bytes, bool]] = []  # the newest ones: the start of the line, whether there is more
        self.dashes = 0  # lines starting with `- `, rejected approaches included
        self.tail = b""  # the end of the file, from a line's start (whole lines)
        self.tail_start = 0  # its offset


_HEX = frozenset(b"0123456789abcdef")


def _starts(buf: bytes, end: int) -> list[int]:
    """The offsets of the lines in buf[:end] (buf starts a line) that start a rejected approach: `- R-`, six
    lowercase hex digits and a space (the first line may run past end). Bytes methods: no `re` on the hook path."""

    def rejected(at: int, stop: int) -> bool:
        return at + 11 <= stop and buf[at + 10] == 32 and all(c in _HEX for c in buf[at + 4 : at + 10])

    out = [0] if buf.startswith(b"- R-") and rejected(0, len(buf)) else []
    i = buf.find(b"\n- R-", 0, end)
    while i >= 0:
        if rejected(i + 1, end):
            out.append(i + 1)
        i = buf.find(b"\n- R-", i + 1, end)
    return out


def _lines(inv: Invariants, buf: bytes, end: int, nl: int, base: int, keep: int, cut: bool = False) -> None:
    """The whole lines buf[:end] (buf starts a line; end 0: buf is one unfinished line, which goes on past buf if
    cut), the first being line nl + 1: their rejected approaches noted, the start of the newest `keep` kept."""
    inv.dashes += buf.count(b"\n- ", 0, end) + buf.startswith(b"- ")
    starts = _starts(buf, end)
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
    if len(inv.heads) > 2 * keep:
        del inv.heads[: len(inv.heads) - keep]


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
    del inv.heads[: max(0, len(inv.heads) - keep)]
    _tail(inv, src, tail_room, keep)
    return inv


def _tail(inv: Invariants, src: Source, room: int, most: int) -> None:
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


# --- the scan's summary, cached per clone (store/local/seen.py: Seen.scan) --------------------------------------------
#
# "<binding> <dashes> <n> <first> <newest>": 10's running binding when it was scanned (store/latches/binding.py: a
# sha256 over its lines, so that a summary is never used for other bytes), the lines starting with `- `, the number of
# rejected approaches, the first one's "offset.line", and the newest ones' (at most SUMMARY_MOST) as "offset.line"
# then deltas, comma-separated. Untrusted: it is used only for the binding it names and only if it is consistent
# (offsets and line numbers increasing, a line at least a byte, within the file and its line count), and what it
# points at is read and checked: each rejected approach a brief could show (and the first) must be one, at a line's
# start, its id read from the file; where two of them are read together, the lines between are counted and hold no
# other; the first, when it lies in the first 64 KiB (as it mostly does), has none before it and its line number is
# counted; the end of the file, read anyway for the newest decisions, must hold exactly the rejected approaches the
# summary places there, at its line numbers (counted back from the binding's line count). A summary that fails any of
# these is dropped and the file scanned whole. What is not read is taken on trust from the summary of these very
# bytes: the counts (rejected approaches, decisions) and where the older rejected approaches lie.

SUMMARY_MOST = 1024  # the most rejected approaches a summary names (a brief of 12,288 characters shows 1,024)
_PEEK = 512  # bytes first read at a rejected approach's offset (its line is read on, up to HEAD, if longer)
_SPAN = 64 << 10  # the most read in one piece: rejected approaches that follow each other closely


def summary(inv: Invariants, bound: str, keep: int) -> str | None:
    """The scan's summary for the binding 10 had (None if it would name more than SUMMARY_MOST)."""
    k = min(len(inv.offsets), keep + 1)
    if k > SUMMARY_MOST:
        return None
    first = f"{inv.offsets[0]}.{inv.lines[0]}" if inv.offsets else "-"
    return f"{bound} {inv.dashes} {len(inv.offsets)} {first} " + _pairs(
        inv.offsets[len(inv.offsets) - k :], inv.lines[len(inv.lines) - k :]
    )


def _pairs(offsets: list[int], lines: list[int]) -> str:
    out, o, n = [], 0, 0
    for off, line in zip(offsets, lines, strict=True):
        out.append(f"{off - o}.{line - n}")
        o, n = off, line
    return ",".join(out) or "-"


def _unpairs(text: str) -> tuple[list[int], list[int]]:
    """Offsets and line numbers as _pairs writes them: each line at least a byte after the one before (ValueError
    if not)."""
    offsets: list[int] = []
    lines: list[int] = []
    o = n = 0
    for pair in text.split(",") if text != "-" else ():
        a, _, b = pair.partition(".")
        if not (a.isascii() and a.isdigit() and b.isascii() and b.isdigit() and len(a) < 16 and len(b) < 16):
            raise ValueError(pair)
        da, db = int(a), int(b)
        if (offsets or n) and not 1 <= db <= da:
            raise ValueError(pair)
        o, n = o + da, n + db
        if n < 1 or n - 1 > o:
            raise ValueError(pair)
        offsets.append(o)
        lines.append(n)
    return offsets, lines


def extend_summary(text: str, old: str, new: str, line: bytes) -> str | None:
    """The summary after an append of `line` took 10 from binding `old` to `new` (None: dropped, rescanned later)."""
    parts = text.split(" ")
    if len(parts) not in (5, 6) or parts[0] != old:  # (the entries' authors, a 6th part, are dropped: annotate)
        return None
    from rehydrate.store.latches.binding import Lines

    was = Lines.parse(old)
    if was is None or was.add(line).text() != new:
        return None
    try:
        dashes, n = int(parts[1]), int(parts[2])
        offsets, lines = _unpairs(parts[4])
    except ValueError:
        return None
    dashes += line.startswith(b"- ")
    first = parts[3]
    if _starts(line + b"\n", len(line) + 1):
        at, number = was.size + (0 if was.ends else 1), was.n + 1
        offsets.append(at)
        lines.append(number)
        if len(offsets) > SUMMARY_MOST:
            del offsets[0], lines[0]
        first = first if n else f"{at}.{number}"
        n += 1
    return f"{new} {dashes} {n} {first} {_pairs(offsets, lines)}"


def from_summary(src: Source, text: str, bound: str, lines_n: int, keep: int, tail_room: int) -> Invariants | None:
    """What scan_invariants would find, from the summary: only what a brief could show is read, and checked (see
    above). None if the summary is not for this binding (of lines_n lines), names too few, or does not hold."""
    parts = text.split(" ")[:5]  # (a 6th part: the entries' authors, annotate's)
    if len(parts) != 5 or parts[0] != bound:
        return None
    try:
        dashes, n = int(parts[1]), int(parts[2])
        offsets, lines = _unpairs(parts[4])
        first = _unpairs(parts[3])
    except ValueError:
        return None
    need = min(n, keep + 1)
    if len(offsets) < need or len(first[0]) != (1 if n else 0) or not 0 <= n <= dashes <= lines_n:
        return None
    at, numbers, gap = offsets[len(offsets) - need :], lines[len(lines) - need :], max(0, n - need - 1)
    if n > need:  # the first, then (after `gap` others) the newest: each line at least a byte
        at, numbers = [first[0][0], *at], [first[1][0], *numbers]
        if not 1 <= numbers[1] - numbers[0] <= at[1] - at[0]:
            return None
    elif n and (first[0][0], first[1][0]) != (at[0], numbers[0]):
        return None
    if n and (at[-1] >= src.size or numbers[-1] > lines_n):
        return None
    inv = Invariants(src.size)
    inv.dashes = dashes
    inv.offsets = at[:1] * (gap + 1) + at[1:]  # placeholders keep the indexes (and the order _tail bisects)
    inv.lines = numbers[:1] * (gap + 1) + numbers[1:]
    _tail(inv, src, tail_room, keep)
    if not _tail_holds(inv, lines_n, at, numbers, gap) or not _read_rejected(inv, src, at, numbers, keep, gap):
        return None
    if n and at[0] <= _SPAN:  # near the start (as it mostly is): none before the first, its line number counted
        head = src.read(0, at[0])
        if _starts(head, len(head)) or head.count(b"\n") + 1 != numbers[0]:
            return None
    return inv


def _tail_holds(inv: Invariants, lines_n: int, at: list[int], numbers: list[int], gap: int) -> bool:
    """The end of the file holds exactly the rejected approaches the summary names there, at its line numbers (and
    the ones it does not name, between the first and the newest, only after the first)."""
    tail, base = inv.tail, inv.tail_start
    nl = lines_n - tail.count(b"\n") - (0 if not tail or tail.endswith(b"\n") else 1)
    found, last = [], 0
    for s in _starts(tail, len(tail)):
        nl += tail.count(b"\n", last, s)
        last = s
        found.append((base + s, nl + 1))
    named = list(zip(at, numbers, strict=True))
    if not gap:  # every one from the first on is named
        return found == [x for x in named if x[0] >= base]
    lo = named[1][0]  # the first, then `gap` not named, then the newest from lo on
    older = [x for x in found if x[0] < lo]
    if older and older[0][0] <= at[0]:  # the first in the end too: as named
        if older[0] != named[0]:
            return False
        older = older[1:]
    if len(older) > gap or (older and older[0][0] <= at[0]):
        return False
    return [x for x in found if x[0] >= lo] == [x for x in named[1:] if x[0] >= base]


def _read_rejected(inv: Invariants, src: Source, at: list[int], numbers: list[int], keep: int, gap: int) -> bool:
    """Each rejected approach the summary names (the first, the newest a brief could show) read at its offset: one
    it must be, at a line's start; its id noted, the start of the newest `keep` kept. Read together where close."""
    ids: list[bytes] = []
    heads: list[tuple[bytes, bool]] = []
    buf, base = b"", 0
    for i, off in enumerate(at):
        end = min(src.size, off + _PEEK)
        if not base <= off or end > base + len(buf):  # not in what was read
            stop = off
            for j in range(i + 1, len(at)):  # the next ones, while each follows closely
                if at[j] - stop > _PEEK or at[j] + _PEEK - off > _SPAN:
                    break
                stop = at[j]
            base = off - (1 if off else 0)  # from the newline before it
            buf = src.read(base, min(src.size, stop + _PEEK) - base)
        rel = off - base
        if off and buf[rel - 1 : rel] != b"\n":
            return False
        line_end = buf.find(b"\n", rel)
        if line_end < 0 and base + len(buf) < src.size:  # a long line: read on, up to HEAD
            line = src.read(off, HEAD + 1)
            line = line[: line.find(b"\n") + 1 or len(line)]
        else:
            line = buf[rel : line_end + 1 if line_end >= 0 else len(buf)]
        if _starts(line, len(line)) != [0]:
            return False
        if i and base <= at[i - 1] and not (i == 1 and gap):  # read with the one before: lines between counted
            prev = at[i - 1] - base
            if buf.count(b"\n", prev, rel) != numbers[i] - numbers[i - 1] or _starts(buf[prev:rel], rel - prev)[1:]:
                return False
        ids.append(line[2:10])
        if i >= len(at) - keep:
            stop = line.find(b"\n", 0, HEAD + 1)
            more = stop < 0 and src.size > off + HEAD
            heads.append((line[: stop if stop >= 0 else HEAD], more))
    inv.ids = ids[:1] + [b""] * gap + ids[1:]
    inv.heads = heads
    return len(inv.ids) == len(inv.offsets)


# --- lines of work merged, and the entries' authors ------------------------------------------------------------------
#
# The entries' authors are cached as a 6th part of the scan summary (the binding it names is the first part): the
# newest AUTHORS_MOST entries of 10 (those a brief could show) grouped by the actor whose record binds each,
# "actor=ID,ID;actor=ID", found once by binding every actor's recorded lines (which reads every log), then used while
# 10 is as bound. Untrusted: an actor's name and an id are used only if well formed.

AUTHORS_MOST = 1024
MERGED_MOST = 4  # the lines of work a brief names one by one


def annotate(inp: object, state: State, snap: Snapshot) -> None:
    """The brief's input given what the views do not say: the lines of work merged and not yet chosen between
    (snap.merged, WP1's), and, when the state has more than one actor, the author of each entry of 10 it may show."""
    merged = getattr(snap, "merged", None)
    setattr(inp, "merged", merged if isinstance(merged, list) else None)  # noqa: B010 (draft.BriefInput's)
    if len(state.actor_names()) > 1:
        setattr(inp, "authors", entry_authors(state, snap))  # noqa: B010


def entry_authors(state: State, snap: Snapshot) -> dict[str, str]:
    """Entry id -> actor for the newest entries of 10 (from the cache while 10 is as bound; else found and kept)."""
    bound = snap.inv.text() if snap.inv is not None and snap.inv_ok and not snap.repaired else None
    parts = snap.cache.scan.split(" ") if bound is not None else []
    if len(parts) == 6 and parts[0] == bound:
        return parse_authors(parts[5])
    from rehydrate.fs import write as fsio
    from rehydrate.store.latches.binding import MAX_INVARIANTS
    from rehydrate.store.latches.latch import lines, recorded_lines
    from rehydrate.store.latches.order import line_authors
    from rehydrate.store.layout import INVARIANTS, entry_id, is_actor

    data = fsio.read_bytes(state.path(INVARIANTS), MAX_INVARIANTS, WORDS) or b""
    file_lines = lines(data)
    who = line_authors(file_lines, recorded_lines(state))
    by: dict[str, list[str]] = {}
    n = 0
    for text, actor in zip(reversed(file_lines), reversed(who), strict=True):
        ident = entry_id(text) if text.startswith("- ") else None
        if ident is None:
            continue
        n += 1
        if n > AUTHORS_MOST:
            break
        if actor is not None and is_actor(actor):
            by.setdefault(actor, []).append(ident)
    field = ";".join(f"{a}={','.join(ids)}" for a, ids in sorted(by.items())) or "-"
    if len(parts) >= 5 and parts[0] == bound:
        snap.cache.remember_scan(" ".join(parts[:5]) + " " + field)
    return parse_authors(field)


def parse_authors(field: str) -> dict[str, str]:
    """annotate's cache part back (untrusted: a malformed name or id is left out)."""
    from rehydrate.store.layout import entry_id, is_actor

    out: dict[str, str] = {}
    for group in field.split(";") if field != "-" else ():
        actor, _, ids = group.partition("=")
        if not is_actor(actor):
            continue
        for ident in ids.split(","):
            if entry_id(f"- {ident} ") == ident:
                out[ident] = actor
    return out
