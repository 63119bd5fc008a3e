"""After a task-tool call: the harness's task list mirrored into the state (store/tasks.py), so that it survives a
compaction, a /clear, a new session and a switch of harness verbatim, with no help from the model.

Each harness calls this only for its task tools (install's matchers): Claude Code's TaskCreate, TaskUpdate, TaskList
and TaskGet (its own store on disk gives the list whole; without one, the call is folded into the last recorded
list of the same session) and TodoWrite, Codex's update_plan, Gemini CLI's write_todos (each call carries the whole
list). The answer is empty: the model's context is left as it is. A list the view already shows records nothing.
"""

from __future__ import annotations

import os

from rehydrate.harness.base import TASK_LIST_TOOLS, Answer, session_of
from rehydrate.store import actors, layout, records
from rehydrate.store import tasks as store
from rehydrate.store.locate import resolve_actor
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.base import Harness, Located

FOLD_BACK = 256  # records read back from the WAL's end for the last task list to fold a call into


def tasks(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """Record the task list a task-tool call leaves, if the call is one (another tool: nothing)."""
    name = event.get("tool_name")
    if event.get("agent_id"):  # a subagent's own list (Claude Code adds agent_id inside one): not the session's
        return Answer()
    read = _WHOLE.get(name) if isinstance(name, str) else None
    given = event.get("tool_input")
    tool_input: dict[str, Any] = given if isinstance(given, dict) else {}
    if not whole:  # salvaged fields of an input that was not read whole: a list from them could be a part of it
        return Answer(stderr="rehydrate hook: the task list was not recorded (the hook's input was not read whole)\n")
    session = session_of(event)
    source = f"{harness.TITLE}'s {name}" if read is not None else f"{harness.TITLE}'s task tools"
    where = _Where(here)
    if read is not None:
        items = read(tool_input)
    else:
        from rehydrate.transcripts.claude import TASK_TOOLS  # Claude Code's transcript module: for its tools only

        if name not in TASK_TOOLS:
            return Answer()
        items = _task_tools(where, name, tool_input, event.get("tool_response"), session)
    if items is None:
        return Answer()
    data = store.make(source, items, session)
    if not _shown_already(where, data):
        here.state.tasks(data)
    return Answer()


class _Where:
    """The state folder the event found, this actor and its log: what the reads need, without State (whose imports
    only a write pays for)."""

    def __init__(self, here: Located) -> None:
        self.root = here.root
        self.actor = resolve_actor()
        self.wal_path = os.path.join(self.root, layout.WAL_DIR, self.actor + ".jsonl")


def _shown_already(state: _Where, data: dict[str, Any]) -> bool:
    """Whether the WAL's last record already binds the task-list view to this list's rendering: read without the
    lock (a TaskList or TaskGet changes nothing, and is most calls), so that such a call costs a tail read. A log
    that cannot be read this way says no: the write then reconciles and says what is wrong."""
    try:
        tail = walback.read_tail(state.wal_path, 1).records
    except Exception:  # a conflicted, damaged or missing log: the locked write path decides
        return False
    if not tail:
        return False
    last = tail[-1][1]
    bound = last.get("views")
    name = layout.tasks_view(actors.pc_names(state.actor, last)[0])
    return isinstance(bound, dict) and bound.get(name) == wal.sha256(store.render(data).encode())


def _item(text: object, status: object, ident: object = None, detail: object = None, blockers: object = None) -> Any:
    return store.item(text, status, ident, detail, blockers)


def _todo_write(tool_input: dict[str, Any]) -> list[Any] | None:
    """Claude Code's TodoWrite: {todos: [{content, status, activeForm}]}, the whole list."""
    todos = tool_input.get("todos")
    if not isinstance(todos, list):
        return None
    return [_item(t.get("content"), t.get("status")) for t in todos if isinstance(t, dict)]


def _update_plan(tool_input: dict[str, Any]) -> list[Any] | None:
    """Codex's update_plan: {explanation, plan: [{step, status}]}, the whole plan."""
    plan = tool_input.get("plan")
    if not isinstance(plan, list):
        return None
    return [_item(t.get("step"), t.get("status")) for t in plan if isinstance(t, dict)]


def _write_todos(tool_input: dict[str, Any]) -> list[Any] | None:
    """Gemini CLI's write_todos: {todos: [{description, status}]}, the whole list."""
    todos = tool_input.get("todos")
    if not isinstance(todos, list):
        return None
    return [_item(t.get("description"), t.get("status")) for t in todos if isinstance(t, dict)]


_WHOLE = dict(zip(TASK_LIST_TOOLS, (_todo_write, _update_plan, _write_todos), strict=True))  # (base's order)


def _task_tools(state: _Where, name: str, tool_input: dict[str, Any], response: object, session: str | None) -> Any:
    """Claude Code's list after a task tool's call: its own store's, whole, where it keeps one; else the last list
    this session recorded with the call folded in (a list from another session is another list: its ids restart)."""
    from rehydrate.transcripts.claude.tasks import fold_task, stored_tasks  # Claude Code's: for its tools only

    stored = stored_tasks(session)
    if stored is None:
        stored = _last_list(state, session)
        if not fold_task(stored, name, tool_input, response if isinstance(response, dict) else {}):
            return None
    return [
        _item(t.get("subject"), t.get("status"), ident, t.get("description"), t.get("blockedBy"))
        for ident, t in stored.items()
    ]


def _last_list(state: _Where, session: str | None) -> dict[str, dict[str, Any]]:
    """The last task list recorded for this session (within the WAL's last FOLD_BACK records), as fold_task keeps
    one; empty if there is none."""
    for rec in walback.recent_records(state.wal_path, FOLD_BACK):
        data = records.data_of(rec)
        if records.op_of(rec) is not records.TASKS_OP or rec.get("actor") != state.actor:
            continue
        if data.get("session") != session or not isinstance(data.get("items"), list):
            return {}
        return {
            str(it["id"]): {
                "subject": str(it.get("text", "")),
                "status": str(it.get("status", "pending")),
                **({"description": it["detail"]} if isinstance(it.get("detail"), str) else {}),
                **({"blockedBy": it["blocked_by"]} if isinstance(it.get("blocked_by"), list) else {}),
            }
            for it in data["items"]
            if isinstance(it, dict) and isinstance(it.get("id"), str)
        }
    return {}
