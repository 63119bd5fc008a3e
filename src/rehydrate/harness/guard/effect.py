"""The guard's check by effect: after each tool call and when the agent stops, the files that rejected approaches
guard are compared with what they were when the guard last looked (snapshot.py); one that changed is named to the
model at once, with the rejected approach, written down in this worktree's guard log, and, where the user asked for
it (`"guard_restore": true` in state/config.json), put back as it was.

No check before a call sees every write (a script, a program that writes files by itself, a path built at run
time): this one sees what happened, whatever did it. It costs a few system calls when nothing is guarded, and a stat
per guarded file otherwise; a file is hashed only when its stat changed. While 10_invariants.md is the one the
snapshot was built from and it watches nothing, a call ends there, nothing parsed. A changed view (a new rejected
approach) rebuilds it, after comparing the files the old one held, and so does each Stop.
"""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.harness.base import Answer, said
from rehydrate.harness.guard import snapshot
from rehydrate.harness.guard.match import Blind
from rehydrate.store import layout
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.base import Handler, Harness, Located

FOLDER = snapshot.FOLDER
LOG = "changes.jsonl"
MAX_LOG = 1 << 20  # the guard log's size: past it, it becomes guard/changes.1.jsonl (replacing the one before)


# ------------------------------------------------------------------------------------------------ the handlers


def after_tool(
    harness: Harness, event: dict[str, Any], here: Located, whole: bool, handlers: dict[str, Handler]
) -> Answer:
    """After a tool call: what the guarded files' check by effect found, then what the event did before (the task
    list's mirror, the brief after a compaction: the harness's AFTER_TOOL, one of handlers), in one answer."""
    tool = event.get("tool_name")
    notice = check(here, f"this {_clean(tool)} call" if isinstance(tool, str) else "the last tool call")
    then = getattr(harness, "AFTER_TOOL", None)
    other = Answer()
    if then is not None and (then != "tasks" or not _writing_tools(harness, tool)):  # (never a task tool)
        other = handlers[then](harness, event, here, whole)
    if notice is None:
        return other
    return _told(harness, str(event.get("hook_event_name")), notice, other)


def stop(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """When the agent stops: the check by effect (a change found keeps the agent going once, with the notice as its
    reason: it can undo the change before the human reads the turn), else the usual stop (events.stop)."""
    from rehydrate.harness import events  # the brief's handlers: a tool call's check loads them only when it stops

    # While a stop hook keeps the agent going (stop_hook_active), what changed is kept for the next check to say:
    # a second block could keep it going for ever.
    active = bool(event.get("stop_hook_active"))
    notice = check(here, "this turn", rebuild=True, report=not active)
    if notice is None:
        return events.stop(harness, event, here, whole)
    return Answer(stdout=safejson.dumps({"decision": "block", "reason": notice}))


def _writing_tools(harness: Harness, tool: object) -> bool:
    """An edit, a command or a patch (the shell's and the patch's names first: a harness's EDIT_TOOLS may load its
    transcript module, which a command's call does not need)."""
    return tool in harness.SHELL_TOOLS or tool in harness.PATCH_TOOLS or tool in harness.EDIT_TOOLS


def _told(harness: Harness, event_name: str, notice: str, other: Answer) -> Answer:
    """The notice in the harness's context shape for this event, with the other handler's context after it."""
    text = notice
    if other.stdout:
        try:
            given = safejson.loads(other.stdout)
        except ValueError:
            given = None
        extra = given.get("additionalContext") if isinstance(given, dict) else None
        specific = given.get("hookSpecificOutput") if isinstance(given, dict) else None
        if extra is None and isinstance(specific, dict):
            extra = specific.get("additionalContext")
        if isinstance(extra, str):
            text = f"{notice}\n\n{extra}"
    shaped = safejson.loads(said(harness, event_name, text))
    if isinstance(shaped, dict) and "hookSpecificOutput" in shaped:
        shaped["systemMessage"] = notice  # shown to the user too, where the harness shows one
    return Answer(stdout=safejson.dumps(shaped), stderr=other.stderr)


def _clean(value: object) -> str:
    return clean(str(value), one_line=True)[:80]


# ------------------------------------------------------------------------------------------------ the check


def check(here: Located, what: str, *, rebuild: bool = False, report: bool = True) -> str | None:
    """Compare the guarded files with the snapshot; rebuild it when 10_invariants.md changed (or rebuild is asked);
    the notice for what changed, or None. report=False (before a tool runs): what changed is kept in the snapshot
    as pending, and said by the next check that reports."""
    return _checked(here, what, rebuild, report)[0]


def watched(here: Located) -> list[tuple[str | None, str | None, str]]:
    """The rejected approaches' watches, for the guard before a call: the snapshot's while 10_invariants.md is the
    one it was built from (a view of 200,000 lines is then not scanned on every call), else scanned again
    (watches.rejected; match.Blind when it cannot be read) and the snapshot rebuilt with them. The guarded files are
    compared on the way; what changed is kept for the next check to say."""
    return _checked(here, "", False, False, want=True)[1]


def _checked(
    here: Located, what: str, rebuild: bool, report: bool, want: bool = False
) -> tuple[str | None, list[tuple[str | None, str | None, str]]]:
    root = here.root
    if not rebuild:
        quiet = snapshot.quiet(root)
        if quiet is not None:
            return None, quiet  # every guarded file as it was: the common case, a few system calls, nothing written
    view = snapshot.fingerprint(os.path.join(root, layout.INVARIANTS))
    folder = snapshot.folder(root)
    head, body = snapshot.read(os.path.join(folder, snapshot.SNAPSHOT))
    if head == (view, 0):
        return None, []  # nothing guarded, and nothing new in 10_invariants.md: the common case, a few system calls
    snap = snapshot.parse(body) if head is not None else None
    if snap is None and head is not None and head[1] == 0:
        snap = {"watches": [], "files": {}, "pending": []}
    restore = snapshot.Restore(here)
    changes = list(snap.get("pending", [])) if snap else []
    if snap:
        changes += snapshot.compare(snap, restore, folder, os.path.dirname(os.path.abspath(root)))
    if snap is None or head is None or head[0] != view or rebuild:
        from rehydrate.harness.guard import watches  # fnmatch and re, and the logs' reader: only for a rebuild

        try:
            found = watches.rejected(root)
        except Blind:
            if want:
                raise
            found = None  # the old snapshot is kept, and the check before each call fails closed
        if found is not None:
            snap = snapshot.build(root, snap, found)
    if snap is None:
        return None, []
    snap["pending"] = [] if report else changes
    if head is None or head[0] != view or rebuild or safejson.dumps(snap).encode() != body:
        snapshot.save(folder, view, snap, restore)  # (a check that found every file as it was writes nothing)
    found_watches = [snapshot.watch(w) for w in snap["watches"]]
    if not report or not changes:
        return None, found_watches
    _log(folder, changes, what)
    return _notice(root, what, changes), found_watches


# ------------------------------------------------------------------------------------------------ telling


def _log(folder: str, changes: list[dict[str, Any]], what: str) -> None:
    """Each change, one line of JSON in <local_dir>/guard/changes.jsonl (this worktree's own record, never
    committed: past MAX_LOG the file becomes changes.1.jsonl). Never fails the hook."""
    from rehydrate.store.wal import record as wal  # its clock: only a check that found a change loads it

    path = os.path.join(folder, LOG)
    lines = b"".join(
        safejson.dumps({"ts": wal.now(), "by": what, **{k: c[k] for k in ("path", "how", "sha256", "restored")},
                        "rejected": [ln[:600] for ln in c["lines"]]}).encode() + b"\n"
        for c in changes
    )  # fmt: skip
    try:
        if os.path.getsize(path) > MAX_LOG:
            os.replace(path, path[: -len(".jsonl")] + ".1.jsonl")
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return
    try:
        os.write(fd, lines)
    except OSError:
        pass
    finally:
        os.close(fd)


def _notice(root: str, what: str, changes: list[dict[str, Any]]) -> str:
    project = os.path.dirname(os.path.abspath(root))
    where = f"{os.path.basename(root)}/{layout.INVARIANTS}"
    parts = []
    for c in changes[:5]:
        rel = os.path.relpath(c["path"], project)
        done = " It was restored as it was before." if c["restored"] else ""
        quoted = "\n".join(clean(ln, one_line=True)[:600] for ln in c["lines"])
        parts.append(f"{clean(rel, one_line=True)[:300]} was {c['how']}.{done} Rejected in {where}:\n{quoted}")
    more = f"\n(and {len(changes) - 5} more guarded files)" if len(changes) > 5 else ""
    return (
        f"rehydrate: {what} changed a file that a rejected approach guards. " + "\n".join(parts) + more + "\n"
        "A rejected approach stays rejected: undo the change unless the human says the reason no longer holds."
    )
