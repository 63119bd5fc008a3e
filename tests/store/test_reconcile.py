"""store/reconcile.py: the recognize step under the lock: the log's tail against the views, the safe repairs made
and named, what is still wrong named with its file."""

from __future__ import annotations

from pathlib import Path

from rehydrate.fs import lock as fslock
from rehydrate.store.reconcile import keyed, reconcile
from rehydrate.store.session import Snapshot
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines


def _reconcile(root: str, repair: bool = False) -> Snapshot:
    state = State.open(root)
    with fslock.locked(state.root):
        return reconcile(state, repair)


def test_a_whole_state_reconciles_to_its_last_record(state: State) -> None:
    snap = _reconcile(state.root)
    last = list(wallines.records(state.wal_path))[-1]
    assert snap.last == last and snap.problems == [] and snap.repaired == []
    assert not keyed(state)


def test_a_torn_tail_is_cut_with_a_copy_kept_and_a_view_edit_named(state: State) -> None:
    with open(state.wal_path, "ab") as f:
        f.write(b'{"seq": 99, "op": "chec')
    snap = _reconcile(state.root, repair=True)
    assert snap.repaired == [
        "cut a torn last line off state/wal/agent.jsonl (line 5, 23 bytes: the last line has no newline (a torn "
        "write)); kept in state/wal/agent.jsonl.broken"
    ]
    assert Path(state.wal_path).read_bytes().endswith(b"\n")
    assert Path(state.wal_path + ".broken").read_bytes() == b'{"seq": 99, "op": "chec'
    nxt = Path(state.root, "99_next.md")
    nxt.write_text(nxt.read_text() + "edited by hand\n")
    snap = _reconcile(state.root)
    assert [(p.code, p.file) for p in snap.problems] == [("view-edited", "state/99_next.md")]
