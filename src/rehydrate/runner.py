"""Run a command for a receipt (`rehydrate run -- CMD`): its output passes through unchanged while it is hashed, and
its exit code comes back as a shell would give it (128 + N for a signal N).

The child inherits stdin and the environment; its stdout and stderr are pipes whose bytes are copied to this
process's own descriptors 1 and 2 as they arrive (the child sees pipes, not a terminal). Ctrl-C reaches the child
(it is in the terminal's process group) and is ignored here while the child runs, so that its end is still
recorded; SIGTERM and SIGHUP sent to this process are passed on to the child.

A run ends when the command itself exits, not when its pipes close: a background job it leaves (`server &`) inherits
them and may hold them for ever. What the command wrote before it exited is in the pipes already; they are read for
GRACE seconds more at most, then closed, and the receipt says the output was cut (the job's later writes fail with
EPIPE). `pump` is that reading loop, shared with the canary's agent run (rehydrate/canary.py).
"""

from __future__ import annotations

import hashlib
import os
import selectors
import signal
import subprocess
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

# seconds the pipes are still read once the command has ended: what it wrote is buffered in them already and takes
# microseconds to read; only output from a process it left behind can still be coming
GRACE = 0.5


class Ran:
    """A finished run: exit (0-255, 128 + N for signal N), duration in seconds (the command's own, to its exit), the
    sha256 of stdout and of stderr and their sizes in bytes, and whether a pipe was still open when reading stopped
    (`cut`: a process the command left behind held it; the hashes cover what came before)."""

    def __init__(self, code: int, duration: float, out: Any, err: Any, sizes: list[int], cut: bool) -> None:
        self.code = code
        self.duration = duration
        self.stdout = out.hexdigest()
        self.stderr = err.hexdigest()
        self.bytes = sizes
        self.cut = cut


class NotRun(OSError):
    """The command could not be started (not found, not executable)."""


def run(argv: Sequence[str], out_fd: int = 1, err_fd: int = 2) -> Ran:
    """Run argv (no shell), copying its output through; NotRun when it cannot start."""
    started = time.monotonic()
    try:
        child = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    except OSError as e:
        raise NotRun(e.errno, e.strerror or str(e), argv[0]) from None
    hashes = [hashlib.sha256(), hashlib.sha256()]
    sizes = [0, 0]
    previous: dict[int, Any] = {}

    def forward(signum: int, frame: object) -> None:
        try:
            child.send_signal(signum)
        except OSError:
            pass

    handlers: list[tuple[int, Any]] = [(signal.SIGINT, signal.SIG_IGN), (signal.SIGTERM, forward)]
    handlers.append((signal.SIGHUP, forward))
    for number, handler in handlers:
        try:
            previous[number] = signal.signal(number, handler)
        except ValueError:  # not the main thread (a test calling run): signals stay as they are
            break
    targets = (out_fd, err_fd)

    def sink(which: int) -> Callable[[bytes], None]:
        def take(chunk: bytes) -> None:
            hashes[which].update(chunk)
            sizes[which] += len(chunk)
            _write_all(targets[which], chunk)

        return take

    assert child.stdout is not None and child.stderr is not None
    try:
        pumped = pump(child, {child.stdout.fileno(): sink(0), child.stderr.fileno(): sink(1)})
    finally:
        for stream in (child.stdout, child.stderr):
            stream.close()  # a background job still writing gets EPIPE, never a reader that waits for it
        for number, handler in previous.items():
            signal.signal(number, handler)
    code = child.wait()  # reaped by pump already
    duration = (pumped.ended or time.monotonic()) - started
    return Ran(128 - code if code < 0 else code, duration, hashes[0], hashes[1], sizes, pumped.cut)


class Pumped:
    """How pump() stopped: when the child was reaped (time.monotonic(); None: it was still running at the deadline
    and its process group was killed), and whether a pipe was still open (something the child left holds it)."""

    def __init__(self, ended: float | None, cut: bool) -> None:
        self.ended = ended
        self.cut = cut


def pump(
    child: subprocess.Popen[bytes], sinks: Mapping[int, Callable[[bytes], None]], end: float | None = None
) -> Pumped:
    """Reads the child's pipes (descriptor -> what takes each chunk) until they close, or until GRACE seconds after
    the child ended, or until `end` (a time.monotonic() deadline; None: none): what the child leaves behind never
    holds the caller. At `end`, a child still running is killed with its process group, so a child given a deadline
    must lead one (start_new_session=True). The caller closes the pipes."""
    # the child's end wakes the loop through a pipe a thread closes once it has reaped it: select() sees that at
    # once, where looking with waitpid between reads would need a timer
    wake_r, wake_w = os.pipe()
    ended: list[float] = []

    def reap() -> None:
        try:
            child.wait()
            ended.append(time.monotonic())
        finally:
            os.close(wake_w)

    waiter = threading.Thread(target=reap, name="rehydrate-reap", daemon=True)
    waiter.start()
    pending = dict(sinks)
    running = True
    stop = end
    try:
        with selectors.DefaultSelector() as sel:  # epoll or kqueue: any descriptor number
            sel.register(wake_r, selectors.EVENT_READ)
            for fd in pending:
                sel.register(fd, selectors.EVENT_READ)
            while pending or running:
                left = None if stop is None else stop - time.monotonic()
                if left is not None and left <= 0:
                    break
                for key, _ in sel.select(left):
                    if key.fd == wake_r:
                        sel.unregister(wake_r)
                        running = False
                        # from now, not from the reap: a loaded machine that runs this thread late still reads
                        # what the child wrote before it exited
                        grace = time.monotonic() + GRACE
                        stop = grace if stop is None else min(stop, grace)
                        continue
                    try:
                        chunk = os.read(key.fd, 1 << 16)
                    except InterruptedError:
                        continue
                    if not chunk:
                        sel.unregister(key.fd)
                        del pending[key.fd]
                        continue
                    pending[key.fd](chunk)
    finally:
        if running and end is not None:  # the deadline (or an error): the child and what it started in its group
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:  # the group is gone already
                pass
        if not running or end is not None:  # else an error with no deadline: the daemon thread is left to its wait
            waiter.join()
        os.close(wake_r)
    return Pumped(None if running else ended[0] if ended else None, bool(pending))


def _write_all(fd: int, data: bytes) -> None:
    """Write everything; a closed reader (a pipe into `head`) stops the copy, not the command."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        except (BrokenPipeError, OSError):
            return
        view = view[n:]
