"""Shared by the benchmarks: interleaved timing, medians, a small table and the command that reproduces a run.

The machine a benchmark runs on is shared and noisy, so no benchmark reports an absolute time as its result: each
measures its variants side by side, round by round (the order rotating each round), and reports ratios of medians.

Importing this module puts the working tree's src/ first on sys.path, so that a benchmark measures the code in this
checkout whatever interpreter runs it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(REPO, "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)

# A benchmark's child processes must not inherit a state folder, an actor, a Python path or a bytecode setting from
# the caller (with PYTHONDONTWRITEBYTECODE, a module without a .pyc is compiled again by every process).
_DROP_ENV = (
    "REHYDRATE_DIR",
    "REHYDRATE_ACTOR",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONPROFILEIMPORTTIME",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX",
)


class BenchError(RuntimeError):
    """A benchmark could not run (a command failed, a state did not verify)."""


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    env.update(extra)
    return env


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def interleave(variants: Mapping[str, Callable[[], float]], rounds: int, warmup: int = 0) -> dict[str, list[float]]:
    """Run every variant once per round, rotating the order each round; each call returns one measurement.

    Warm-up rounds run the same way and are thrown away.
    """
    names = list(variants)
    out: dict[str, list[float]] = {name: [] for name in names}
    for r in range(warmup + rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            value = variants[name]()
            if r >= warmup:
                out[name].append(value)
    return out


def run(
    cmd: Sequence[str], cwd: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a setup command; BenchError (with its output) if it fails."""
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BenchError(f"{shlex.join(cmd)} exited {proc.returncode}\n{proc.stdout}{proc.stderr}")
    return proc


Measure = Callable[[], float]  # one measurement per call, in seconds


def timed(
    cmd: Sequence[str], cwd: str | None = None, env: Mapping[str, str] | None = None, stdin: bytes | None = None
) -> Measure:
    """A measurement: the wall time (seconds) of one whole process, output discarded; BenchError if it fails."""
    argv = list(cmd)

    def measure() -> float:
        t0 = time.perf_counter()
        rc = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            input=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        elapsed = time.perf_counter() - t0
        if rc.returncode != 0:
            run(argv, cwd, env)  # once more, to show its output in the error
            raise BenchError(f"{shlex.join(argv)} exited {rc.returncode}")
        return elapsed

    return measure


GIT_IDENT = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "init.defaultBranch=main"]


def git(cwd: str, *args: str) -> str:
    """`git ARGS` in cwd with a fixed identity, whatever the user's configuration; its output (BenchError if it
    fails)."""
    return run(["git", *GIT_IDENT, *args], cwd=cwd).stdout


@contextlib.contextmanager
def no_fsync() -> Iterator[None]:
    """A set-up's writes through the library without fsync (the measured commands run in other processes, with the
    real system calls)."""
    from rehydrate.fs import write as fsio

    class NoSync(fsio.Calls):
        def fsync(self, fd: int, point: str) -> None:
            return None

    real, fsio.calls = fsio.calls, NoSync()
    try:
        yield
    finally:
        fsio.calls = real


def git_repo(path: str) -> None:
    """A real git repository with one commit, independent of the user's git configuration."""
    os.makedirs(path, exist_ok=True)
    ident = GIT_IDENT
    run(["git", *ident, "init", "-q"], cwd=path)
    with open(os.path.join(path, "app.py"), "w", encoding="utf-8") as f:
        f.write("print('hello')\n")
    run(["git", *ident, "add", "app.py"], cwd=path)
    run(["git", *ident, "commit", "-qm", "first"], cwd=path)


def checkout(repo: str = REPO) -> str:
    """Which code is measured (this checkout by default): the commit, and whether src/ has uncommitted changes."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True, check=False
    )
    if head.returncode != 0:
        return "not a git checkout"
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src", "pyproject.toml"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    return f"commit {head.stdout.strip()}" + (" + uncommitted changes in src/" if dirty.stdout.strip() else "")


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for n, row in enumerate(cells):
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(padded))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def bound(name: str, value: float, limit: float) -> tuple[str, bool]:
    ok = value <= limit
    return f"{'PASS' if ok else 'FAIL'}  {name} = {value:.2f}  (target <= {limit:.2f})", ok


def load() -> str:
    """The machine's load average (1, 5 and 15 minutes) beside its CPU count, for a benchmark's header.

    The ratios are measured side by side, but a loaded machine still widens their spread: this line lets a reader
    judge the noise of a run.
    """
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # not available on this system
        return "load average: not available"
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count() or '?'} CPUs"


def reproduce(script: str, options: Sequence[str]) -> str:
    """The exact command, from the repository root, that reruns this benchmark with the same settings."""
    return f"cd {shlex.quote(REPO)} && {shlex.quote(sys.executable)} {shlex.join(['bench/' + script, *options])}"


def pad_wal(wal_path: str, records: int) -> None:
    """Append sealed, chained copies of the WAL's last record (a `resume`, say) until it holds `records`: the views
    stay exactly what is on disk, so the state reconciles as it did. Much faster than writing each through State."""
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal import record as wal

    last = walback.read_tail(wal_path, 1).records[-1][1]
    fixed = {k: last[k] for k in ("v", "ts", "actor", "op", "data", "views")}
    prev = last["h"]
    with open(wal_path, "ab", buffering=1 << 20) as f:
        for seq in range(int(last["seq"]) + 1, records + 1):
            rec = wal.seal({**fixed, "seq": seq, "prev": prev})
            f.write(wal.encode(rec))
            prev = rec["h"]
        f.flush()
        os.fsync(f.fileno())
