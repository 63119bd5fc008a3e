"""<local_dir>/seen/others.json: the last record this worktree saw of each other actor's log, so that a teammate's log
that no longer holds it is named (`rolled-back`), as seen.py names this actor's own.

A teammate's log only grows: its owner appends, `git pull` brings the appends, a rotate starts it again with a record
whose archive holds the rest. A log that arrives without the record this worktree last saw in it was cut back
upstream (a record deleted and pushed, a force push): the chain of what is left is intact and its last record is
signed, so neither the chain nor the signature check can tell. On the hook path: one small file read and an lstat
per teammate; a log read only when its file changed, at the offset remembered (the whole log only when the record is
not there). A branch switch since (the worktree's branch changed) is not a rollback: the log as it is now is
remembered. A rollback is named by every command until this actor's next checkpoint, which acknowledges it.
"""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, records
from rehydrate.store.local import place as local
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.state import State

NAME = "others.json"
_MAX = 256 << 10  # the file is small; a bigger one is not ours


def path(state: State) -> str:
    return os.path.join(state.local, "seen", NAME)


def load(state: State) -> dict[str, dict[str, Any]]:
    """{actor: {"seq", "h" (16 hex digits), "at" (byte offset), "fp", "branch", "lost"}}: a cache, untrusted; an
    entry that is not of this shape is dropped (its actor is then seen afresh)."""
    try:
        data = fsio.read_bytes(path(state), _MAX, WORDS)
        found = safejson.loads(data) if data else {}
    except (RehydrateError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {a: e for a, e in found.items() if isinstance(a, str) and _entry_ok(e)}


def _entry_ok(e: object) -> bool:
    if not isinstance(e, dict):
        return False
    ints = all(type(e.get(k)) is int for k in ("seq", "at"))
    strs = all(isinstance(e.get(k), str) for k in ("h", "fp"))
    branch, lost = e.get("branch"), e.get("lost")
    return ints and strs and (branch is None or isinstance(branch, str)) and (lost is None or isinstance(lost, dict))


def _save(state: State, known: dict[str, dict[str, Any]]) -> None:
    local.ensure(os.path.dirname(path(state)))
    fsio.write_hint(path(state), safejson.dumps_canonical(known) + b"\n")


def check(state: State) -> list[Problem]:
    """Each other actor's log against the record this worktree last saw in it; the logs as they are now remembered
    (but a rollback's, kept until acknowledged)."""
    others = [a for a in state.actor_names() if a != state.actor]
    known = load(state)
    if not others and not known:
        return []
    problems: list[Problem] = []
    changed = False
    branch: Any = False  # the worktree's branch, read once when a log changed
    for actor in sorted(set(others) | set(known)):
        log, rel = state.log_path(actor), state.log_rel(actor)
        entry = known.get(actor)
        st = fsio.lstat(log)
        fp = f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}" if st is not None else ""
        if entry is not None and entry["fp"] == fp and entry.get("lost") is None:
            continue  # the log is as this worktree last saw it
        if branch is False:
            branch = local.branch(state.root)
        if entry is not None and entry.get("branch") == branch and not _present(log, entry):
            if entry.get("lost") is None:
                entry["lost"] = {"fp": fp}
                changed = True
            problems.append(Problem("rolled-back", rel, None, _message(actor, rel, entry, st is None)))
            continue
        found = _last(log) if st is not None else None
        if found is None:
            changed = changed or actor in known
            known.pop(actor, None)  # gone on another branch, or damaged (the chain check names it)
            continue
        at, rec = found
        known[actor] = {"seq": rec["seq"], "h": str(rec["h"])[:16], "at": at, "fp": fp, "branch": branch, "lost": None}
        changed = True
    if changed:
        _save(state, known)
    return problems


def acknowledge(state: State) -> list[str]:
    """This actor's checkpoint: the teammates' rollbacks named so far are known; their logs as they are now are
    remembered from the next command on. The actors acknowledged."""
    known = load(state)
    gone = sorted(a for a, e in known.items() if e.get("lost") is not None)
    if gone:
        for actor in gone:
            del known[actor]
        _save(state, known)
    return gone


def _message(actor: str, rel: str, entry: dict[str, Any], missing: bool) -> str:
    where = f"{rel} is gone" if missing else f"{rel} no longer holds record {entry['seq']}·{entry['h'][:6]}"
    return (
        f"{actor}'s log was rolled back upstream: {where}, the last of {actor}'s records this worktree saw (and "
        f"any record after it). A log only grows: someone deleted records and pushed, or pushed "
        f"over {actor}'s. Ask {actor}; `git log -p -- {rel}` shows who. Reported until your next checkpoint"
    )


def _last(log: str) -> tuple[int, Any] | None:
    try:
        tail = walback.read_tail(log, 1)
    except (RehydrateError, OSError):
        return None
    return tail.records[-1] if tail.records else None


def _present(log: str, entry: dict[str, Any]) -> bool:
    """Whether the log still holds the record remembered: at its offset; or anywhere (a union merge of two of the
    teammate's own branches moves lines); or archived since by a rotate (the log starts with a later rotate record)."""
    h16, at = entry["h"], entry["at"]
    if fsio.lstat(log) is None:
        return False
    try:
        for offset, raw in walback.Back(log, 1 << 62, end=None).lines():
            if offset == at or h16.encode() in raw:
                rec = walback.decode(raw, offset)
                if str(rec["h"]).startswith(h16):
                    return True
            if offset == 0 and raw:
                rec = walback.decode(raw, offset)
                return records.op_of(rec) is records.ROTATE and int(rec["seq"]) > int(entry["seq"])
    except (wal.BadRecord, RehydrateError, OSError, ValueError, TypeError):
        return True  # damage: the chain check names it, not a rollback
    return False
