"""Real writer processes killed with SIGKILL in the middle of a checkpoint, at every write and sync it makes: verify,
then repair, always ends clean; every checkpoint the writer saw return is in the WAL; 99_next.md shows the last one.

The kill points are not left to the clock. A writer kills itself through the fsio seam, just before or just after the
N-th write, sync or rename of a checkpoint (the WAL append and its sync, the view's temp file and its sync, the
rename, the folder's sync, ...), after a seeded number of checkpoints that return. A first run lists the calls a
checkpoint makes; every one of them is then a kill point, before and after, twice over, in a seeded order.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from pathlib import Path

from rehydrate.store import views
from rehydrate.store.state import State

WRITER = r"""
import os, signal, sys
from rehydrate.fs import write as fsio
from rehydrate.store.state import State

root, first, returns, kill_at, when = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]


def say(*words):
    print(*words, flush=True)


def name(path):
    base = os.path.basename(path)
    if base.endswith(".tmp"):  # fsio.replace's temporary file: .NAME.PID.HEX.tmp
        return "temp of " + base[1:].rsplit(".", 3)[0]
    return os.path.relpath(path, root)


class KillAt(fsio.Calls):
    # Once armed, counts the checkpoint's writes, syncs, renames, ...: kills the process before or after the
    # kill_at-th (kill_at < 0: kills nothing, says each one's name).
    armed = False
    count = 0
    paths = {}

    def call(self, label, real, *args):
        if not self.armed:
            return real(self, *args)
        n = self.count
        self.count += 1
        if n == kill_at and when == "before":
            self.die(label)
        result = real(self, *args)
        if kill_at < 0:
            say("call", label)
        if n == kill_at and when == "after":
            self.die(label)
        return result

    def die(self, label):
        say("killed", when, label)
        os.kill(os.getpid(), signal.SIGKILL)

    def open(self, path, flags, mode=0o644):
        fd = super().open(path, flags, mode)
        self.paths[fd] = path
        return fd

    def write(self, fd, data):
        return self.call("write " + name(self.paths[fd]), fsio.Calls.write, fd, data)

    def fsync(self, fd, point):
        return self.call("fsync " + point, fsio.Calls.fsync, fd, point)

    def replace(self, src, dst):
        return self.call("rename to " + name(dst), fsio.Calls.replace, src, dst)

    def link(self, src, dst):
        return self.call("link " + name(dst), fsio.Calls.link, src, dst)

    def mkdir(self, path):
        return self.call("mkdir " + name(path), fsio.Calls.mkdir, path)

    def unlink(self, path):
        return self.call("unlink " + name(path), fsio.Calls.unlink, path)

    def ftruncate(self, fd, size):
        return self.call("truncate " + name(self.paths[fd]), fsio.Calls.ftruncate, fd, size)


fsio.calls = killer = KillAt()
st = State.open(root)
for i in range(first, first + returns + 1):
    killer.armed = i == first + returns
    out = st.checkpoint(done=f"step {i}", next=f"step {i + 1}")
    say("returned", out.record["seq"], i)
"""

SEED = 20261129
ROUNDS = 2  # each kill point this many times
MUST_COVER = [  # what a checkpoint must write and sync, in this order (tests/crashsim.py shows each is needed)
    "write wal/agent.jsonl",
    "fsync wal.append",
    "write temp of 99_next.md",
    "fsync view.replace.file",
    "rename to 99_next.md",
    "fsync view.replace.dir",
]


def run_writer(root: Path, first: int, returns: int, kill_at: int, when: str) -> tuple[int, list[list[str]]]:
    proc = subprocess.run(
        [sys.executable, "-c", WRITER, str(root), str(first), str(returns), str(kill_at), when],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, -signal.SIGKILL), proc.stderr[-3000:]
    return proc.returncode, [line.split(" ", 2) for line in proc.stdout.splitlines()]


def records(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "wal" / "agent.jsonl").read_text().splitlines()]


def test_sigkill_at_every_write_and_sync_of_a_checkpoint_always_recovers(tmp_path: Path) -> None:
    root = tmp_path / "state"
    State.init(root, "Survive kills")
    returned: dict[int, str] = {}

    # what one checkpoint writes and syncs, in order (after one that returns)
    code, lines = run_writer(root, 0, 1, -1, "-")
    assert code == 0
    calls = [words[1] + " " + words[2] for words in lines if words[0] == "call"]
    returned.update({int(w[1]): f"step {w[2]}" for w in lines if w[0] == "returned"})
    assert [c for c in calls if c in MUST_COVER] == MUST_COVER, calls
    wal_written = calls.index("write wal/agent.jsonl")
    renamed = calls.index("rename to 99_next.md")

    rng = random.Random(SEED)
    plan = [(n, when) for n in range(len(calls)) for when in ("before", "after")] * ROUNDS
    rng.shuffle(plan)
    step, expected_returns, repairs = 2, 2, 0
    covered: set[tuple[str, str]] = set()
    for kill_at, when in plan:
        returns = rng.randint(0, 2)
        code, lines = run_writer(root, step, returns, kill_at, when)
        assert code == -signal.SIGKILL
        assert lines[-1] == ["killed", when, calls[kill_at]]  # the same call, at the same place, each time
        covered.add((when, calls[kill_at]))
        got = {int(w[1]): f"step {w[2]}" for w in lines if w[0] == "returned"}
        assert len(got) == returns
        returned.update(got)
        expected_returns += returns
        killed = step + returns  # the checkpoint that was killed
        step = killed + 1

        # the killed checkpoint's record is in the WAL once its line was written (a killed process loses no write)
        in_wal = kill_at > wal_written or (kill_at == wal_written and when == "after")
        last = records(root)[-1]
        assert (last["op"] == "checkpoint" and last["data"]["done"] == f"step {killed}") == in_wal, (when, kill_at)
        # and 99_next.md lags it until the rename
        lags = in_wal and (kill_at < renamed or (kill_at == renamed and when == "before"))

        st = State.open(root)
        first = st.verify()
        assert all(p.repairable for p in first.problems), first.problems
        assert bool(first.problems) == lags, (when, calls[kill_at], first.problems)
        if first.problems:
            repairs += len(st.verify(repair=True).repaired)
        assert st.verify().ok
        # the last checkpoint in the WAL is what 99_next.md shows
        last_cp = [r for r in records(root) if r["op"] == "checkpoint"][-1]
        assert views.parse_next((root / "99_next.md").read_text())["done"] == last_cp["data"]["done"]

    for seq, done in returned.items():
        rec = records(root)[seq - 1]
        assert rec["seq"] == seq and rec["op"] == "checkpoint" and rec["data"]["done"] == done
    assert len(returned) == expected_returns
    assert covered == {(when, call) for call in calls for when in ("before", "after")}
    assert repairs > 0
    print(
        f"{len(plan)} kills at {len(covered)} kill points ({len(calls)} calls of a checkpoint, before and after), "
        f"{len(returned)} returned checkpoints, {repairs} repairs"
    )
