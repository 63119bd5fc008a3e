"""In-process checkpoint throughput against the fsync floor.

`State.checkpoint()` in a loop, in blocks, interleaved with a raw loop of os.write + os.fsync of a record of the same
size on one file (the most a durable append can do on this disk). Three checkpoint variants separate the costs:

  git repo        the state inside a temporary git repository: one `git status` subprocess per checkpoint
  outside git     the state outside any repository: git still starts, and fails fast
  git stubbed     gitinfo.start and gitinfo.finish replaced in-process (no git process; a constant answer):
                  rehydrate's own work and its fsyncs only

and one more reference, the floor: the durable writes a checkpoint makes, done raw (append + fsync, then temp file
create + write + fsync + os.replace + fsync of the folder), so that "git stubbed / floor" is rehydrate's own overhead.

The fsyncs one checkpoint costs are counted by swapping store.fsio.calls for a Calls that counts calls by sync point.

    python bench/throughput.py [--rounds 30] [--block 50]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import _common
from rehydrate import __version__, brief
from rehydrate.fs import write as fsio
from rehydrate.store.git import info as gitinfo
from rehydrate.store.state import State
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal


class CountingCalls(fsio.Calls):
    """The real system calls, counted: fsyncs by their sync point, the others by name."""

    def __init__(self) -> None:
        self.fsyncs: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        self.calls["open"] += 1
        return super().open(path, flags, mode)

    def write(self, fd: int, data: bytes) -> int:
        self.calls["write"] += 1
        return super().write(fd, data)

    def fsync(self, fd: int, point: str) -> None:
        self.calls["fsync"] += 1
        self.fsyncs[point] += 1
        super().fsync(fd, point)

    def replace(self, src: str, dst: str) -> None:
        self.calls["replace"] += 1
        super().replace(src, dst)


# What a checkpoint can ask of the kernel, counted at the os module (fsio.calls sees the writes only)
SYSCALLS = (
    *("open", "close", "lstat", "stat", "fstat", "pread", "read", "listdir", "scandir"),
    *("write", "fsync", "replace", "ftruncate", "getpid", "urandom"),
)


@contextlib.contextmanager
def os_calls() -> Iterator[Counter[str]]:
    """Every call of the os functions in SYSCALLS (and fcntl.flock) in the block, counted by name."""
    import fcntl

    found: Counter[str] = Counter()
    saved = {name: getattr(os, name) for name in SYSCALLS}
    saved_flock = fcntl.flock

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            found[name] += 1
            return real(*args, **kwargs)

        return call

    for name, real in saved.items():
        setattr(os, name, spy(name, real))
    fcntl.flock = spy("flock", saved_flock)
    try:
        yield found
    finally:
        for name, real in saved.items():
            setattr(os, name, real)
        fcntl.flock = saved_flock


@contextlib.contextmanager
def counting() -> Iterator[CountingCalls]:
    saved = fsio.calls
    fsio.calls = counter = CountingCalls()
    try:
        yield counter
    finally:
        fsio.calls = saved


TARGET = 2.0  # an in-process checkpoint, git left out, at most this many times the floor
STUB_GIT: dict[str, Any] = {"head": "0" * 40, "branch": "main", "dirty": []}


@contextlib.contextmanager
def git_stubbed() -> Iterator[None]:
    """No git process: gitinfo.start starts nothing, and gitinfo.finish answers what a clean repository would.

    A write starts git with gitinfo.start and reads its answer with gitinfo.finish (init with gitinfo.snapshot, which
    calls both); replacing snapshot alone left every checkpoint starting a real `git status`.
    """
    saved = gitinfo.start, gitinfo.finish

    def start(state_dir: str) -> gitinfo.Pending:  # same signatures as the real ones
        return gitinfo.Pending(None, None, "stubbed by bench/throughput.py")

    def finish(pending: gitinfo.Pending) -> dict[str, Any]:
        return dict(STUB_GIT, dirty=[])

    gitinfo.start, gitinfo.finish = start, finish
    try:
        yield
    finally:
        gitinfo.start, gitinfo.finish = saved


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/throughput.py",
        description="In-process State.checkpoint() throughput (in a git repo, outside git, git stubbed) against "
        "raw os.write+os.fsync of a same-size record, interleaved in blocks; and the fsyncs one checkpoint costs.",
    )
    p.add_argument("--rounds", type=int, default=30, help="measured rounds (default 30)")
    p.add_argument("--block", type=int, default=50, help="operations per variant per round (default 50)")
    p.add_argument("--warmup", type=int, default=2, help="rounds run first and thrown away (default 2)")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.block < 1 or args.warmup < 0:
        p.error("--rounds and --block must be at least 1, --warmup at least 0")
    return args


def checkpoint_block(state: State, block: int, stub: bool) -> Callable[[], float]:
    """A measurement: seconds per checkpoint over one block."""
    counter = [0]

    def measure() -> float:
        with git_stubbed() if stub else contextlib.nullcontext():
            t0 = time.perf_counter()
            for _ in range(block):
                counter[0] += 1
                state.checkpoint(f"step {counter[0]}", f"step {counter[0] + 1}")
            return (time.perf_counter() - t0) / block

    return measure


def raw_block(path: str, size: int, block: int) -> Callable[[], float]:
    """A measurement: seconds per os.write + os.fsync of one record of `size` bytes, appended to one file."""
    record = b"x" * (size - 1) + b"\n"

    def measure() -> float:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            t0 = time.perf_counter()
            for _ in range(block):
                os.write(fd, record)
                os.fsync(fd)
            return (time.perf_counter() - t0) / block
        finally:
            os.close(fd)

    return measure


def floor_block(folder: str, wal_size: int, view_size: int, block: int) -> Callable[[], float]:
    """A measurement: seconds per set of the durable writes one checkpoint makes, done raw.

    Append + fsync a WAL-sized record, then a view-sized temp file: create, write, fsync, os.replace, fsync the folder.
    """
    record = b"x" * (wal_size - 1) + b"\n"
    view = b"y" * (view_size - 1) + b"\n"
    log = os.path.join(folder, "wal.jsonl")
    target = os.path.join(folder, "next.md")
    tmp = os.path.join(folder, ".next.md.tmp")

    def measure() -> float:
        t0 = time.perf_counter()
        for _ in range(block):
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            os.write(fd, record)
            os.fsync(fd)
            os.close(fd)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            os.write(fd, view)
            os.fsync(fd)
            os.close(fd)
            os.replace(tmp, target)
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            os.fsync(fd)
            os.close(fd)
        return (time.perf_counter() - t0) / block

    return measure


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-throughput-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _count(states: dict[str, State]) -> tuple[CountingCalls, CountingCalls, Counter[str]]:
    """The system calls of one checkpoint and one resume in the git repository (through fsio.calls), and every one
    of the git-stubbed object's next checkpoint (as the stub variant runs it)."""
    with counting() as one_checkpoint:
        states["repo"].checkpoint("counted", "count again")
    with counting() as one_resume:
        brief.resume(states["repo"])
    with git_stubbed(), os_calls() as stubbed:
        states["stub"].checkpoint("counted", "count again")
    return one_checkpoint, one_resume, stubbed


def _verdict(times: dict[str, list[float]]) -> str:
    """The target's line: git stubbed over the floor, as the ratio of the medians and as the median of each round's."""
    ratio = statistics.median(times["stub"]) / statistics.median(times["floor"])
    per_round = statistics.median(s / f for s, f in zip(times["stub"], times["floor"], strict=True))
    verdict = "PASS" if max(ratio, per_round) <= TARGET else "FAIL"
    return (
        f"git stubbed / floor: {ratio:.2f} (median of the rounds' own ratios {per_round:.2f}; "
        f"target <= {TARGET}: {verdict})"
    )


def _bench(args: argparse.Namespace, root: str) -> int:
    repo = os.path.join(root, "repo")
    _common.git_repo(repo)
    nogit = os.path.join(root, "nogit")
    stub = os.path.join(root, "stub")
    os.mkdir(nogit)
    os.mkdir(stub)
    states = {}
    for name, parent in (("repo", repo), ("nogit", nogit), ("stub", stub)):
        states[name], _ = State.init(os.path.join(parent, "state"), "measure checkpoint throughput")
    with git_stubbed():
        states["stub"].checkpoint("first", "second")
    states["nogit"].checkpoint("first", "second")
    out = states["repo"].checkpoint("first", "second")
    if not out.ok or out.record is None:
        raise _common.BenchError(f"checkpoint failed: {out.problems}")
    nogit_git = walback.read_tail(states["nogit"].wal_path, 1).records[-1][1].get("git")
    record_size = len(wal.encode(out.record))
    view_size = os.path.getsize(os.path.join(repo, "state", "99_next.md"))
    floor = os.path.join(root, "floor")
    os.mkdir(floor)

    one_checkpoint, one_resume, stubbed_calls = _count(states)

    variants = {
        "repo": checkpoint_block(states["repo"], args.block, stub=False),
        "nogit": checkpoint_block(states["nogit"], args.block, stub=False),
        "stub": checkpoint_block(states["stub"], args.block, stub=True),
        "floor": floor_block(floor, record_size, view_size, args.block),
        "raw": raw_block(os.path.join(root, "raw.jsonl"), record_size, args.block),
    }
    t0 = time.perf_counter()
    times = _common.interleave(variants, args.rounds, args.warmup)
    elapsed = time.perf_counter() - t0
    per_op = {k: statistics.median(v) for k, v in times.items()}
    rate = {k: 1 / v for k, v in per_op.items()}

    labels = {
        "repo": "State.checkpoint, in a git repo",
        "nogit": "State.checkpoint, outside git",
        "stub": "State.checkpoint, git stubbed",
        "floor": "floor: a checkpoint's durable writes, raw",
        "raw": f"raw os.write+os.fsync ({record_size} B)",
    }
    print(f"checkpoint throughput: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}, in-process")
    print(_common.load())
    print(
        f"{args.rounds} rounds + {args.warmup} warm-up of {args.block} operations per variant, interleaved "
        f"(order rotating each round), {elapsed:.0f} s; medians of per-block means"
    )
    print(f"outside git, the record's git field is {nogit_git}")
    print()
    rows = []
    for k, label in labels.items():
        ratio = rate[k] / rate["raw"]
        per_round = statistics.median(r / c for r, c in zip(times["raw"], times[k], strict=True))
        rows.append(
            (
                label,
                f"{per_op[k] * 1000:.3f}",
                f"{rate[k]:,.0f}",
                f"{ratio:.3f}",
                f"{per_round:.3f}",
                f"{per_op[k] / per_op['raw']:.1f}",
            )
        )
    print(
        _common.table(
            ["variant", "ms/op", "ops/s", "ops/s vs raw", "median per round", "= raw writes"],
            rows,
        )
    )
    print()
    print(
        f"one checkpoint (git repo): {one_checkpoint.calls['fsync']} fsync(s) "
        f"({', '.join(f'{p} x{n}' for p, n in sorted(one_checkpoint.fsyncs.items()))}); "
        f"through fsio.calls: {dict(sorted(one_checkpoint.calls.items()))}"
    )
    print(
        f"one resume:                {one_resume.calls['fsync']} fsync(s) "
        f"({', '.join(f'{p} x{n}' for p, n in sorted(one_resume.fsyncs.items()))}); "
        f"through fsio.calls: {dict(sorted(one_resume.calls.items()))}"
    )
    print(
        f"one checkpoint (git stubbed), its system calls (os.{', os.'.join(SYSCALLS)} and fcntl.flock): "
        f"{sum(stubbed_calls.values())} {dict(sorted(stubbed_calls.items()))}"
    )
    n = one_checkpoint.calls["fsync"]
    if n:
        print(
            f"ceilings for a checkpoint: {n} fsyncs = 1/{n} of raw = {rate['raw'] / n:,.0f}/s; "
            f"its durable writes done raw (floor) = {rate['floor']:,.0f}/s"
        )
        print(
            f"git stubbed reaches {rate['stub'] / (rate['raw'] / n):.0%} of the fsync ceiling and "
            f"{rate['stub'] / rate['floor']:.0%} of the floor; the git subprocess costs "
            f"{(per_op['repo'] - per_op['stub']) * 1000:.2f} ms per checkpoint in a repo, "
            f"{(per_op['nogit'] - per_op['stub']) * 1000:.2f} ms outside one"
        )
    print(_verdict(times))
    print()
    options = [f"--rounds={args.rounds}", f"--block={args.block}", f"--warmup={args.warmup}"]
    print("reproduce: " + _common.reproduce("throughput.py", options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
