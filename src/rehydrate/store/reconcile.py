"""The recognize step: the WAL's tail against the views, safe repairs applied, each named.

Cheap by default: the log's tail is read, not the log. The whole chain is checked once when the rollback cache
(seen.py) says the log changed outside rehydrate. A torn last line is cut (a .broken copy kept) or, with only its
newline lost, given it back; an interrupted rotate is finished; then the latches (latches.py) and the replaceable
views (views.py) are compared with the WAL's last record. The caller (State) holds the lock.
"""

from __future__ import annotations

import os
import stat

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.store import WORDS, Problem, binding, fsio, wal
from rehydrate.store import views as layout
from rehydrate.store.seen import ScanInfo, Seen, fingerprint, lost_message, rolled_back
from rehydrate.store.views import GOAL

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable
    from typing import Any

    from rehydrate.store.binding import Lines
    from rehydrate.store.state import Outcome, State
    from rehydrate.store.wal import Record


class Snapshot:
    """The state as reconciliation found it, carried through one command under the lock: the WAL's last record
    (the recovery point), what was repaired, what is still wrong, and the views' bytes as they were read."""

    def __init__(self, last: Record, prev: Record | None, problems: list[Problem], repaired: list[str]) -> None:
        self.last = last
        self.prev = prev
        self.seen: dict[str, bytes | None] = {}  # view bytes as reconciliation read them (valid while nothing repaired)
        self.problems = problems
        self.repaired = repaired
        self.inv: Lines | None = None  # 10_invariants.md's running binding as it is now (set_invariants)
        self.inv_ok = True  # 10_invariants.md holds every recorded line, in order
        self.unrecorded: list[tuple[int, str]] = []
        self.cache = Seen()  # what this clone has seen of the log, kept up to date by every append
        self.lost: dict[str, Any] | None = None  # a rollback the next checkpoint acknowledges

    def set_invariants(self, lines: Lines | None) -> None:
        """10_invariants.md's running binding from now on (binding.Lines: a new record binds it, extended by an
        append without reading the file)."""
        self.inv = lines

    def outcome(self) -> Outcome:
        """What reconciliation found, as a command's outcome."""
        from rehydrate.store.state import Outcome

        return Outcome(record=self.last, repaired=self.repaired, problems=self.problems)


def check_archive(state: State, rec: Record, line: int | None) -> None:
    """A rotate record's archive must be a plain file in this state folder's archive/, a real folder: the
    record may have come with a `git pull`, and finishing it writes there. Raises, naming the record."""
    why = wal.archive_error(rec)
    folder = state.path(layout.ARCHIVE_DIR)
    st = fsio.lstat(folder)
    if why is None and st is not None:
        inside = os.path.join(os.path.realpath(state.root), layout.ARCHIVE_DIR)
        if not stat.S_ISDIR(st.st_mode) or os.path.realpath(folder) != inside:
            why = f"{state.rel(layout.ARCHIVE_DIR)} is not a real folder inside the state folder"
    if why is not None:
        where = f"{state.wal_rel} line {line}" if line else state.wal_rel
        raise RehydrateError(
            f"{where}: refusing record {rec.get('seq')} (rotate): {why} [unsafe-path]; nothing was written",
            "a rotate record names its archive as archive/<file>.jsonl; this one was not written by rehydrate "
            "(or archive/ was replaced): restore the WAL from git or move it away, and check who committed it",
        )


def reconcile(state: State, repair: bool, chain: Callable[[int | None], ScanInfo] | None = None) -> Snapshot:
    """The recognize step, cheap path: the WAL's tail against the views. Lock held by the caller. chain(end): the
    caller's own pass over the log up to byte end (verify's), in place of checking the whole chain again."""
    problems: list[Problem] = []
    repaired: list[str] = []
    if not fsio.check_dir(state.root):
        raise StateMissing(f"no state folder at {state.root}")
    if not fsio.check_dir(state.wal_dir):
        raise StateMissing(f"no WAL folder at {state.rel(layout.WAL_DIR)}", "run `rehydrate init --goal TEXT`")
    _clear_temps(state, repair, problems, repaired)
    tail = wal.tail(state.wal_path, state.wal_rel)  # a conflicted log or damage before the tail raises here
    seen = Seen.load(state.seen_path)
    end = tail.torn_offset if tail.torn else None
    info: ScanInfo | None = None
    if seen is None or seen.fp != fingerprint(state.wal_path) or not _ends_as_seen(seen, tail):
        if chain is not None:
            info = chain(end)
        else:
            info = ScanInfo.of(seen)  # changed outside rehydrate: the whole chain, once
            wal.check_chain(state.wal_path, state.wal_rel, end, info.add)
    tail = _repair_tail(state, tail, repair, problems, repaired)
    snap = _recovery_point(state, tail, problems, repaired)
    if info is not None and end is not None:
        for off, rec in tail.records:  # a record whose newline was put back lay past the pass's end
            if off >= end:
                info.add(rec)
    last, last_offset = snap.last, tail.records[-1][0]
    if last["op"] == "rotate" and last_offset > 0:
        check_archive(state, last, wal.line_number(state.wal_path, last_offset))
        if repair:
            state._apply(last)
            repaired.append(f"finished an interrupted rotate ({last['data'].get('archive')})")
            snap.prev = None
        else:
            problems.append(Problem("interrupted-rotate", state.wal_rel, None, "a rotate was interrupted", True))
    _follow(state, snap, seen, info, repair)
    if snap.lost is not None:
        problems.append(Problem("rolled-back", state.wal_rel, None, lost_message(snap.lost)))
    _reconcile_views(state, snap, repair)
    return snap


def _clear_temps(state: State, repair: bool, problems: list[Problem], repaired: list[str]) -> None:
    for folder in (state.root, state.wal_dir):
        for name in os.listdir(folder):
            if fsio.is_temp_name(name):  # fsio.replace's, and nothing else
                where = os.path.relpath(os.path.join(folder, name), os.path.dirname(state.root))
                if repair:
                    fsio.unlink(os.path.join(folder, name), WORDS)
                    repaired.append(f"removed a temporary file left by a crash: {where}")
                else:
                    problems.append(Problem("stale-temp", where, None, "temporary file left by a crash", True))


def _repair_tail(state: State, tail: wal.Tail, repair: bool, problems: list[Problem], repaired: list[str]) -> wal.Tail:
    """A last line that lost only its newline gets it back; a torn one is cut (or, without repair, named)."""
    rel = state.wal_rel
    if tail.torn and wal.only_newline_lost(tail):
        n = wal.line_number(state.wal_path, tail.torn_offset)
        if repair:
            fsio.append(state.wal_path, b"\n", "repair.newline", words=WORDS)
            repaired.append(f"put back the final newline of {rel} (line {n} is a whole, valid record)")
            tail = wal.tail(state.wal_path, rel)
        else:
            problems.append(Problem("missing-newline", rel, n, "the last record lost its final newline", True))
            tail.records.append((tail.torn_offset, wal.decode(tail.torn)))
            tail.torn = b""
    if tail.torn:
        if repair:
            repaired.append(wal.cut_torn(state.wal_path, rel, tail))
            tail = wal.tail(state.wal_path, rel)
        else:
            n = wal.line_number(state.wal_path, tail.torn_offset)
            problems.append(Problem("torn-tail", rel, n, tail.torn_reason, True))
    return tail


def _recovery_point(state: State, tail: wal.Tail, problems: list[Problem], repaired: list[str]) -> Snapshot:
    """The WAL's last record and the one before it; an empty log raises."""
    rel = state.wal_rel
    if not tail.records:
        if fsio.lstat(state.path(GOAL)) is not None:
            raise RehydrateError(
                f"{rel} holds no record, but {state.rel(GOAL)} exists: the log was emptied or lost",
                f"restore it from git (`git checkout -- {state.rel(layout.WAL_DIR)}`); to start over instead, "
                "move the state folder away and run `rehydrate init --goal TEXT`",
            )
        raise StateMissing(f"{rel} holds no record (a crash during init?)", "run `rehydrate init --goal TEXT` again")
    last_offset, last = tail.records[-1]
    prev = tail.records[-2][1] if len(tail.records) > 1 else None
    if prev is not None and last["prev"] != prev["h"]:
        n = wal.line_number(state.wal_path, last_offset)
        problems.append(Problem("chain-broken", rel, n, "the last record does not follow the one before it"))
    return Snapshot(last, prev, problems, repaired)


def _follow(state: State, snap: Snapshot, seen: Seen | None, info: ScanInfo | None, repair: bool) -> None:
    """Compare the log with what this clone saw of it (the cache), and keep the cache up to date.

    A log that no longer holds records this clone saw was rolled back: `git checkout` or `git stash` of
    state/, a branch switch, a deleted line. The records' hashes still chain, so nothing else would notice.
    It is reported by every command (code rolled-back: how many records, their last checkpoint's next action)
    until the next checkpoint, whose record carries what was lost (data.rolled_back) and so ends the report;
    other records (resume, compaction, ...) keep it pending. If the lost records come back (the branch is
    checked out again) before that, the report ends too. Without a cache (a fresh clone, a deleted or
    garbled cache file) nothing is known and nothing is reported."""
    if info is None:  # the log is as this clone left it
        snap.cache = seen if seen is not None else Seen()
        snap.lost = snap.cache.lost
    else:
        pending = seen.lost if seen is not None else None
        if pending is not None and info.present.get(pending["to"]) == pending["h"]:
            pending = None  # the records are back
        found = rolled_back(seen, info, snap.last) if seen is not None else None
        if found is not None and pending is not None:
            found["count"] += pending["count"]
            found["exact"] = found["exact"] and pending["exact"]
            found["next"] = found["next"] or pending["next"]
        snap.cache = info.seen
        snap.lost = snap.cache.lost = found or pending
    fp = fingerprint(state.wal_path)
    if repair and (info is not None or snap.cache.fp != fp):
        snap.cache.fp = fp
        snap.cache.save(state.seen_path, state.wal_path)


def _reconcile_views(state: State, snap: Snapshot, repair: bool) -> None:
    if snap.last["op"] == "init" and repair:  # a crash during init: write the views that are missing
        for name in state._apply(snap.last):
            snap.repaired.append(f"redid {state.rel(name)} from the WAL (init was interrupted)")
    changed, goal = layout.differs(state, snap, GOAL)
    if changed:
        from rehydrate.store import latches  # the latches' checks: loaded when one is not as the WAL binds it

        latches.goal_differs(state, snap, goal, repair)
    layout.reconcile_views(state, snap, repair)
    matches, invariants = binding.read_invariants(state, snap)  # one pass; its bytes only when not as bound
    if matches:  # as the last record binds it, line for line
        return
    from rehydrate.store import latches

    latches.check_invariants(state, snap, invariants, repair)


def _ends_as_seen(seen: Seen, tail: wal.Tail) -> bool:
    last = tail.records[-1][1] if tail.records else None
    return last is not None and seen.end == (last["seq"], str(last["h"])[:16])
