"""The latches: 00_goal.md is written once, 10_invariants.md only grows.

00 is bound by its sha256 in every record; a rewritten goal is a latch violation. 10 is bound line by line: each
`invariant` and `reject` record carries the exact line it appended, and every line ever recorded, by any actor, must
still be present verbatim and in the order its actor recorded it (a line-wise git merge of two actors' appends keeps
that true). Lines that no record carries were added by hand: reported, and adopted (recorded) by the next write.
"""

from __future__ import annotations

import os

from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, actors, records
from rehydrate.store.latches.binding import MAX_INVARIANTS, Lines, is_bound, lines_of
from rehydrate.store.latches.order import (
    DUPLICATE,
    Bound,
    Collector,
    actor_lines,
    bound_lines,
    check_lines,
    minted_as,
)
from rehydrate.store.layout import (
    ARCHIVE_DIR,
    GOAL,
    HANDOFF,
    INVARIANTS,
    NEXT,
    TASKS,
    entry_id,
)
from rehydrate.store.local.seen import file_fingerprint
from rehydrate.store.views import conflict_lines, last_producer, read_view, render_goal
from rehydrate.store.wal import digest
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.text import quoted

__all__ = ["DUPLICATE", "Bound", "actor_lines", "bound_lines", "check_lines", "minted_as"]  # (lineorder's)

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def _complete_lines(data: bytes) -> list[bytes]:
    """The lines that end with a newline (a torn last line is not one of them)."""
    return data.split(b"\n")[:-1]


def _first_difference(a: list[str], b: list[str]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i + 1
    return min(len(a), len(b)) + 1


# Recorded lines that a pass over a log already read (verify's one pass, reconcile's whole pass), by the log's path,
# with the log's identity (seen.fingerprint) as it was read: used while the log is unchanged, instead of reading it
# again. Whoever puts an entry takes it out when its command is done.
READ: dict[str, tuple[str, Collector]] = {}


def recorded_lines(state: State) -> dict[str, list[Bound]]:
    """Every actor's recorded lines of 10_invariants.md, each in its actor's order (reads every log)."""
    out: dict[str, list[Bound]] = {}
    for a in state.actor_names():
        path = state.log_path(a)
        known = READ.get(path)
        if known is not None and known[0] == file_fingerprint(path):
            out[a] = list(known[1].lines())
        else:
            out[a] = actor_lines(wallines.records(path))
    return out


# --- 00_goal.md ---------------------------------------------------------------------------------------------------


def goal_data(state: State) -> dict[str, Any]:
    """The goal as bound by the first record of this actor's log (init, or rotate after an archive)."""
    first = wallines.first_record(state.wal_path, state.wal_rel)
    if records.op_of(first) is records.JOIN:  # an actor that joined: the goal as the actor that wrote init bound it
        return actors.goal_data(state)
    data = first["data"]
    if records.op_of(first) is records.ROTATE:
        data = data["goal"]
    return {"goal": data["goal"], "done_when": data.get("done_when")}


def goal_differs(state: State, snap: Snapshot, data: bytes | None, repair: bool) -> None:
    """00_goal.md, which differs from what the WAL's last record binds: missing, it is redone; changed, it is a latch
    violation (never overwritten)."""
    goal = goal_data(state)
    text = render_goal(goal["goal"], goal.get("done_when")).encode()
    if data is None:
        if repair:
            fsio.replace(state.path(GOAL), text, "view.replace", words=WORDS)
            snap.repaired.append(f"redid {state.rel(GOAL)} from the WAL (it was missing)")
        else:
            snap.problems.append(Problem("view-lags", state.rel(GOAL), None, "missing; redo it from the WAL", True))
        return
    n = _first_difference(lines(data), lines(text))
    why = f"latch violation: the goal is write-once but line {n} differs from the goal recorded in the WAL"
    snap.problems.append(Problem("latch-violation", state.rel(GOAL), n, why))


# --- 10_invariants.md ---------------------------------------------------------------------------------------------


def inv_lags(data: bytes, line: str) -> bool:
    """10_invariants.md lags its last record (a crash between the two writes), as opposed to a hand edit of it:
    the line is not there, no line carries its id, and what ends the file is at most a torn prefix of it."""
    encoded = line.encode()
    complete = _complete_lines(data)
    if encoded in complete:
        return False
    ident = entry_id(line)
    if ident and any(entry_id(t.decode("utf-8", "replace")) == ident for t in complete):
        return False
    partial = data[data.rfind(b"\n") + 1 :]
    return not partial or encoded.startswith(partial)


def _tail(path: str, size: int) -> tuple[int, bytes]:
    """(the file's size, its last `size` bytes at most); (0, b"") if it is absent."""
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return 0, b""
    try:
        total = os.fstat(fd).st_size
        start = max(0, total - size)
        return total, os.pread(fd, total - start, start)
    finally:
        os.close(fd)


def append_line(state: State, line: str, *, redo: bool) -> bool:
    """Append a recorded line to 10_invariants.md; on redo, unless it is its last line. A torn prefix of it is cut.
    Only the file's tail is read (as many bytes as the line holds, and two): never the whole file."""
    path = state.path(INVARIANTS)
    encoded = line.encode()
    size, end = _tail(path, len(encoded) + 2)
    if redo and (end.endswith(b"\n" + encoded + b"\n") or (size == len(end) and end == encoded + b"\n")):
        return False
    partial = end[end.rfind(b"\n") + 1 :]  # longer than the line when no newline was read: not a prefix of it
    if partial and encoded.startswith(partial):  # our own torn append
        fsio.truncate(path, size - len(partial), "view.truncate", WORDS)
        partial = b""
    sep = b"\n" if partial else b""
    fsio.append(path, sep + encoded + b"\n", "view.append", create=True, words=WORDS)
    return True


def _rebuild(state: State, snap: Snapshot, recorded: dict[str, list[Bound]], repair: bool) -> bytes | None:
    """The file is missing: rebuild it from the WAL (None: reported)."""
    rel = state.rel(INVARIANTS)
    if not repair:
        snap.problems.append(Problem("view-lags", rel, None, "missing; rebuild it from the WAL", True))
        snap.inv_ok = False
        return None
    first = wallines.first_record(state.wal_path, state.wal_rel)
    header = first["data"]["header"] if records.op_of(first) is records.INIT else ""
    skip = len(bound_lines(first)) if header else 0
    text = header + "".join(
        ln + "\n" for a in sorted(recorded) for ln, _ in recorded[a][skip if a == state.actor else 0 :]
    )
    fsio.replace(state.path(INVARIANTS), text.encode(), "view.replace", words=WORDS)
    snap.repaired.append(f"rebuilt the missing {rel} from the WAL")
    return text.encode()


def _format_problems(rel: str, data: bytes, conflicts: set[int], snap: Snapshot) -> tuple[list[str], bool]:
    """The file's lines, and whether it is in a state no write should build on (CRLF, conflict markers)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        snap.problems.append(Problem("invalid-utf8", rel, data[: e.start].count(b"\n") + 1, "invalid UTF-8"))
    file_lines = lines(data)
    blocked = False
    if b"\r\n" in data:
        n = data[: data.index(b"\r\n")].count(b"\n") + 1
        why = (
            "CRLF line endings (a git autocrlf conversion?); rehydrate writes LF: restore the file "
            "with LF endings (state/.gitattributes holds `* -text`)"
        )
        snap.problems.append(Problem("line-endings", rel, n, why))
        file_lines = [ln.removesuffix("\r") for ln in file_lines]
        blocked = True
    for n in sorted(conflicts):
        if n <= len(file_lines):
            why = (
                "an unresolved git merge conflict: `rehydrate resolve` keeps both sides' lines (or delete only "
                f"the marker lines, then `git add {rel}`); or `git merge --abort`. Nothing is written to the file "
                "until then"
            )
            snap.problems.append(Problem("merge-conflict", rel, n, why))
            blocked = True
    return file_lines, blocked


def reconcile_invariants(state: State, snap: Snapshot, repair: bool, full: bool = False) -> None:
    """10_invariants.md against every actor's recorded lines (full: whatever its hash says)."""
    check_invariants(state, snap, read_view(state, INVARIANTS, snap.problems, None, MAX_INVARIANTS), repair, full)


def check_invariants(state: State, snap: Snapshot, data: bytes | None, repair: bool, full: bool = False) -> None:
    """10_invariants.md, as read, against every actor's recorded lines (full: whatever its hash says)."""
    rel = state.rel(INVARIANTS)
    if data == b"" and any(p.file == rel for p in snap.problems):
        snap.inv_ok = False  # already named as unsafe or unreadable
        return
    conflicts = set(conflict_lines(data, paired=False))  # an unfinished merge: nothing is redone in the file
    done, data = _settle(state, snap, data, conflicts, repair, full)
    if done:
        return
    recorded = recorded_lines(state)
    if data is None:
        data = _rebuild(state, snap, recorded, repair)
        if data is None:
            return
    _bind(state, snap, data, conflicts, recorded, repair)


def _lags(snap: Snapshot, data: bytes | None) -> bool:
    last = snap.last
    return records.op_of(last).appends and data is not None and inv_lags(data, last["data"]["line"])


def _settle(
    state: State, snap: Snapshot, data: bytes | None, conflicts: set[int], repair: bool, full: bool
) -> tuple[bool, bytes | None]:
    """(whether nothing more is to be checked, the file's bytes): it matches the WAL's last record, or lagged it
    (a crash between the two writes) and was redone to match, or, without repair, is reported as lagging."""
    expected = snap.last["views"].get(INVARIANTS)
    found = None if full else is_bound(data, expected)
    if found is not None:
        snap.set_invariants(found)
        return True, data
    if conflicts or not _lags(snap, data):
        return False, data
    if not repair:
        snap.problems.append(Problem("view-lags", state.rel(INVARIANTS), None, "lags the WAL's last record", True))
        snap.inv_ok = False
        return True, data
    append_line(state, snap.last["data"]["line"], redo=True)
    snap.repaired.append(f"redid {state.rel(INVARIANTS)} from the WAL (its last line was missing)")
    data = fsio.read_bytes(state.path(INVARIANTS), MAX_INVARIANTS, WORDS)
    found = None if full else is_bound(data, expected)
    if found is not None:
        snap.set_invariants(found)
        return True, data
    return False, data


def _bind(
    state: State, snap: Snapshot, data: bytes, conflicts: set[int], recorded: dict[str, list[Bound]], repair: bool
) -> None:
    """Every recorded line against the file: violations named; lines added by hand adopted or reported; exact
    copies of recorded lines named (the next write removes them: dedupe)."""
    rel = state.rel(INVARIANTS)
    file_lines, blocked = _format_problems(rel, data, conflicts, snap)
    found, unrecorded = check_lines(file_lines, recorded, lambda ident, line: _minted(state, ident, line))
    violations = [v for v in found if v[0] != DUPLICATE]
    for code, n, message in found:
        snap.problems.append(Problem(code, rel, n, message))
    snap.inv_ok = not violations and not blocked
    snap.set_invariants(lines_of(data))
    hand = [(n, file_lines[n - 1]) for n in unrecorded if n not in conflicts]
    adoptable = repair and snap.inv_ok
    snap.unrecorded = hand if adoptable else []
    if hand and not adoptable:
        why = "the next write records it" if snap.inv_ok else "recorded once the violations above are fixed"
        for n, _ in hand:
            snap.problems.append(
                Problem("unrecorded-line", rel, n, f"added by hand, not through the WAL; {why}", snap.inv_ok)
            )


def _minted(state: State, ident: str, line: str) -> bool:
    """Whether a line that carries a recorded entry's id was minted under it (a collision of the 24-bit ids: another
    entry, written by the recorded one's actor at its very time), rather than an edit of it. The recorded entry's
    record is looked for in every log (this is asked only for such a line: rare); an entry whose time cannot be
    confirmed (its own text does not give its id with its record's time) counts as edited."""
    for a in state.actor_names():
        for rec in wallines.records(state.log_path(a)):
            data = records.data_of(rec)
            if not records.op_of(rec).appends or data.get("id") != ident:
                continue
            actor, ts, text = rec.get("actor"), rec.get("ts"), data.get("text")
            if not (isinstance(actor, str) and isinstance(ts, str) and isinstance(text, str)):
                continue
            if wal.sha256(f"{actor}\0{ts}\0{text}".encode())[:6] == ident[2:]:
                return minted_as(actor, ts, ident, line, text)
    return False


def dedupe(state: State, snap: Snapshot) -> None:
    """A write's first step after a merge: the exact copies of recorded lines (duplicate-line) removed from
    10_invariants.md (temp + replace), each named in `repaired`; the file's new binding is what the write binds.
    Only a line that is still an exact copy of another line of the file is removed."""
    rel = state.rel(INVARIANTS)
    dups = {p.line for p in snap.problems if p.code == DUPLICATE and p.file == rel and p.line}
    data = fsio.read_bytes(state.path(INVARIANTS), MAX_INVARIANTS, WORDS) if dups else None
    if not data:
        return
    parts = data.split(b"\n")
    counts: dict[bytes, int] = {}
    for part in parts:
        counts[part] = counts.get(part, 0) + 1
    keep: list[bytes] = []
    gone: list[tuple[int, bytes]] = []
    for n, part in enumerate(parts, 1):
        if n in dups and n < len(parts) and counts[part] > 1:
            counts[part] -= 1
            gone.append((n, part))
        else:
            keep.append(part)
    if not gone:
        return
    new = b"\n".join(keep)
    fsio.replace(state.path(INVARIANTS), new, "view.replace", words=WORDS)
    snap.cache.forget(INVARIANTS)
    snap.seen.pop(INVARIANTS, None)
    snap.set_invariants(lines_of(new))
    snap.problems = [p for p in snap.problems if not (p.code == DUPLICATE and p.file == rel)]
    for n, part in gone:
        text = part.decode("utf-8", "replace")
        snap.repaired.append(
            f"removed line {n} of {rel}, an exact copy of a recorded line (a merge kept both): " + quoted(text, 80)
        )


def adopt(state: State, snap: Snapshot) -> None:
    """Record the lines added by hand that reconciliation found, each as an adopted `invariant` record, in one batch
    (one write, one fsync; each record chained to the one before). Each record of the batch but the last binds 10
    only up to its own line: if a crash tears the batch, the last record left does not match the file, so the next
    command binds the file line by line again and adopts the rest."""
    hand = snap.unrecorded
    upto = _prefixes(fsio.read_bytes(state.path(INVARIANTS), MAX_INVARIANTS, WORDS) or b"", {n for n, _ in hand})
    items: list[tuple[dict[str, Any], dict[str, str]]] = []
    for i, (n, text) in enumerate(hand):
        data = {"line": text, "line_sha256": wal.sha256(text.encode()), "adopted": True}
        items.append((data, {INVARIANTS: upto[n]} if i < len(hand) - 1 and n in upto else {}))
    if items:
        state.append_many(snap, "invariant", items)
    for n, text in hand:
        snap.repaired.append(f"recorded line {n} of {state.rel(INVARIANTS)}, added by hand: {text[:80]}")
    snap.unrecorded = []


def _prefixes(data: bytes, wanted: set[int]) -> dict[int, str]:
    """The running binding (binding.Lines) of the file's first n lines, for each n wanted."""
    out: dict[int, str] = {}
    last = max(wanted, default=0)
    h, size, sha256 = Lines().h, 0, digest.HASHER[0]
    for n, part in enumerate(data.split(b"\n")[:last], 1):
        size += len(part) + 1
        h = sha256(h + part + b"\n").digest()
        if n in wanted:
            out[n] = Lines(n, min(size, len(data)), h, size <= len(data)).text()
    return out


def rotate_data(state: State, last: Record) -> dict[str, Any]:
    """What a rotate record carries: the archive's name, the goal, the recorded lines of 10, and what the views
    were last written from, so that they can still be redone after the archive."""
    first = wallines.first_record(state.wal_path, state.wal_rel)
    bound = actor_lines(wallines.records(state.wal_path))
    checkpoint = last_producer(state, NEXT)
    handoff = last_producer(state, HANDOFF)
    tasks = last_producer(state, TASKS)
    keep = ("op", "seq", "ts", "git", "data")
    # a name of its own (6 random hex digits at the end): two branches that rotate after the same record archive
    # different logs (each holds its own rotate record), which would otherwise meet as an add/add conflict
    name = f"{state.actor}-{first['seq']}-{last['seq'] + 1}-{last['h'][:8]}-{os.urandom(3).hex()}"
    return {
        "archive": f"{ARCHIVE_DIR}/{name}.jsonl",
        "records": last["seq"] - first["seq"] + 2,
        "goal": goal_data(state),
        "lines": [ln for ln, ordered in bound if ordered],
        "adopted": [ln for ln, ordered in bound if not ordered],
        "checkpoint": {k: checkpoint[k] for k in keep if k in checkpoint} if checkpoint else None,
        "handoff": {"op": "handoff", "data": handoff["data"]} if handoff else None,
        "tasks": {"op": "tasks", "data": tasks["data"]} if tasks else None,
        "mail": _mail_carried(state),
    }


def _mail_carried(state: State) -> dict[str, Any]:
    """The read messages and open promises the archived log knew (store/mail/known.py reads them back from the
    rotate)."""
    from rehydrate.store.mail import known  # only for a rotate: store/mail/ stays off the hook path

    return known.carried(state)
