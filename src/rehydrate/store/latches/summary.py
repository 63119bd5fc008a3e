"""The summary of a scan of 10_invariants.md (store/latches/index.py), cached per clone (store/local/seen.py:
Seen.scan): made from a whole scan, extended by an append, and, for the bytes it was made for, standing in for the
scan while checked against the file where it points (only what a brief could show is read).
"""

from __future__ import annotations

from rehydrate.store.latches import lifts
from rehydrate.store.latches.binding import Lines
from rehydrate.store.latches.index import HEAD, Invariants, Source, fill_tail, rejected_starts

# "<binding> <dashes> <n> <first> <newest> o:<lifts>": 10's running binding when it was scanned
# (store/latches/binding.py: a sha256 over its lines, so that a summary is never used for other bytes), the lines
# starting with `- ` (as the scan counts them: less what is out of force), the number of rejected approaches in force,
# the first one's "offset.line", the newest ones' (at most SUMMARY_MOST) as "offset.line" then deltas, comma-separated,
# and the offsets of the lines that take an entry out of force (store/latches/lifts.py), comma-separated ("-": none),
# each followed by `!` when the entry it names is not in the file (it takes nothing out).
# Untrusted: it is used only for the binding it names and only if it is consistent (offsets and line numbers increasing,
# a line at least a byte, within the file and its line count), and what it points at is read and checked: each rejected
# approach a brief could show (and the first) must be one, at a line's start, its id read from the file; where two of
# them are read together, the lines between are counted and hold no other; the first, when it lies in the first 64 KiB
# (as it mostly does), has none before it and its line number is counted; the end of the file, read anyway for the
# newest decisions, must hold exactly the rejected approaches the summary places there, at its line numbers (counted
# back from the binding's line count). A summary that fails any of these is dropped and the file scanned whole. Each
# line the summary names as taking an entry out of force is read at its offset and must be one; a line it fails to name
# only shows more (an entry out of force as if in force, and one in the end of the file fails the check of the end).
# What is not read is taken on trust from the summary of these very bytes: the counts (rejected approaches, decisions)
# and where the older rejected approaches lie.

SUMMARY_MOST = 1024  # the most rejected approaches a summary names (a brief of 12,288 characters shows 1,024)
PEEK = 512  # bytes first read at a rejected approach's offset (its line is read on, up to HEAD, if longer)
_SPAN = 64 << 10  # the most read in one piece: rejected approaches that follow each other closely


def summary(inv: Invariants, bound: str, keep: int) -> str | None:
    """The scan's summary for the binding 10 had (None if it would name more than SUMMARY_MOST)."""
    k = min(len(inv.offsets), keep + 1)
    if k > SUMMARY_MOST or len(inv.lifts) > SUMMARY_MOST:
        return None
    first = f"{inv.offsets[0]}.{inv.lines[0]}" if inv.offsets else "-"
    newest = _pairs(inv.offsets[len(inv.offsets) - k :], inv.lines[len(inv.lines) - k :])
    return f"{bound} {inv.dashes} {len(inv.offsets)} {first} {newest} o:" + (
        ",".join(f"{at}{'' if target.encode() in inv.out else '!'}" for at, _, target in inv.lifts) or "-"
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
    if len(parts) not in (6, 7) or parts[0] != old or not parts[5].startswith("o:") or "!" in parts[5]:
        return None  # (a 7th part, annotate's, is dropped; a lift of an entry not there may name the line appended)
    was = Lines.parse(old)
    if was is None or was.add(line).text() != new or lifts.at_line(line[: lifts.PREFIX]) is not None:
        return None  # (a line that takes an entry out of force: scanned whole next time)
    try:
        dashes, n = int(parts[1]), int(parts[2])
        offsets, lines = _unpairs(parts[4])
    except ValueError:
        return None
    dashes += line.startswith(b"- ")
    first = parts[3]
    if rejected_starts(line + b"\n", len(line) + 1):
        at, number = was.size + (0 if was.ends else 1), was.n + 1
        offsets.append(at)
        lines.append(number)
        if len(offsets) > SUMMARY_MOST:
            del offsets[0], lines[0]
        first = first if n else f"{at}.{number}"
        n += 1
    return f"{new} {dashes} {n} {first} {_pairs(offsets, lines)} {parts[5]}"


def from_summary(src: Source, text: str, bound: str, lines_n: int, keep: int, tail_room: int) -> Invariants | None:
    """What scan_invariants would find, from the summary: only what a brief could show is read, and checked (see
    above). None if the summary is not for this binding (of lines_n lines), names too few, or does not hold."""
    parts = text.split(" ")[:6]  # (a 7th part: the entries' authors, annotate's)
    if len(parts) != 6 or parts[0] != bound or not parts[5].startswith("o:"):
        return None
    try:
        dashes, n = int(parts[1]), int(parts[2])
        offsets, lines = _unpairs(parts[4])
        first = _unpairs(parts[3])
        found = _read_lifts(src, parts[5][2:])
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
    inv.lifts, inv.out = [lift for lift, _ in found], {lift[2].encode() for lift, there in found if there}
    inv.offsets = at[:1] * (gap + 1) + at[1:]  # placeholders keep the indexes (and the order _tail bisects)
    inv.lines = numbers[:1] * (gap + 1) + numbers[1:]
    fill_tail(inv, src, tail_room, keep)
    if not _tail_holds(inv, lines_n, at, numbers, gap) or not _read_rejected(inv, src, at, numbers, keep, gap):
        return None
    if n and at[0] <= _SPAN:  # near the start (as it mostly is): none before the first, its line number counted
        head = src.read(0, at[0])
        if rejected_starts(head, len(head), inv.out) or head.count(b"\n") + 1 != numbers[0]:
            return None
    return inv


def _read_lifts(src: Source, text: str) -> list[tuple[lifts.Lift, bool]]:
    """The lines a summary names as taking an entry out of force, each read at its offset: one it must be, at a
    line's start, in file order (ValueError if not); with whether the entry it names is in the file (no `!`)."""
    out: list[tuple[lifts.Lift, bool]] = []
    last = -1
    for part in text.split(",") if text != "-" else ():
        digits = part.removesuffix("!")
        if not (digits.isascii() and digits.isdigit() and len(digits) < 16) or int(digits) <= last:
            raise ValueError(part)
        last = at = int(digits)
        head = src.read(at - 1, lifts.PREFIX + 1) if at else b"\n" + src.read(0, lifts.PREFIX)
        lift = lifts.at_line(head[1:]) if head[:1] == b"\n" else None
        if lift is None:
            raise ValueError(part)
        out.append(((at, *lift), digits == part))
    if len(out) > SUMMARY_MOST:
        raise ValueError(text[:40])
    return out


def _tail_holds(inv: Invariants, lines_n: int, at: list[int], numbers: list[int], gap: int) -> bool:
    """The end of the file holds exactly the rejected approaches the summary names there, at its line numbers (and
    the ones it does not name, between the first and the newest, only after the first)."""
    tail, base = inv.tail, inv.tail_start
    nl = lines_n - tail.count(b"\n") - (0 if not tail or tail.endswith(b"\n") else 1)
    found, last = [], 0
    for s in rejected_starts(tail, len(tail), inv.out):
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
        end = min(src.size, off + PEEK)
        if not base <= off or end > base + len(buf):  # not in what was read
            stop = off
            for j in range(i + 1, len(at)):  # the next ones, while each follows closely
                if at[j] - stop > PEEK or at[j] + PEEK - off > _SPAN:
                    break
                stop = at[j]
            base = off - (1 if off else 0)  # from the newline before it
            buf = src.read(base, min(src.size, stop + PEEK) - base)
        rel = off - base
        if off and buf[rel - 1 : rel] != b"\n":
            return False
        line_end = buf.find(b"\n", rel)
        if line_end < 0 and base + len(buf) < src.size:  # a long line: read on, up to HEAD
            line = src.read(off, HEAD + 1)
            line = line[: line.find(b"\n") + 1 or len(line)]
        else:
            line = buf[rel : line_end + 1 if line_end >= 0 else len(buf)]
        if rejected_starts(line, len(line), inv.out) != [0]:
            return False
        if i and base <= at[i - 1] and not (i == 1 and gap):  # read with the one before: lines between counted
            prev = at[i - 1] - base
            between = rejected_starts(buf[prev:rel], rel - prev, inv.out)
            if buf.count(b"\n", prev, rel) != numbers[i] - numbers[i - 1] or between[1:]:
                return False
        ids.append(line[2:10])
        if i >= len(at) - keep:
            stop = line.find(b"\n", 0, HEAD + 1)
            more = stop < 0 and src.size > off + HEAD
            heads.append((line[: stop if stop >= 0 else HEAD], more))
            inv.head_at.append(off)
    inv.ids = ids[:1] + [b""] * gap + ids[1:]
    inv.heads = heads
    return len(inv.ids) == len(inv.offsets)
