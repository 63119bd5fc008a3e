"""The full recognize step (`rehydrate verify`): every log's chain, the latches line by line, the views against
the WAL, whatever the cheap path's hashes say. The caller (State.verify) holds the lock."""

from __future__ import annotations

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.store import Problem
from rehydrate.store.latches import latch as latches
from rehydrate.store.layout import INVARIANTS, WAL_DIR
from rehydrate.store.local.rollback import ScanInfo
from rehydrate.store.local.seen import file_fingerprint
from rehydrate.store.mail import senders
from rehydrate.store.reconcile import keyed, reconcile
from rehydrate.store.session import Outcome
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import scan as walscan

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def verify(state: State, repair: bool) -> Outcome:
    out = Outcome()
    logs = Logs(state)  # every log read once: reconcile, the latches and the report use what it found
    # the signature check verifies each line of work of every actor (store/keys/)
    state.session.all_heads = logs.heads
    try:
        try:
            snap = reconcile(state, repair, logs.chain, trust_cache=False)
        except StateMissing:
            raise
        except RehydrateError as e:  # the log cannot be trusted: name what is wrong with it, nothing built on it
            out.problems += logs.problems()
            if not out.problems:
                out.problems.append(Problem("unreadable", state.rel(WAL_DIR), None, e.message))
            return out
        _full_invariants(state, snap, repair)
    finally:
        logs.close()
    out.repaired, out.problems, out.record = snap.repaired, snap.problems, snap.last
    seen = {(p.code, p.file, p.line) for p in out.problems}
    for p in logs.problems():
        if (p.code, p.file, p.line) not in seen and not (p.code in ("torn-tail", "missing-newline") and repair):
            out.problems.append(p)
    if repair:
        out.problems = [p for p in out.problems if p.code != "unrecorded-line"]
    if keyed(state):  # a message in a keyed actor's name that her signed log does not vouch for (store/mail/)
        out.problems += senders.forged(state)
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


def _scan(
    state: State,
    actor: str,
    visit: Callable[[Record], None] | None = None,
    heads: walscan.Heads | None = None,
    on_load: Callable[[Record], None] | None = None,
) -> list[Problem]:
    path, rel = state.log_path(actor), state.log_rel(actor)
    try:
        return walscan.scan_log(path, rel, visit=visit, heads=heads, on_load=on_load)
    except RehydrateError as e:
        return [Problem("unreadable", rel, None, e.message)]


class Logs:
    """One pass over every actor's log (walscan.scan_log), feeding every consumer: the problems it reports, each
    actor's recorded lines of 10_invariants.md (latches.READ), and for this actor's log the rollback check's
    ScanInfo (reconcile's chain). A log that changed since (a repair) is read again by whoever needs it."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.info = ScanInfo.of(state.load_seen())
        self.found: dict[str, tuple[str, list[Problem]]] = {}  # actor: (the log's identity before the pass, problems)
        self.heads: dict[str, list[Record]] = {}  # every other actor's heads (each line of work's last record)
        for actor in state.actor_names():
            self._read(actor)

    def _read(self, actor: str) -> None:
        path = self.state.log_path(actor)
        own = actor == self.state.actor
        # each actor's recorded lines as a graph of records (lineorder.Collector), as latches.recorded_lines reads them
        # (in memory that does not grow with a log that is one line: ScanInfo)
        info = self.info if own else ScanInfo(set())
        heads = info.heads if own else walscan.Heads()  # another's: for the signature check (store/keys/)
        try:
            fp = file_fingerprint(path)
        except OSError:
            return
        self.found[actor] = (fp, _scan(self.state, actor, info.add, heads, info.load))
        if not own:
            self.heads[actor] = [rec for _, rec in heads.records()]
        lines = info.collected()
        if not lines.broken:
            latches.READ[path] = (fp, lines)

    def close(self) -> None:
        for actor in self.found:
            latches.READ.pop(self.state.log_path(actor), None)

    def _fresh(self, actor: str) -> list[Problem] | None:
        """The problems the pass found in the actor's log, if the log is as the pass read it."""
        found = self.found.get(actor)
        try:
            return found[1] if found is not None and found[0] == file_fingerprint(self.state.log_path(actor)) else None
        except OSError:
            return None

    def problems(self) -> list[Problem]:
        """Every log's problems as it is now (read again if a repair changed it)."""
        out: list[Problem] = []
        for actor in self.state.actor_names():
            fresh = self._fresh(actor)
            out += fresh if fresh is not None else _scan(self.state, actor)
        return out

    def chain(self, end: int | None) -> ScanInfo:
        """reconcile's check of this actor's whole chain up to byte end (its torn last line, if any), from the pass:
        RehydrateError for damage that cannot be repaired, else what the rollback check needs."""
        state = self.state
        problems = self._fresh(state.actor)
        if problems is not None and end is not None:  # the pass read the torn last line too: not the chain's
            n = wallines.line_number(state.wal_path, end)
            if any(p.code == "merge-conflict" and p.line == n for p in problems):
                problems = None  # the pass named the conflict alone: read the chain again
            else:
                problems = [p for p in problems if p.line is None or p.line < n]
        if problems is None:  # not as the pass read it: the whole chain, once more
            info = ScanInfo.of(state.load_seen())
            walscan.check_chain(state.wal_path, state.wal_rel, end, info.add, info.heads)
            return info
        error = walscan.chain_error(state.wal_path, state.wal_rel, problems)
        if error is not None:
            raise error
        return self.info
