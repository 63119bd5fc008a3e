"""Several actors in one state folder: the join of an actor without a log, and each actor's own program counter.

The actor that wrote `init` keeps 99_next.md and 20_handoff.md. Any other actor joins with its first write (a `join`
record that opens wal/<actor>.jsonl and binds the goal, and no line of 10_invariants.md), and its checkpoints and
handoffs write next/<actor>.md and handoff/<actor>.md, bound in its own records under those names: each actor
writes only its own log and program counter; the goal, decisions and rejected approaches are shared.
On the hook path: standard library only.
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, layout, records
from rehydrate.store.layout import GOAL, HANDOFF, NEXT
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def pc_names(actor: str, last: Record | None) -> tuple[str, str]:
    """(the next view, the handoff view) an actor writes, from its last record: 99_next.md and 20_handoff.md for the
    actor whose log binds 99 (the one that wrote init, and a legacy second init), next/<actor>.md and
    handoff/<actor>.md for an actor that joined."""
    views = last.get("views") if last is not None else None
    if last is None or records.op_of(last) is records.INIT or not isinstance(views, dict) or NEXT in views:
        return NEXT, HANDOFF
    return f"{layout.NEXT_DIR}/{actor}.md", f"{layout.HANDOFF_DIR}/{actor}.md"


def record_view(actor: str, rec: Record) -> str:
    """The file a checkpoint, handoff or tasks record of this actor writes: the name its own views bind."""
    nxt, handoff = pc_names(actor, rec)
    if records.op_of(rec) is records.TASKS_OP:
        return layout.tasks_view(nxt)
    return nxt if records.op_of(rec) is records.CHECKPOINT else handoff


def listed(root: str) -> list[str]:
    """The actors with a log in the state folder root's wal/, sorted ([] when it cannot be listed): one readdir,
    read-only, for a reader that holds the folder's path and no State (a check)."""
    try:
        names = os.listdir(os.path.join(root, layout.WAL_DIR))
    except OSError:
        return []
    return sorted(n[:-6] for n in names if n.endswith(".jsonl") and layout.is_actor(n[:-6]))


def others(state: State) -> list[str]:
    """The actors with a log in wal/, but this one."""
    return [a for a in state.actor_names() if a != state.actor]


def has_log(state: State) -> bool:
    return fsio.check_regular(state.wal_path, WORDS)


def no_history(state: State) -> StateMissing:
    """What a read says for an actor that has not written yet: the first write joins."""
    found = ", ".join(others(state)) or "none"
    return StateMissing(
        f"actor {state.actor!r} has no history yet in {state.rel(layout.WAL_DIR)}/ (actors: {found})",
        f"its first write joins the state: e.g. `rehydrate checkpoint --done ... --next ...` as {state.actor}, "
        "or `rehydrate mail` to read what was sent to it",
        field="actor",
    )


def join(state: State) -> Record | None:
    """Under the lock, before a write reconciles: an actor without a log (in a state that has others) appends its
    `join` record, which creates wal/<actor>.jsonl and binds the goal as the other actors' logs bind it. None if
    the actor has a log already or the state has no other actor (reconciliation then says what is missing)."""
    if has_log(state) or not others(state):
        return None
    goal = _bound_goal(state)
    if goal is None:
        return None
    # the log is created holding its first record, whole (temp file, sync, link, folder sync): never an empty log
    rec, line = state.seal(None, "join", {"goal": goal}, {GOAL: goal}, None)
    from rehydrate.fs import create as fscreate  # a join's alone: reads never load it (tests/cli/test_cli_imports.py)

    fscreate.create_new(state.wal_path, line, "wal.join", WORDS)
    state.joining = False
    return rec


def _bound_goal(state: State) -> str | None:
    """The goal's sha256 as another actor's last record binds it; else the file's (None if there is none)."""
    for actor in others(state):
        try:
            tail = walback.read_tail(state.log_path(actor), 1)
        except (OSError, wal.BadRecord, wal.Conflicted):
            continue
        if tail.records:
            views = tail.records[-1][1].get("views")
            bound = views.get(GOAL) if isinstance(views, dict) else None
            if isinstance(bound, str) and len(bound) == 64:
                return bound
    data = fsio.read_bytes(state.path(GOAL), layout.MAX_GOAL * 2, WORDS)
    return wal.sha256(data) if data is not None else None


def ensure_folder(state: State, name: str) -> None:
    """The folder of next/<actor>.md or handoff/<actor>.md, created before the view is written. Not synced: a
    folder lost by a crash takes the view with it, and the next command redoes the view from the WAL
    (tests/faults/test_crash_points_mail.py shows that a sync here would be redundant)."""
    if "/" in name:
        fsio.ensure_dir(state.path(name.split("/", 1)[0]), None, WORDS)


def goal_data(state: State) -> dict[str, Any]:
    """The goal of a joined actor: as the first record of another actor's log binds it (init, or rotate)."""
    for actor in others(state):
        path = state.log_path(actor)
        try:
            first = wallines.first_record(path, state.log_rel(actor))
        except (OSError, RehydrateError):
            continue
        op, data = records.op_of(first), records.data_of(first)
        if op is records.ROTATE:  # the goal as the init the archived log started with bound it
            data = records.field(data, "goal", dict) or {}
        if op in (records.INIT, records.ROTATE) and isinstance(data.get("goal"), str):
            return {"goal": data["goal"], "done_when": data.get("done_when")}
    raise RehydrateError(
        f"no log in {state.rel(layout.WAL_DIR)}/ starts with the goal (init)", "`rehydrate verify` lists the logs"
    )
