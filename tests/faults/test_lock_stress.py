"""Writers checkpointing at once while the lock file keeps disappearing: the WAL stays one linear chain.

Every writer deletes or replaces `state/.lock` itself at each checkpoint, from inside the lock (through the fsio
seam: right after its WAL append, and again after writing the view's temp file), so every checkpoint has its lock
file taken away while others wait; another process deletes it over and over besides, at whatever moments it gets.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

from rehydrate.store import views
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

WRITERS, PER = 4, 60

WRITER = r"""
import os, sys
from rehydrate.fs import write as fsio
from rehydrate.store.state import State

root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
lock = os.path.join(root, ".lock")


class LoseTheLockFile(fsio.Calls):
    def fsync(self, fd, point):
        super().fsync(fd, point)
        try:
            if point == "wal.append":  # what `git clean -fdX` does
                os.unlink(lock)
            elif point == "view.replace.file":  # a new, unlocked file in its place
                fresh = lock + "." + name
                open(fresh, "w").close()
                os.replace(fresh, lock)
        except FileNotFoundError:
            pass


fsio.calls = LoseTheLockFile()
st = State.open(root)
for i in range(count):
    st.checkpoint(done=f"{name}-{i}", next=f"{name}-{i + 1}")
"""

DELETER = r"""
import os, sys
lock, stop = sys.argv[1], sys.argv[2]
deleted = 0
print("started", flush=True)
while not os.path.exists(stop):
    try:
        os.unlink(lock)
        deleted += 1
    except FileNotFoundError:
        pass
    os.sched_yield()
print("deleted", deleted, flush=True)
"""


def test_writers_while_the_lock_file_keeps_disappearing(tmp_path: Path) -> None:
    root = tmp_path / "state"
    State.init(root, "Stress the lock")
    stop = tmp_path / "stop"
    deleter = subprocess.Popen(
        [sys.executable, "-c", DELETER, str(root / ".lock"), str(stop)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert deleter.stdout is not None and deleter.stdout.readline() == "started\n"
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(root), f"w{n}", str(PER)],
                cwd=tmp_path,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(WRITERS)
        ]
        failed = [
            (w.returncode, err[-1500:]) for w in writers for _, err in [w.communicate(timeout=600)] if w.returncode
        ]
    finally:
        stop.write_text("stop")
        out, _ = deleter.communicate(timeout=60)

    records = [wal.decode(line) for line in (root / "wal" / "agent.jsonl").read_bytes().splitlines()]
    assert [r["seq"] for r in records] == list(range(1, WRITERS * PER + 2)), "a seq missing or written twice"
    for a, b in itertools.pairwise(records):
        assert b["prev"] == a["h"], f"record {b['seq']} does not follow record {a['seq']}: a forked chain"
    assert not failed, f"writers failed: {failed}"
    checkpoints = [r for r in records if r["op"] == "checkpoint"]
    for n in range(WRITERS):  # each writer's checkpoints, all there, in its own order
        mine = [r["data"]["done"] for r in checkpoints if r["data"]["done"].startswith(f"w{n}-")]
        assert mine == [f"w{n}-{i}" for i in range(PER)]
    assert State.open(root).verify().ok
    assert views.parse_next((root / "99_next.md").read_text())["done"] == checkpoints[-1]["data"]["done"]
    print(f"{len(checkpoints)} checkpoints by {WRITERS} writers, each losing the lock file twice; {out.strip()} more")
