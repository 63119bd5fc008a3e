"""rehydrate.runner: the command's output is read until the command itself exits (and a short grace), never until
a process it left behind lets go of the pipes; at a deadline the child's group is killed and the pipes closed. The
autouse no_leaked_descriptors fixture fails a test that leaves a descriptor open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rehydrate import runner

# a child that starts a process in a session of its own (out of reach of its group's kill) holding its stdout and
# stderr, writes its pid, says "ready" and then does what `rest` says
LEAVES = """\
import os, subprocess, sys, time
left = subprocess.Popen(["sleep", "1000"], start_new_session=True)
open(sys.argv[1], "w").write(str(left.pid))
print("ready", flush=True)
"""


@pytest.fixture
def pid_file(tmp_path: Path) -> Iterator[Path]:
    """Where the child writes its leftover's pid; the leftover is killed when the test ends."""
    path = tmp_path / "left.pid"
    yield path
    if path.exists():
        try:
            os.kill(int(path.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_run_returns_when_the_command_exits_though_its_leftover_holds_the_pipes(tmp_path: Path, pid_file: Path) -> None:
    out = tmp_path / "out"
    with open(out, "wb") as o, open(tmp_path / "err", "wb") as e:
        ran = runner.run([sys.executable, "-c", LEAVES, str(pid_file)], o.fileno(), e.fileno())
    assert ran.code == 0 and ran.cut is True
    assert out.read_bytes() == b"ready\n" and ran.bytes == [6, 0]
    assert ran.duration < 30  # the command's own time: the leftover sleeps 1000 s
    os.kill(int(pid_file.read_text()), 0)  # and it still runs: run leaves it alone, it only stops reading


def test_run_reads_to_the_end_when_nothing_holds_the_pipes(tmp_path: Path) -> None:
    with open(tmp_path / "out", "wb") as o, open(tmp_path / "err", "wb") as e:
        ran = runner.run(["sh", "-c", "echo out; echo err >&2; exit 4"], o.fileno(), e.fileno())
    assert (ran.code, ran.bytes, ran.cut) == (4, [4, 4], False)


def test_at_the_deadline_the_group_is_killed_and_the_pipes_let_go(tmp_path: Path, pid_file: Path) -> None:
    script = LEAVES + "time.sleep(1000)\n"
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(pid_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert child.stdout is not None
    got: list[bytes] = []
    try:
        assert child.stdout.readline() == b"ready\n"  # the deadline is set once the leftover runs, never a guess
        pumped = runner.pump(child, {child.stdout.fileno(): got.append}, time.monotonic() + 0.5)
    finally:
        child.stdout.close()
    assert pumped.ended is None and pumped.cut is True
    assert child.returncode == -signal.SIGKILL  # reaped: no zombie
    os.kill(int(pid_file.read_text()), 0)  # the setsid'ed leftover escaped the kill: its pipe was closed, not awaited
