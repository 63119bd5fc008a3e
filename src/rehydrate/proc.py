"""Bounded child processes for the checks (git, gh): started together, waited for under one deadline, never left
behind.

Contract:
- `start(cmds, *, env=None, cwd=None) -> Batch` starts every argv at once with os.posix_spawn, each in a process
  group of its own (setpgroup=0), stdin /dev/null, stdout and stderr on pipes. Never a shell, never subprocess,
  threading, signal or selectors: this module is on the hook path (tests/cli/test_cli_imports.py). env None: os.environ.
  The program is looked for on env's PATH (posix_spawnp would use this process's own). A program not found there
  does not raise: its Result has `missing` True.
- `Batch.wait(deadline) -> list[Result]`, in the order of cmds: waits with poll() (never select(): descriptors above
  1,023) until every process has ended or `deadline` seconds have passed since start(); stdout kept up to MAX_OUT
  bytes and stderr up to MAX_ERR (the rest read and dropped, so a child never blocks on a full pipe). At the
  deadline, each process still running gets os.killpg(pid, SIGKILL) then waitpid: no zombie and no open descriptor
  is left (the tests' no_leaked_descriptors fixture watches), and its Result has `timed_out` True. wait() may be
  called once; `Batch.stop()` ends a batch nobody waited for the same way at once (nothing after a wait()).
- cwd: posix_spawn has no chdir action, so start() changes this process's working folder around the spawns and
  changes it back (fchdir): callers on threads pass None and give the child its folder another way (git -C).
- Output is bytes, untrusted; decoding and cleaning are the caller's.
"""

from __future__ import annotations

import os
import select
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MAX_OUT = 256 << 10
MAX_ERR = 4 << 10
_KILL = 9  # SIGKILL (the signal module costs the hook path 0.5 ms to import)
# seconds between two looks at a process that closed its pipes but has not ended: it usually ends microseconds
# later, so the pause starts short and doubles up to the longest (a fixed 5 ms cost every git call about 4 ms)
_REAP_FIRST, _REAP_PAUSE = 0.0001, 0.005


class Result:
    """How one process ended: its exit code (None when it was killed or never started), its stdout and stderr (cut at
    MAX_OUT and MAX_ERR), whether the deadline killed it, whether its program was not found."""

    __slots__ = ("code", "err", "missing", "out", "timed_out")

    def __init__(
        self, code: int | None, out: bytes, err: bytes, timed_out: bool = False, missing: bool = False
    ) -> None:
        self.code = code
        self.out = out
        self.err = err
        self.timed_out = timed_out
        self.missing = missing


class _Child:
    """One started process: its pid (also its process group), its open pipes, what they gave so far."""

    __slots__ = ("code", "ended", "err", "fds", "out", "out_fd", "pid", "result")

    def __init__(self, pid: int, out_fd: int, err_fd: int) -> None:
        self.pid = pid
        self.out_fd = out_fd
        self.fds = {out_fd: MAX_OUT, err_fd: MAX_ERR}  # open pipe -> how many bytes it may keep
        self.out = bytearray()
        self.err = bytearray()
        self.ended = False
        self.code: int | None = None
        self.result: Result | None = None


class Batch:
    """Processes started together by start(); wait() collects them (see the module's docstring)."""

    def __init__(self, children: list[_Child | Result], started: float) -> None:
        self._children = children
        self._started = started
        self._waited = False

    def wait(self, deadline: float) -> list[Result]:
        """Every process's Result, in the order of the commands, by `deadline` seconds after start() at the latest."""
        if self._waited:
            raise RuntimeError("a Batch is waited for once")
        self._waited = True
        running = [c for c in self._children if isinstance(c, _Child)]
        end = self._started + deadline
        try:
            _drain(running, end)
            _reap(running, end)
        finally:
            for child in running:
                _finish(child)
        return [c if isinstance(c, Result) else c.result or Result(None, b"", b"") for c in self._children]

    def from_now(self) -> None:
        """The deadline wait() is given counts from now, not from start(): for a Batch started early, before its
        waiter knew it would wait (a session start's git status, started before the state is read)."""
        self._started = time.monotonic()

    def stop(self) -> None:
        """Ends a Batch nobody waited for: each process still running is killed, each reaped, each pipe closed.
        Nothing when wait() was called."""
        if not self._waited:
            self.wait(0)


def _drain(running: list[_Child], end: float) -> None:
    """Reads every pipe until it closes or the deadline passes; output past a pipe's cap is read and dropped."""
    owner = {fd: child for child in running for fd in child.fds}
    poller = select.poll()  # any descriptor number, unlike select.select
    for fd in owner:
        poller.register(fd, select.POLLIN)
    while owner:
        left = end - time.monotonic()
        if left <= 0:
            return
        for fd, _ in poller.poll(int(left * 1000) + 1):
            child = owner[fd]
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                poller.unregister(fd)
                del owner[fd]
                os.close(fd)
                del child.fds[fd]
                continue
            buf = child.out if fd == child.out_fd else child.err
            room = child.fds[fd] - len(buf)
            if room > 0:
                buf += chunk[:room]


def _reap(running: list[_Child], end: float) -> None:
    """Waits, up to the deadline, for the processes whose pipes are closed to end."""
    for child in running:
        pause = _REAP_FIRST
        while not child.fds and not child.ended:
            pid, status = os.waitpid(child.pid, os.WNOHANG)
            if pid:
                child.ended = True
                child.code = os.waitstatus_to_exitcode(status)
            elif time.monotonic() >= end:
                break
            else:  # it is exiting, or closed its pipes and goes on (rare): bounded by the deadline
                time.sleep(pause)
                pause = min(pause * 2, _REAP_PAUSE)


def _finish(child: _Child) -> None:
    """Kills the process group of a process still running (or of a descendant still holding a pipe), closes its
    pipes and reaps it, so that nothing is left behind; then sets its Result."""
    timed_out = not child.ended or bool(child.fds)
    if timed_out:
        try:
            os.killpg(child.pid, _KILL)
        except OSError:  # the group is gone already
            pass
    for fd in child.fds:
        os.close(fd)
    child.fds = {}
    if not child.ended:
        _, status = os.waitpid(child.pid, 0)
        child.ended = True
        child.code = os.waitstatus_to_exitcode(status)
    code = None if timed_out else child.code
    child.result = Result(code, bytes(child.out), bytes(child.err), timed_out=timed_out)


def start(cmds: Sequence[Sequence[str]], *, env: Mapping[str, str] | None = None, cwd: str | None = None) -> Batch:
    """Starts every argv of cmds at once (see the module's docstring)."""
    started = time.monotonic()
    environ = dict(os.environ if env is None else env)
    back = os.open(".", os.O_RDONLY) if cwd is not None else None
    children: list[_Child | Result] = []
    try:
        if cwd is not None:
            os.chdir(cwd)
        for argv in cmds:
            children.append(_spawn(list(argv), environ))
    finally:
        if back is not None:
            os.fchdir(back)
            os.close(back)
    return Batch(children, started)


def _spawn(argv: list[str], env: dict[str, str]) -> _Child | Result:
    opened: list[int] = []
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        opened.append(devnull)
        out_r, out_w = os.pipe()
        opened += (out_r, out_w)
        err_r, err_w = os.pipe()
        opened += (err_r, err_w)
    except OSError as e:  # out of descriptors: this process does not run, and says why
        for fd in opened:
            os.close(fd)
        return Result(None, b"", f"could not start: {e.strerror}".encode())
    program = which(argv[0], env.get("PATH", os.defpath))
    if program is None:
        for fd in opened:
            os.close(fd)
        return Result(None, b"", f"{argv[0]} not found on PATH".encode(), missing=True)
    try:
        pid = os.posix_spawn(
            program,
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ],
            setpgroup=0,
        )
    except OSError as e:
        os.close(out_r)
        os.close(err_r)
        missing = isinstance(e, FileNotFoundError)
        return Result(None, b"", f"could not start {argv[0]}: {e.strerror}".encode(), missing=missing)
    finally:
        for fd in (devnull, out_w, err_w):
            os.close(fd)
    return _Child(pid, out_r, err_r)


def which(name: str, path: str) -> str | None:
    """The program `name` on the child's PATH (posix_spawnp would search the caller's own PATH instead); a name
    holding a slash is taken as it is. None: not found, or not executable."""
    if "/" in name:
        return name
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
