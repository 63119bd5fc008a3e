"""store/session.py: what a command did (Outcome), the folders' fingerprint its cache is written with, and a read
that holds the lock while the state is reconciled (Reading)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from rehydrate.store import Problem
from rehydrate.store.session import Outcome, Reading, dirs_fingerprint
from rehydrate.store.state import State


def test_an_outcome_is_ok_when_its_problems_are_information_only() -> None:
    assert Outcome().ok and Outcome().problems == [] and Outcome().repaired == []
    assert Outcome(problems=[Problem("switched", "wal/agent.jsonl", None, "a branch switch")]).ok
    damaged = Outcome(problems=[Problem("chain-broken", "wal/agent.jsonl", 3, "broken")])
    assert not damaged.ok
    assert repr(damaged) == "Outcome(repaired=[], problems=[Problem('chain-broken', 'wal/agent.jsonl', 3, 'broken')])"


def test_the_folders_fingerprint_changes_when_a_file_comes_or_goes(tmp_path: Path) -> None:
    wal = tmp_path / "wal"
    wal.mkdir()

    def now() -> str:
        return dirs_fingerprint(os.lstat(tmp_path), os.lstat(wal))

    for folder in (tmp_path, wal):  # an old mtime, so that a change now shows however coarse the clock
        os.utime(folder, ns=(0, 0))
    before = now()
    assert before == now()
    (wal / "x.tmp").write_text("")
    after = now()
    assert after != before
    os.utime(wal, ns=(0, 0))
    os.utime(tmp_path, ns=(0, 0))
    settled = now()
    (tmp_path / "y.tmp").write_text("")
    assert now() != settled
    assert dirs_fingerprint(None, None) == "|"


def test_a_reading_holds_the_lock_on_a_reconciled_snapshot(state: State) -> None:
    with Reading(state) as snap:
        assert snap.last["op"] == "checkpoint" and snap.problems == []
        fd = os.open(state.root, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                taken = True
            except BlockingIOError:
                taken = False
        finally:
            os.close(fd)
        assert not taken
