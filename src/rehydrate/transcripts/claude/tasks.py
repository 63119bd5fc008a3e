"""Claude Code's task list: as its task tools keep it on disk (home()/tasks/<session id>/<task id>.json), and how one
task tool's call changes it (TaskCreate, TaskUpdate, TaskList, TaskGet)."""

from __future__ import annotations

import os

from rehydrate.safejson import loads
from rehydrate.transcripts.claude import home
from rehydrate.transcripts.jsonl import label, obj, open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TASKS_DIR = "tasks"  # home()/tasks/<session id>/<task id>.json: the task tools' own store (2.1.332)
MAX_TASK_FILES, MAX_TASK_FILE = 200, 64 << 10


def task_order(ident: str) -> tuple[int, int, str]:
    """A task id's place in its list: in order of creation, as Claude Code counts its ids (a TaskList lists them in
    another order); an id that is not a number after them."""
    return (0, int(ident), "") if ident.isdigit() else (1, 0, ident)


def task_store(session_id: object) -> list[tuple[str, str]] | None:
    """The session's task list as Claude Code keeps it on disk (stored_tasks), as (subject, status) pairs."""
    stored = stored_tasks(session_id)
    return None if stored is None else [(t["subject"], t["status"]) for t in stored.values()]


def stored_tasks(session_id: object) -> dict[str, dict[str, Any]] | None:
    """The session's task list as Claude Code keeps it on disk (home()/tasks/<session id>/<id>.json, each {id,
    subject, status, description, blockedBy, ...}), {id: task as fold_task keeps it} in order of creation: the list
    whole, with no transcript to fold; None when there is no such folder (an older version, or no task made). A
    session id that is not a plain name is never a path; at most MAX_TASK_FILES files are read, regular files only
    (a FIFO or a folder is skipped), and a file larger than MAX_TASK_FILE bytes or that does not parse is left out
    (safejson parses these small files, on the hook path: not the transcripts' optional parser)."""
    if not isinstance(session_id, str) or not session_id or not all(c.isalnum() or c in "-_" for c in session_id):
        return None
    folder = os.path.join(home(), TASKS_DIR, session_id)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))[:MAX_TASK_FILES]
    except OSError:
        return None
    found: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        try:
            with open_regular(os.path.join(folder, name)) as f:
                task = loads(f.read(MAX_TASK_FILE + 1))
        except (OSError, ValueError):
            continue
        if isinstance(task, dict) and task.get("id") is not None and isinstance(task.get("subject"), str):
            entry = {"subject": task["subject"], "status": label(task.get("status"))}
            task_fields(entry, {k: v for k, v in task.items() if k != "status"})
            found.append((label(task["id"]), entry))
    found.sort(key=lambda t: task_order(t[0]))
    return dict(found)


def fold_task(tasks: dict[str, dict[str, Any]], name: str, tool_input: dict[str, Any], result: dict[str, Any]) -> bool:
    """A task tool's successful call folded into tasks ({id: {subject, status[, description, blockedBy]}}, in order of
    creation): TaskCreate adds a task (its id from the result), TaskUpdate sets its status, subject or description
    (status "deleted" removes it), TaskList's result is the whole list, TaskGet's one task. False: nothing known
    changed (another tool, or a result of another shape)."""
    if name == "TaskList":
        listed = result.get("tasks")
        if not isinstance(listed, list):
            return False
        found = [t for t in listed if isinstance(t, dict) and t.get("id") is not None]
        old = dict(tasks)
        tasks.clear()
        for t in sorted(found, key=lambda t: task_order(label(t["id"]))):
            ident = label(t["id"])
            tasks[ident] = {**old.get(ident, {}), "subject": label(t.get("subject")), "status": label(t.get("status"))}
            task_fields(tasks[ident], t)
        return True
    if name == "TaskCreate":
        task = obj(result.get("task"))
        made = max((int(k) for k in tasks if k.isdigit()), default=0) + 1  # ids count up, a deleted one is not reused
        ident = label(task["id"]) if isinstance(task.get("id"), (str, int)) else str(made)
        subject = tool_input.get("subject") or task.get("subject") or tool_input.get("description")
        tasks[ident] = {"subject": label(subject) if subject is not None else "", "status": "pending"}
        task_fields(tasks[ident], {**task, **tool_input})
        return True
    if name == "TaskGet":
        task = obj(result.get("task"))
        if task.get("id") is None:
            return False
        entry = tasks.setdefault(label(task["id"]), {"subject": label(task.get("subject")), "status": "pending"})
        task_fields(entry, task)
        return True
    if name != "TaskUpdate":
        return False
    value = tool_input.get("taskId", result.get("taskId"))
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        return False
    ident = str(value)
    if tool_input.get("status") == "deleted":
        tasks.pop(ident, None)
        return True
    # a task created before what was read: known by its id and what the update says
    task_fields(tasks.setdefault(ident, {"subject": f"task #{ident}", "status": "pending"}), tool_input)
    return True


def task_fields(entry: dict[str, Any], said: dict[str, Any]) -> None:
    """What a tool's input or result says of a task, over what was known: subject, status, description, blockers."""
    for key in ("subject", "status", "description"):
        if isinstance(said.get(key), str):
            entry[key] = said[key]
    blockers = said.get("blockedBy")
    if isinstance(blockers, list):
        entry["blockedBy"] = [label(b) for b in blockers if isinstance(b, (str, int)) and not isinstance(b, bool)]
