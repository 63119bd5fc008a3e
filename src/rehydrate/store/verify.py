"""The full recognize step (`rehydrate verify`): every log's chain, the latches line by line, the views against
the WAL, whatever the cheap path's hashes say. The caller (State.verify) holds the lock."""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.store import Problem, latches, wal
from rehydrate.store.reconcile import reconcile
from rehydrate.store.views import INVARIANTS, WAL_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from rehydrate.store.reconcile import Snapshot
    from rehydrate.store.state import Outcome, State


def verify(state: State, repair: bool) -> Outcome:
    from rehydrate.store.state import Outcome

    out = Outcome()
    try:
        snap = reconcile(state, repair)
    except StateMissing:
        raise
    except RehydrateError as e:  # the log cannot be trusted: name what is wrong with it, nothing built on it
        out.problems += scan_logs(state)
        if not out.problems:
            out.problems.append(Problem("unreadable", state.rel(WAL_DIR), None, e.message))
        return out
    _full_invariants(state, snap, repair)
    out.repaired, out.problems, out.record = snap.repaired, snap.problems, snap.last
    seen = {(p.code, p.file, p.line) for p in out.problems}
    for p in scan_logs(state):
        if (p.code, p.file, p.line) not in seen and not (p.code in ("torn-tail", "missing-newline") and repair):
            out.problems.append(p)
    if repair:
        out.problems = [p for p in out.problems if p.code != "unrecorded-line"]
    return out


def _full_invariants(state: State, snap: Snapshot, repair: bool) -> None:
    """The full pass over 10_invariants.md, whatever its hash says; with repair, lines added by hand are adopted
    and the file is checked again for what the adoption left."""
    rel = state.rel(INVARIANTS)
    snap.problems = [p for p in snap.problems if p.file != rel]
    latches.reconcile_invariants(state, snap, repair, full=True)
    if repair and snap.unrecorded:
        latches.adopt(state, snap)
        snap.problems = [p for p in snap.problems if p.file != rel]
        latches.reconcile_invariants(state, snap, repair, full=True)


def scan_logs(state: State) -> list[Problem]:
    """Every actor's log scanned whole (wal.scan_log)."""
    problems: list[Problem] = []
    for actor in state._actors():
        path = os.path.join(state.wal_dir, actor + ".jsonl")
        rel = state.rel(WAL_DIR, actor + ".jsonl")
        try:
            problems += wal.scan_log(path, rel)
        except RehydrateError as e:
            problems.append(Problem("unreadable", rel, None, e.message))
    return problems
