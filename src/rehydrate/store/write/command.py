"""One write under the state's lock: reconcile, append the record, redo the views from it, write the cache (a read
under the lock is session.Reading)."""

from __future__ import annotations

from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, actors, layout, records
from rehydrate.store.evidence import prepare
from rehydrate.store.git import info as gitinfo
from rehydrate.store.latches import binding
from rehydrate.store.layout import INVARIANTS
from rehydrate.store.session import Outcome, Snapshot, flush
from rehydrate.store.views import keep_edit, render_handoff, render_record
from rehydrate.store.wal import record as wal
from rehydrate.store.write.apply import apply
from rehydrate.store.write.rules import check_lift, current_goal, mint_entry, refuse_unsafe, upgrade_attributes

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.state import State


def write(state: State, op: str, data: dict[str, Any], *, with_git: bool = False) -> Outcome:
    kind = records.of(op)
    with fslock.locked(state.root, words=WORDS):
        if state.joining:  # the first write of an actor without a log: its join record first (store/actors.py)
            actors.join(state)
        # git runs while the state is reconciled; started inside the lock, so that a lock that cannot be taken
        # leaves no git child behind
        pending = gitinfo.start(state.root) if with_git else None
        try:
            snap = state.begin()
            refuse_unsafe(state, snap, (kind.moves,) if kind.moves else ())  # the view it writes
        finally:
            git = gitinfo.finish(pending) if pending is not None else None
        if any(p.code == "duplicate-line" for p in snap.problems):  # a merge kept two copies: a write removes one
            from rehydrate.store.latches import latch as latches  # off the hook path (tests/cli/test_cli_imports.py)

            latches.dedupe(state, snap)
        out = Outcome(repaired=snap.repaired)
        upgrade_attributes(state, snap)
        views: dict[str, str] = {}
        next_name, handoff_name = state.pc(snap.last)
        if len(snap.heads) > 1:  # the merge record this write starts with replaces the program counter
            keep_edit(state, next_name, snap, out)
        if kind.appends:  # the binding extended by the line: the file is not read again
            check_lift(state, snap, data, op)
            state.session.entry_ts = mint_entry(state, data, op)
            snap.set_invariants((snap.inv or binding.Lines()).add(data["line"].encode()))
        elif kind is records.HANDOFF_OP:
            views[handoff_name] = wal.sha256(render_handoff(data["text"]).encode())
            keep_edit(state, handoff_name, snap, out)
        elif kind is records.TASKS_OP and not _tasks_changed(state, snap, next_name, data, views, out):
            out.problems = snap.problems  # the list the view already shows: nothing to record
            flush(state)
            return out
        elif kind is records.CHECKPOINT:
            keep_edit(state, next_name, snap, out)
            if data.get("goal") is None:
                data["goal"] = current_goal(state, snap)
        if kind.evidence in ("carried", "set"):  # the evidence in force carried, a checkpoint's claims bound
            prepare.prepare(state, snap, kind, data)
        bound = snap.inv_ok and snap.inv is not None  # the binding extends what reconciliation found on disk
        rec = state.append(snap, op, data, views=views, git=git)
        if state.session.joined is not None:
            apply(state, state.session.joined)
        apply(state, rec)
        if kind.appends:  # appended by latches: known only if bound from the bytes it now holds
            snap.cache.wrote(rec, {INVARIANTS: fsio.lstat(state.path(INVARIANTS)) if bound else None})
        out.record = rec
        out.problems = snap.problems
        flush(state)
        return out


def _tasks_changed(
    state: State, snap: Snapshot, next_name: str, data: dict[str, Any], views: dict[str, str], out: Outcome
) -> bool:
    """Whether a task list differs from the one the view is bound to; if so, views binds the new rendering
    and a hand edit of the view is kept beside it."""
    name = layout.tasks_view(next_name)
    views[name] = wal.sha256(render_record({"op": records.TASKS_OP.name, "data": data}).encode())
    if views[name] == snap.last["views"].get(name) and len(snap.heads) == 1:
        return False
    keep_edit(state, name, snap, out)
    return True
