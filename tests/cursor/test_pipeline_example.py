"""examples/pipeline.py, killed with SIGKILL mid-run and resumed: every item once, in order.

No kill is timed by a clock. One test kills from outside once the example has printed k more lines (each line names a
record already synced), with its stdout a one-page pipe: it cannot get more than a page ahead of what the test read,
so it is still running when the kill is sent. The other kills it from inside, at the N-th system call of its writes
(the fsio seam), before the call: every kind of point (before the output write, before its sync, before the
progress file is rewritten) in turn.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "pipeline.py"
ARGS = ["in.txt", "out.jsonl", "progress.json"]


def items(n: int) -> list[str]:
    return [f"line {i} " + "word " * (i % 7) for i in range(n)]


def on_disk(tmp: Path) -> list[dict[str, object]]:
    path = tmp / "out.jsonl"
    return [json.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


def finish_and_check(tmp: Path, expected: list[str]) -> None:
    r = subprocess.run([sys.executable, str(EXAMPLE), *ARGS], cwd=tmp, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    records = on_disk(tmp)
    assert [r["index"] for r in records] == list(range(len(expected)))
    assert [r["words"] for r in records] == [len(x.split()) for x in expected]
    assert json.loads((tmp / "progress.json").read_text()) == {"cursor": len(expected)}


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="needs a pipe of one page (Linux)")
def test_killed_from_outside_after_observed_progress_and_resumed(tmp_path: Path) -> None:
    n = 400
    expected = items(n)
    (tmp_path / "in.txt").write_text("\n".join(expected) + "\n")
    rng = random.Random(5)
    kills = 0
    while True:
        before = len(on_disk(tmp_path))
        k = rng.randint(5, 60)
        read_fd, write_fd = os.pipe()
        fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, 4096)
        capacity = 4096 // 40 + 1  # the most lines the example can print ahead of the test: each is > 40 bytes
        if n - before <= k + capacity + 10:  # too near the end to be sure of catching it running
            os.close(read_fd)
            os.close(write_fd)
            break
        proc = subprocess.Popen([sys.executable, str(EXAMPLE), *ARGS], cwd=tmp_path, stdout=write_fd)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb", buffering=0) as out:  # unbuffered: no line read ahead of the test
            seen = [out.readline() for _ in range(k)]
            assert all(len(line) > 40 for line in seen), seen
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=60) == -signal.SIGKILL  # it was still running: it could not finish unread
        kills += 1
        done = int(seen[-1].split(b"/")[0])
        records = on_disk(tmp_path)
        assert len(records) >= done  # every record it said was written is there
        assert [r["index"] for r in records] == list(range(len(records)))
    assert kills >= 2  # by the numbers above: 400 > 2 * (60 + capacity + 10)
    finish_and_check(tmp_path, expected)


# Runs the example with the N-th system call of fsio killing the process just before it is made.
KILL_AT = r"""
import os, runpy, sys
from rehydrate.fs import write as fsio

N = int(sys.argv[1])
calls = 0


class KillAt(fsio.Calls):
    pass


def wrap(name):
    real = getattr(fsio.Calls, name)

    def call(self, *args):
        global calls
        calls += 1
        if calls == N:
            os.kill(os.getpid(), 9)
        return real(self, *args)

    setattr(KillAt, name, call)


for name in ("open", "write", "pwrite", "fsync", "close", "replace", "link", "mkdir", "unlink", "ftruncate"):
    wrap(name)
fsio.calls = KillAt()
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_killed_at_the_nth_write_and_resumed(tmp_path: Path) -> None:
    n = 120
    expected = items(n)
    (tmp_path / "in.txt").write_text("\n".join(expected) + "\n")
    rng = random.Random(7)
    points = list(range(1, 12)) + [rng.randint(12, 60) for _ in range(5)]  # each point of a commit, then further
    for at in points:
        r = subprocess.run(
            [sys.executable, "-c", KILL_AT, str(at), str(EXAMPLE), *ARGS],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == -signal.SIGKILL, (at, r.returncode, r.stderr)
        printed = [line for line in r.stdout.splitlines() if line]
        records = on_disk(tmp_path)
        assert [x["index"] for x in records] == list(range(len(records))), at
        assert len(records) >= (int(printed[-1].split("/")[0]) if printed else 0), at
    assert len(on_disk(tmp_path)) < n  # it never finished under the killer
    finish_and_check(tmp_path, expected)
