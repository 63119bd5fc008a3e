"""`rehydrate init`: the state folder created, its WAL's first record written and its views rendered from it.

(State.init's body: the state store's other writes are state.py's.)
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, layout, views
from rehydrate.store.git import info as gitinfo
from rehydrate.store.latches import binding
from rehydrate.store.layout import GOAL, HANDOFF, INVARIANTS, NEXT
from rehydrate.store.locate import init_location, resolve_actor
from rehydrate.store.session import Outcome, flush
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.write.apply import apply
from rehydrate.text import cap, clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from rehydrate.store.state import State


def create(
    cls: type[State], path: str | os.PathLike[str] | None, goal: str, done_when: str | None, actor: str | None
) -> tuple[State, Outcome]:
    """Create the state folder, its WAL and views. The goal is write-once: an existing one is never replaced."""
    goal = clean(goal)
    done_when = clean(done_when) if done_when else None
    if not goal:
        raise UsageError("the goal is empty", "say what the task is: rehydrate init --goal 'Ship X'")
    cap("goal", goal, layout.MAX_GOAL)
    cap("done-when", done_when or "", layout.MAX_GOAL)
    root = init_location(path)
    state = cls(root, resolve_actor(actor))
    parent = os.path.dirname(root)
    if not os.path.isdir(parent):
        raise RehydrateError(f"cannot create {root}: {parent} is not a folder")
    fsio.ensure_dir(root, "mkdir.state", WORDS)
    # No sync here: init syncs the state folder when it writes its first view, before it returns
    # (tests/faults/test_crash_points.py shows a sync here would be redundant).
    fsio.ensure_dir(state.wal_dir, None, WORDS)
    out = Outcome()
    with fslock.locked(root, words=WORDS):
        _refuse(state, out)
        data = {"goal": goal, "done_when": done_when, "header": layout.INVARIANTS_HEADER}
        bound = {
            GOAL: wal.sha256(views.render_goal(goal, done_when).encode()),
            INVARIANTS: binding.lines_of(layout.INVARIANTS_HEADER.encode()).text(),
        }
        rec = state.append(None, "init", data, views=bound, git=gitinfo.snapshot(root))
        apply(state, rec)
        flush(state)
        out.record = rec
    return state, out


def _refuse(state: State, out: Outcome) -> None:
    """Init writes nothing over a state: a goal, a log holding records, or views without a log."""
    if fsio.check_regular(state.path(GOAL), WORDS):
        raise RehydrateError(
            f"{state.rel(GOAL)} exists: the goal is write-once",
            "to work on it as another actor, name yourself with --actor NAME or REHYDRATE_ACTOR=NAME: your first "
            "write joins the state (no init); else keep working on it (`rehydrate resume`), or archive the folder "
            "and init a new one",
        )
    if fsio.check_regular(state.wal_path, WORDS) and os.path.getsize(state.wal_path) > 0:
        try:
            tail = walback.read_tail(state.wal_path, 1)
        except wal.Conflicted:
            raise wallines.conflicted(state.wal_path, state.wal_rel) from None
        except wal.BadRecord as e:
            raise RehydrateError(
                f"{state.wal_rel} already holds records, damaged ({e})", "`rehydrate verify` lists every problem"
            ) from None
        if tail.records:
            raise RehydrateError(
                f"{state.wal_rel} already holds a state", "run `rehydrate verify --repair` to finish a crashed init"
            )
        out.repaired.append(walback.cut_torn(state.wal_path, state.wal_rel, tail))
    for name in (INVARIANTS, NEXT, HANDOFF):
        if fsio.check_regular(state.path(name), WORDS):
            raise RehydrateError(
                f"{state.rel(name)} exists but no WAL does", "move it out of the state folder, then init again"
            )
