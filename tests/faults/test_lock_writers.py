"""Two writers are never inside the state's lock at once, even when its lock file is deleted or replaced under a
holder (`git clean -fdX` deletes it: it is git-ignored), or the state folder is replaced while a writer waits.

Each test drives real writer processes by events, never by sleeps: a writer that must hold the lock stops inside it,
right before its WAL append (its record is built: seq and prev chosen), prints "locked" and waits for a line on its
stdin; a writer that finds the lock taken prints "blocked" before it waits for it. A second writer let in while the
first holds the lock writes the same seq with the same prev: a forked chain.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import os
import queue
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import git
from rehydrate.errors import RehydrateError
from rehydrate.fs import lock as fslock
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

TIMEOUT = 60  # generous: every wait below ends on an event long before this

WRITER = r"""
import fcntl, os, sys
from rehydrate.fs import write as fsio
from rehydrate.fs import lock as fslock
from rehydrate.store.state import State

root, mode, name = sys.argv[1:4]


def say(*words):
    print(*words, flush=True)


if "report" in mode:  # say "blocked" before waiting for a lock someone holds
    real_flock = fcntl.flock

    def flock(fd, op):
        if op & fcntl.LOCK_NB or op == fcntl.LOCK_UN:
            return real_flock(fd, op)
        try:
            return real_flock(fd, op | fcntl.LOCK_NB)
        except BlockingIOError:
            say("blocked")
            if "wait" in mode:  # and wait for a line on stdin before waiting for the lock
                sys.stdin.readline()
            return real_flock(fd, op)

    fcntl.flock = flock

if "old" in mode:  # rehydrate 0.1's lock: a flock on state/.lock only
    class OldLock:
        def __init__(self, folder, *, shared=False, words=None):
            self.path = os.path.join(folder, ".lock")

        def __enter__(self):
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            fcntl.flock(self.fd, fcntl.LOCK_EX)

        def __exit__(self, *exc):
            os.close(self.fd)

    fslock.locked = OldLock

if "pause" in mode:  # stop inside the lock, right before the WAL append, until a line arrives on stdin
    class PauseBeforeWalAppend(fsio.Calls):
        def open(self, path, flags, mode=0o644):
            if path.endswith(".jsonl") and flags & os.O_APPEND:
                say("locked")
                sys.stdin.readline()
            return super().open(path, flags, mode)

    fsio.calls = PauseBeforeWalAppend()

out = State.open(root).checkpoint(done=f"{name} checkpointed", next="the next step")
say("done", out.record["seq"])
"""


class Writer:
    """A writer process whose stdout lines are read as they come."""

    def __init__(self, root: Path, mode: str, name: str) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), mode, name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self) -> str:
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"writer {self.name} said nothing for {TIMEOUT} s")
        if line is None:
            code = self.proc.wait(timeout=TIMEOUT)
            assert self.proc.stderr is not None
            pytest.fail(f"writer {self.name} exited {code} early:\n{self.proc.stderr.read()[-3000:]}")
        return line

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def finish(self, line: str | None = None) -> int:
        """Wait for the writer's "done" line (unless it was read already) and its exit; the seq it wrote."""
        line = line if line is not None else self.next_line()
        assert line.startswith("done "), f"writer {self.name}: {line!r}"
        assert self.proc.wait(timeout=TIMEOUT) == 0
        return int(line.split()[1])


@pytest.fixture
def writers() -> Iterator[list[Writer]]:
    """The writers a test starts; any still running at its end (a failed test) are killed."""
    started: list[Writer] = []
    yield started
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()
        w.proc.wait()
        w.pump.join(TIMEOUT)  # the pump reads stdout to its end before it is closed
        for pipe in (w.proc.stdin, w.proc.stdout, w.proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except BrokenPipeError:  # a writer killed before it read our last line
                    pass


def start(started: list[Writer], root: Path, mode: str, name: str) -> Writer:
    w = Writer(root, mode, name)
    started.append(w)
    return w


def chain_problems(root: Path) -> list[str]:
    """Where the WAL is not one linear chain: each seq once, in order, each prev the previous record's h."""
    records = [wal.decode(line) for line in (root / "wal" / "agent.jsonl").read_bytes().splitlines()]
    problems = []
    seqs = [r["seq"] for r in records]
    if seqs != list(range(1, len(records) + 1)):
        problems.append(f"seqs {seqs}")
    for a, b in itertools.pairwise(records):
        if b["prev"] != a["h"]:
            problems.append(f"record {b['seq']} ({b['data'].get('done')}) does not follow record {a['seq']}")
    return problems


def lose_the_lock_file(root: Path, how: str) -> None:
    lock = root / ".lock"
    if how == "git clean -fdX":
        git(root.parent, "clean", "-fdX", "-q")  # deletes every ignored file: .lock among them
    elif how == "deleted":
        lock.unlink()
    else:
        fresh = root / ".lock.fresh"
        fresh.write_bytes(b"")
        os.replace(fresh, lock)
    assert not lock.exists() or how == "replaced"


@pytest.mark.parametrize("how", ["git clean -fdX", "deleted", "replaced"])
def test_lock_file_lost_under_a_writer_lets_no_second_writer_in(repo: Path, writers: list[Writer], how: str) -> None:
    root = repo / "state"
    State.init(root, "One writer at a time")
    git(repo, "add", "state")
    git(repo, "commit", "-qm", "state")
    a = start(writers, root, "pause", "a")
    assert a.next_line() == "locked"  # a holds the lock; its record (seq 2, prev = init's h) is built
    lose_the_lock_file(root, how)
    b = start(writers, root, "report", "b")
    first = b.next_line()  # "blocked": b waits for a; "done 2": b got in while a held the lock
    a.go()
    seqs = {a.finish(), b.finish(None if first == "blocked" else first)}
    assert chain_problems(root) == [], f"two writers were inside the lock at once (b said {first!r} first)"
    assert first == "blocked" and seqs == {2, 3}
    assert State.open(root).verify().ok


def test_a_waiter_on_a_replaced_state_folder_locks_the_new_one(tmp_path: Path, writers: list[Writer]) -> None:
    """b waits on the folder's lock; the folder is replaced by a copy, where c takes the lock, and the lock file is
    deleted. When a lets the old folder's lock go, b must see that the folder it locked is no longer the state
    folder, and wait for c."""
    root = tmp_path / "state"
    State.init(root, "One writer at a time")
    a = start(writers, root, "pause", "a")
    assert a.next_line() == "locked"
    b = start(writers, root, "report-wait", "b")
    assert b.next_line() == "blocked"  # b waits on the lock a holds, then on our "go"
    os.rename(root, tmp_path / "state.old")
    shutil.copytree(tmp_path / "state.old", root)
    a.go()
    assert a.finish() == 2  # written into the new folder
    c = start(writers, root, "pause", "c")
    assert c.next_line() == "locked"  # c holds the new folder's lock, its record (seq 3) built
    (root / ".lock").unlink()  # only the folder's lock stands between b and c now
    b.go()  # b now gets the old folder's lock, which nobody holds
    second = b.next_line()  # "blocked": b moved on to the new folder and waits for c; "done 3": b got in
    c.go()
    assert c.finish() == 3
    if second == "blocked":
        b.go()
    b.finish(None if second == "blocked" else second)
    assert chain_problems(root) == [], f"b wrote while c held the lock (b said {second!r})"
    assert second == "blocked"


def test_a_writer_that_locks_only_the_lock_file_still_excludes(tmp_path: Path, writers: list[Writer]) -> None:
    """A writer of rehydrate 0.1 (a flock on state/.lock, nothing else) and a current one never write at once."""
    root = tmp_path / "state"
    State.init(root, "One writer at a time")
    old = start(writers, root, "old pause", "old")
    assert old.next_line() == "locked"
    b = start(writers, root, "report", "b")
    first = b.next_line()
    old.go()
    old.finish()
    b.finish(None if first == "blocked" else first)
    assert chain_problems(root) == [], f"a current writer wrote while an 0.1 writer held the lock ({first!r})"
    assert first == "blocked"


def _can_flock(path: Path, how: int) -> bool:
    """Whether an open file description of our own could take this lock now (flocks of two descriptions conflict,
    even in one process)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_exclusive_and_shared_modes(tmp_path: Path) -> None:
    root = tmp_path / "state"
    State.init(root, "Modes")
    with fslock.locked(str(root)):
        assert not _can_flock(root, fcntl.LOCK_SH) and not _can_flock(root / ".lock", fcntl.LOCK_SH)
    with fslock.locked(str(root), shared=True):
        assert _can_flock(root, fcntl.LOCK_SH) and _can_flock(root / ".lock", fcntl.LOCK_SH)
        assert not _can_flock(root, fcntl.LOCK_EX) and not _can_flock(root / ".lock", fcntl.LOCK_EX)
        with fslock.locked(str(root), shared=True):  # readers share
            pass
    assert _can_flock(root, fcntl.LOCK_EX) and _can_flock(root / ".lock", fcntl.LOCK_EX)  # released


def test_read_only_lock_file_keeps_shared_mode_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As before: a lock file that cannot be created (a read-only checkout) still lets the state be verified; a
    write is refused with a message."""
    root = tmp_path / "state"
    State.init(root, "Read-only")
    (root / ".lock").unlink()
    real_open = os.open

    def read_only(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if str(path).endswith(".lock") and flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", read_only)
    assert State.open(root).verify().ok
    with pytest.raises(RehydrateError, match="lock file"):
        State.open(root).invariant("Lock before writing", because="two writers fork the chain")


def test_folder_lock_unsupported_falls_back_to_the_lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a folder cannot be flocked (some network or FUSE filesystems), the lock file alone is held."""
    root = tmp_path / "state"
    State.init(root, "Fallback")
    real_flock = fcntl.flock
    refused: list[int] = []

    def no_folder_locks(fd: int, op: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            refused.append(fd)
            raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))
        real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", no_folder_locks)
    with fslock.locked(str(root)):
        monkeypatch.setattr(fcntl, "flock", real_flock)
        assert refused and not _can_flock(root / ".lock", fcntl.LOCK_SH)
    State.open(root).checkpoint(done="x", next="y")
