"""Bounded child processes for the checks (git, gh): started together, waited for under one deadline, never left
behind.

Contract (WP-D builds it; until then start() raises NotImplementedError and nothing calls it):
- `start(cmds, *, env=None, cwd=None) -> Batch` starts every argv at once with os.posix_spawnp, each in a process
  group of its own (setpgroup=0), stdin /dev/null, stdout and stderr on pipes. Never a shell, never subprocess,
  threading, signal or selectors: this module is on the hook path (tests/cli/test_imports.py). env None: os.environ.
  A program not found on PATH does not raise: its Result has `missing` True.
- `Batch.wait(deadline) -> list[Result]`, in the order of cmds: waits with poll() (never select(): descriptors above
  1,023) until every process has ended or `deadline` seconds have passed since start(); stdout kept up to MAX_OUT
  bytes and stderr up to MAX_ERR (the rest read and dropped, so a child never blocks on a full pipe). At the
  deadline, each process still running gets os.killpg(pid, SIGKILL) then waitpid: no zombie and no open descriptor
  is left (the tests' no_leaked_descriptors fixture watches), and its Result has `timed_out` True. wait() may be
  called once.
- Output is bytes, untrusted; decoding and cleaning are the caller's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MAX_OUT = 256 << 10
MAX_ERR = 4 << 10


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


class Batch:
    """Processes started together by start(); wait() collects them (see the module's docstring)."""

    def wait(self, deadline: float) -> list[Result]:
        raise NotImplementedError("the process runner comes with WP-D")


def start(cmds: Sequence[Sequence[str]], *, env: Mapping[str, str] | None = None, cwd: str | None = None) -> Batch:
    """Starts every argv of cmds at once (see the module's docstring)."""
    raise NotImplementedError("the process runner comes with WP-D")
