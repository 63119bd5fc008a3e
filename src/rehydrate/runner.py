"""Run a command for a receipt (`rehydrate run -- CMD`): its output passes through unchanged while it is hashed, and
its exit code comes back as a shell would give it (128 + N for a signal N).

The child inherits stdin and the environment; its stdout and stderr are pipes whose bytes are copied to this
process's own descriptors 1 and 2 as they arrive (the child sees pipes, not a terminal). Ctrl-C reaches the child
(it is in the terminal's process group) and is ignored here while the child runs, so that its end is still
recorded; SIGTERM and SIGHUP sent to this process are passed on to the child.
"""

from __future__ import annotations

import hashlib
import os
import selectors
import signal
import subprocess
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Ran:
    """A finished run: exit (0-255, 128 + N for signal N), duration in seconds, the sha256 of stdout and of stderr
    and their sizes in bytes."""

    def __init__(self, code: int, duration: float, out: Any, err: Any, sizes: list[int]) -> None:
        self.code = code
        self.duration = duration
        self.stdout = out.hexdigest()
        self.stderr = err.hexdigest()
        self.bytes = sizes


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
    try:
        with selectors.DefaultSelector() as sel:
            assert child.stdout is not None and child.stderr is not None
            sel.register(child.stdout, selectors.EVENT_READ, 0)
            sel.register(child.stderr, selectors.EVENT_READ, 1)
            targets = (out_fd, err_fd)
            while sel.get_map():
                for key, _ in sel.select():
                    which = key.data
                    try:
                        chunk = os.read(key.fd, 1 << 16)
                    except InterruptedError:
                        continue
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    hashes[which].update(chunk)
                    sizes[which] += len(chunk)
                    _write_all(targets[which], chunk)
        code = child.wait()
    finally:
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
    duration = time.monotonic() - started
    return Ran(128 - code if code < 0 else code, duration, hashes[0], hashes[1], sizes)


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
