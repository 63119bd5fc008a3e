"""The seen cache's verdict on 10_invariants.md when another actor appended to it: checked line by line against
every actor's log and found whole, so that the next read (which writes nothing, so my own binding stays behind)
does not read every log again while 10 and every log are as they were."""

from __future__ import annotations

import os

from rehydrate.fs import write as fsio
from rehydrate.store.latches import binding
from rehydrate.store.layout import INVARIANTS
from rehydrate.store.local.seen import fingerprint
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State


def checked_mark(state: State, bound: str, found: str) -> str:
    """The cache's binding for 10 checked whole: my binding, every log's fingerprint, the file's running binding."""
    return f"{CHECKED}{logs_print(state)}:{bound}|{found}"


CHECKED = "checked:"  # the seen cache's mark for 10 found whole and recorded by every actor's logs, past my binding


def logs_print(state: State) -> str:
    """Every log's fingerprint in wal/, hashed short: a log changed, added or removed changes it (one stat each)."""
    try:
        names = sorted(n for n in os.listdir(state.wal_dir) if n.endswith(".jsonl"))
    except OSError:
        return "-"
    parts = []
    for name in names:
        st = fsio.lstat(os.path.join(state.wal_dir, name))
        parts.append(f"{name}={fingerprint(st) if st is not None else '-'}")
    return wal.sha256("\n".join(parts).encode())[:16]


def checked(state: State, snap: Snapshot, st: os.stat_result | None, bound: str) -> bool:
    """10_invariants.md is as this worktree last checked it line by line against every actor's log and found every
    line recorded (another actor appended since my last record): the running binding of the file, not read again.
    A read does not write, so without this every session start of an actor would read every log."""
    known = snap.cache.views.get(INVARIANTS)
    if known is None or st is None or not known[1].startswith(CHECKED) or known[0] != fingerprint(st):
        return False
    mark = checked_mark(state, bound, "")  # and every log as it was then
    if not known[1].startswith(mark):
        return False
    found = binding.Lines.parse(known[1][len(mark) :])
    if found is None:
        return False
    snap.set_invariants(found)
    return True
