"""What the rejected approaches watch (their `guard`, a path glob or command pattern, and their `contains`, a text in
what is written or run): read when the check by effect builds its snapshot (effect.py, snapshot.py), which the guard
before a call reads (before.py; whether a call matches a watch is match.py's).

The watches are read from the state's records, not from the rendered lines of 10_invariants.md: each `reject`
record carries its `guard` and `contains`, and where a line was edited by hand, the recorded watch wins. The cost
follows what is shown, not what is stored: only the rejected approaches that 10_invariants.md shows with a watch
are looked up, by their ids, in the last LOOKBACK bytes of the logs, read at once, and only the lines that name one
are decoded (a `rotate` record, the first of its log, carries the lines recorded before it). A line that no record
within that reach carries (added by hand and not yet recorded, recorded further back, or in a log that cannot be
read) watches what it shows: the guard fails closed, never open.
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.harness.guard.match import Blind, Watch
from rehydrate.store import WORDS, layout, records
from rehydrate.store.latches import lifts
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# 10_invariants.md is scanned up to this size (store/latches/binding's bound); past it: fail closed
MAX_INVARIANTS = 1 << 30
SCAN_CHUNK = 1 << 20  # bytes of 10_invariants.md read at a time
MAX_LINE = 1 << 20  # a longer rejected line is not one rehydrate wrote (its fields are capped): fail closed
LOOKBACK = 4 << 20  # the most bytes of the logs one guard call reads, looking for records (on every tool call)


# ------------------------------------------------------------------------------------------------ the watches


def rejected(root: str) -> list[Watch]:
    """(path or command pattern, text to look for in what is written, the line) for each rejected approach in force
    that 10_invariants.md shows with a watch, read from its record; in the order the file shows them. Blind when the
    file cannot be read. The guard follows what the brief shows: a line that takes a watched approach out of force
    (store/latches/lifts.py) lifts its watch, unless a record carries that line's id with other content (a recorded
    line edited by hand into a lift: the record wins, as it does for a watch)."""
    shown, lifted = _shown(os.path.join(root, layout.INVARIANTS))
    if not shown:
        return []
    lifting = {ident: target for ident, target in lifted.items() if target in shown}
    found, recorded = _recorded(os.path.join(root, layout.WAL_DIR), set(shown) | set(lifting))
    gone = {target for ident, target in lifting.items() if recorded.get(ident, target) == target}
    out = []
    for ident, line in shown.items():
        if ident in gone:
            continue
        # no record within reach: what the line shows still watches (fail closed)
        guard, contains, recorded_line = found.get(ident) or (*layout.entry_guard(line), line)
        if guard or contains:
            out.append((guard, contains, recorded_line))
    return out


def _shown(path: str) -> tuple[dict[str, str], dict[str, str]]:
    """Each rejected approach's line that shows a watch, by id (the first line naming an id wins), and the id each
    line that takes an entry out of force names, by the line's own id; found by a scan of the file's bytes, chunk by
    chunk, for the watches' labels and the lifts' marks: the cost is one read of the file, whatever its size (up to
    MAX_INVARIANTS), and only the lines holding a label or a mark are decoded."""
    try:
        fd = fsio.open_read(path, WORDS)
    except RehydrateError as e:
        raise Blind(e.message) from None
    if fd is None:
        raise Blind(f"{layout.INVARIANTS} is missing")
    shown: dict[str, str] = {}
    lifted: dict[str, str] = {}
    try:
        carry = b""
        skipping = False  # inside a line too long to be an entry rehydrate wrote (not a rejected one): dropped
        offset = 0
        while True:
            chunk = os.read(fd, SCAN_CHUNK)
            if not chunk:
                break
            offset += len(chunk)
            if offset > MAX_INVARIANTS:
                raise Blind(f"{layout.INVARIANTS} is more than {MAX_INVARIANTS:,} bytes")
            if skipping:
                cut = chunk.find(b"\n")
                if cut < 0:
                    continue
                chunk, skipping = chunk[cut + 1 :], False
            buf = carry + chunk if carry else chunk
            end = buf.rfind(b"\n") + 1
            _labelled(buf, end, shown)
            _lifts(buf, end, lifted)
            carry = buf[end:]
            if len(carry) > MAX_LINE:
                if carry.startswith(b"- R-"):
                    raise Blind(f"{layout.INVARIANTS} holds a rejected line longer than {MAX_LINE:,} bytes")
                carry, skipping = b"", True
    except OSError as e:
        raise Blind(f"{layout.INVARIANTS} cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if carry and not skipping:
        _labelled(carry, len(carry), shown)
        _lifts(carry, len(carry), lifted)
    return shown, lifted


def _lifts(buf: bytes, end: int, lifted: dict[str, str]) -> None:
    """The lines in buf[:end] that take an entry out of force: the id each names, by the line's own id."""
    if b"- W-" in buf or lifts.SUPERSEDING in buf:  # (mostly neither)
        for _, ident, target in lifts.found(buf, end):
            lifted.setdefault(ident, target)


def _labelled(buf: bytes, end: int, shown: dict[str, str]) -> None:
    """The rejected approaches' lines in buf[:end] (buf starts a line, end a line's end or the end of the file) that
    hold a watch's label, by id: bytes.find for the labels, so that a view of decisions is never decoded."""
    lines: dict[int, bytes] = {}  # by the line's offset: the file's order, whichever label was found first
    for label in (layout.GUARD_LABEL.encode(), layout.CONTAINS_LABEL.encode()):
        at = buf.find(label, 0, end)
        while at >= 0:
            start = buf.rfind(b"\n", 0, at) + 1
            stop = buf.find(b"\n", at, end)
            stop = end if stop < 0 else stop
            if buf.startswith(b"- R-", start):
                lines[start] = buf[start:stop]
            at = buf.find(label, stop, end)
    for start in sorted(lines):
        line = lines[start].decode("utf-8", "replace")
        ident = layout.entry_id(line)
        if ident is not None:
            shown.setdefault(ident, line)


def _recorded(wal_dir: str, wanted: set[str]) -> tuple[dict[str, Watch], dict[str, str]]:
    """The watches of the rejected approaches named in wanted, and the id each line named in wanted takes out of
    force as its record says ("" for none), from their records in the actors' logs, as far as LOOKBACK bytes of
    them reach."""
    found: dict[str, Watch] = {}
    lifted: dict[str, str] = {}
    try:
        logs = sorted(n for n in os.listdir(wal_dir) if n.endswith(".jsonl"))
    except OSError:
        logs = []
    room = LOOKBACK
    for name in logs:
        if not wanted - set(found) - set(lifted) or room <= 0:
            break
        room -= _read_log(os.path.join(wal_dir, name), wanted, found, lifted, room)
    return found, lifted


def _read_log(path: str, wanted: set[str], found: dict[str, Watch], lifted: dict[str, str], room: int) -> int:
    """Read the last `room` bytes of one log, in one read, and decode (strictly) only its lines that name a wanted
    id, newest first, until each is found; the bytes read. A log that cannot be read, a line that does not decode
    (torn, damaged, a conflict marker's) or a record cut off by the reach gives nothing."""
    try:
        fd = fsio.open_read(path, WORDS)
    except RehydrateError:
        return 0
    if fd is None:
        return 0
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - room)
        data = os.pread(fd, size - start, start)
    except OSError:
        return 0
    finally:
        os.close(fd)
    lines = data.split(b"\n")[1 if start else 0 :]  # the first line read is cut unless the log starts there
    keys = [ident.encode() for ident in wanted]
    for line in reversed(lines):
        if not any(key in line for key in keys):
            continue
        try:
            _take(wal.decode(line), wanted, found, lifted)
        except wal.BadRecord:
            continue
        if not wanted - set(found) - set(lifted):
            break
    return len(data)


def _take(rec: dict[str, Any], wanted: set[str], found: dict[str, Watch], lifted: dict[str, str]) -> None:
    """What a record carries: a reject's own watch, an entry's own lift (what it supersedes, what a withdrawal
    withdraws); the lines of a rotate or an adoption, as recorded."""
    data, op = records.data_of(rec), records.op_of(rec)
    ident = data.get("id")
    if op.appends and ident in wanted and ident not in lifted and isinstance(data.get("line"), str):
        target = data.get("text") if op is records.WITHDRAW else data.get("supersedes")
        lifted[ident] = target if isinstance(target, str) else ""
    if op is records.REJECT and ident in wanted and ident not in found and isinstance(data.get("line"), str):
        guard, contains = data.get("guard"), data.get("contains")
        found[ident] = (
            guard if isinstance(guard, str) and guard else None,
            contains if isinstance(contains, str) and contains else None,
            data["line"],
        )
        return
    lines: list[object] = []
    if op is records.ROTATE and isinstance(data.get("lines"), list):
        lines = data["lines"] + (data["adopted"] if isinstance(data.get("adopted"), list) else [])
    elif op is records.INVARIANT and data.get("adopted") and isinstance(data.get("line"), str):
        lines = [data["line"]]
    for line in lines:
        named = layout.entry_id(line) if isinstance(line, str) else None
        if named not in wanted:
            continue
        assert isinstance(line, str) and named is not None
        if named not in found:
            found[named] = (*layout.entry_guard(line), line)  # a line as it was recorded, with its watch on it
        if named not in lifted:
            lifted[named] = layout.entry_lifts(line) or ""
