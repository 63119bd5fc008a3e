"""`rehydrate resume` must not grow with the WAL: it reads the log's tail, never the whole file.

Two states, built the same way: a real `init`, `checkpoint` and `resume`, then `resume` records generated in-process
(sealed and chained with store.wal.seal/encode, carrying the views of the last real record) until the WAL holds
10 records in one and 1,000,000 in the other. Each build is checked cheaply: `reconcile(repair=False)` must find the
views matching the last record, and the first lines must chain (`--full-verify` runs the full `verify` scan too).

Then `rehydrate resume` runs as a whole process on both, interleaved, and `brief.resume(State)` in this process on both,
interleaved; each run appends one record, as a real resume does. Target: big/small <= 1.2 (whole process).

The big state is cached (default bench/results/resume_scale/, gitignored) and rebuilt when it no longer checks out.

    python bench/resume_scale.py [--rounds 30] [--rebuild] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import _common
from rehydrate import __version__, brief
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal

TARGET = 1.2
DEFAULT_CACHE = os.path.join(_common.REPO, "bench", "results", "resume_scale")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/resume_scale.py",
        description="`rehydrate resume` on a 10-record WAL against a 1,000,000-record WAL, interleaved, as whole "
        "processes and in-process; ratio of medians big/small.",
    )
    p.add_argument("--records", type=int, default=1_000_000, help="records in the big WAL (default 1000000)")
    p.add_argument("--small-records", type=int, default=10, help="records in the small WAL (default 10)")
    p.add_argument("--rounds", type=int, default=30, help="measured rounds of whole processes (default 30)")
    p.add_argument("--inproc-rounds", type=int, default=100, help="measured rounds of brief.resume (default 100)")
    p.add_argument("--warmup", type=int, default=3, help="rounds run first and thrown away (default 3)")
    p.add_argument(
        "--cache-dir",
        default=DEFAULT_CACHE,
        help="where the big state is kept between runs (default bench/results/resume_scale)",
    )
    p.add_argument("--no-cache", action="store_true", help="build the big state in a temporary folder, delete it after")
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached big state even if it checks out")
    p.add_argument(
        "--full-verify",
        action="store_true",
        help="also run the full `verify` scan on both states (reads the whole big WAL)",
    )
    p.add_argument("--check", action="store_true", help="exit 1 if the target is missed (default: always exit 0)")
    args = p.parse_args(argv)
    if args.small_records < 3 or args.records < args.small_records:
        p.error("--small-records must be at least 3 (init, checkpoint, resume) and --records at least that")
    if args.rounds < 1 or args.inproc_rounds < 1 or args.warmup < 0:
        p.error("--rounds and --inproc-rounds must be at least 1, --warmup at least 0")
    return args


def build(folder: str, records: int) -> str:
    """A state in folder/state whose WAL holds exactly `records` valid, chained records; returns the state path."""
    path = os.path.join(folder, "state")
    os.makedirs(folder, exist_ok=True)
    state, _ = State.init(path, "measure resume against the size of the WAL", "the ratio big/small is near 1")
    state.checkpoint("built the state", "run rehydrate resume")
    brief.resume(state)
    _common.pad_wal(state.wal_path, records)  # every later record a copy of that resume
    return path


def check(path: str, records: int) -> str | None:
    """None if the state at path checks out with at least `records` records; else what is wrong. Cheap: tail only."""
    try:
        out = State.open(path).reconcile(repair=False)
    except Exception as e:  # any failure means: rebuild
        return f"{type(e).__name__}: {e}"
    if not out.ok:
        return "; ".join(f"{p.file}: {p.message}" for p in out.problems)
    if out.record is None or out.record["seq"] < records:
        return f"the WAL holds {out.record['seq'] if out.record else 0} records, fewer than {records}"
    prev: wal.Record | None = None
    # the real records and the first synthetic
    for line in wallines.iter_lines(os.path.join(path, "wal", "agent.jsonl")):
        if line.raw is None or line.number > 6:
            break
        rec = wal.decode(line.raw)
        if prev is not None and (rec["prev"] != prev["h"] or rec["seq"] != prev["seq"] + 1):
            return f"line {line.number} does not follow the line before it"
        prev = rec
    return None


def cached_big(args: argparse.Namespace, tmp: str) -> tuple[str, str]:
    """The big state (reused from the cache when it checks out); returns (its path, how it was obtained)."""
    folder = os.path.join(tmp, "big") if args.no_cache else os.path.join(args.cache_dir, f"big-{args.records}")
    path = os.path.join(folder, "state")
    meta = os.path.join(folder, "built.json")
    if not args.no_cache and not args.rebuild and os.path.exists(meta):
        problem = check(path, args.records)
        if problem is None:
            with open(meta, encoding="utf-8") as f:
                info = json.load(f)
            return path, f"cached in {folder} (built {info['built']} in {info['seconds']:.1f} s)"
        print(f"rebuilding the cached state: {problem}")
    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    build(folder, args.records)
    seconds = time.perf_counter() - t0
    problem = check(path, args.records)
    if problem is not None:
        raise _common.BenchError(f"the big state does not check out: {problem}")
    with open(meta, "w", encoding="utf-8") as f:
        built = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        json.dump({"records": args.records, "rehydrate": __version__, "built": built, "seconds": seconds}, f)
    where = "temporary folder" if args.no_cache else folder
    return path, f"built in {seconds:.1f} s ({where})"


def full_verify(path: str) -> str:
    t0 = time.perf_counter()
    out = State.open(path).verify()
    if not out.ok:
        raise _common.BenchError(f"verify failed on {path}: " + "; ".join(p.message for p in out.problems))
    return f"ok in {time.perf_counter() - t0:.1f} s"


def inproc_resume(path: str) -> Callable[[], float]:
    def measure() -> float:
        t0 = time.perf_counter()
        result = brief.resume(State.open(path))
        elapsed = time.perf_counter() - t0
        if result.confidence != "recovered":
            raise _common.BenchError(f"resume on {path}: {result.confidence}")
        return elapsed

    return measure


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="rehydrate-bench-resume-")
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: str) -> int:
    big, how = cached_big(args, tmp)
    small = build(os.path.join(tmp, "small"), args.small_records)
    problem = check(small, args.small_records)
    if problem is not None:
        raise _common.BenchError(f"the small state does not check out: {problem}")
    paths = {"small": small, "big": big}
    sizes = {k: os.path.getsize(os.path.join(p, "wal", "agent.jsonl")) for k, p in paths.items()}
    counts = {k: State.open(p).reconcile(repair=False).record for k, p in paths.items()}
    verified = {k: full_verify(p) for k, p in paths.items()} if args.full_verify else {}

    # the working tree's modules, with their .pyc kept outside it (compiled once, by the warm-up)
    env = _common.clean_env(PYTHONPATH=_common.SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
    procs = {
        k: _common.timed([sys.executable, "-m", "rehydrate", "resume", "--dir", p], cwd=os.path.dirname(p), env=env)
        for k, p in paths.items()
    }
    t0 = time.perf_counter()
    proc_times = _common.interleave(procs, args.rounds, args.warmup)
    t_proc = time.perf_counter() - t0
    t0 = time.perf_counter()
    inproc_times = _common.interleave({k: inproc_resume(p) for k, p in paths.items()}, args.inproc_rounds, args.warmup)
    t_inproc = time.perf_counter() - t0

    print(f"resume against the size of the WAL: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}")
    print(_common.load())
    print(f"big state: {how}")
    rows: list[tuple[object, ...]] = []
    for k in paths:
        rec = counts[k]
        rows.append((k, f"{rec['seq'] if rec else 0:,}", f"{sizes[k] / 1e6:,.2f}", verified.get(k, "not run")))
    print(_common.table(["WAL", "records", "MB", "full verify"], rows))
    print("each build checked: reconcile(repair=False).ok (views match the last record's hashes), first lines chain")
    print()
    rows = []
    ratios: list[float] = []
    for label, times, rounds, secs in (
        ("whole process: python -m rehydrate resume --dir D", proc_times, args.rounds, t_proc),
        ("in-process: brief.resume(State.open(D))", inproc_times, args.inproc_rounds, t_inproc),
    ):
        ms = {k: statistics.median(v) * 1000 for k, v in times.items()}
        ratio = ms["big"] / ms["small"]
        per_round = statistics.median(b / s for b, s in zip(times["big"], times["small"], strict=True))
        ratios.append(ratio)
        rows.append((label, rounds, f"{ms['small']:.2f}", f"{ms['big']:.2f}", f"{ratio:.3f}", f"{per_round:.3f}"))
        print(f"{label}: {rounds} rounds + {args.warmup} warm-up, interleaved, {secs:.0f} s")
    print()
    print(
        _common.table(
            ["measure", "rounds", "small ms", "big ms", "big/small", "median per round"],
            rows,
        )
    )
    print()
    line, ok = _common.bound("big/small (whole process)", ratios[0], TARGET)
    print("target:")
    print("  " + line)
    print(f"  info  big/small (in-process) = {ratios[1]:.3f}  (not diluted by interpreter start-up)")
    print()
    options = [
        f"--records={args.records}",
        f"--small-records={args.small_records}",
        f"--rounds={args.rounds}",
        f"--inproc-rounds={args.inproc_rounds}",
        f"--warmup={args.warmup}",
    ]
    options += ["--no-cache"] if args.no_cache else [f"--cache-dir={os.path.relpath(args.cache_dir, _common.REPO)}"]
    options += [flag for flag, on in (("--full-verify", args.full_verify), ("--check", args.check)) if on]
    print("reproduce: " + _common.reproduce("resume_scale.py", options) + "   (add --rebuild to rebuild the big WAL)")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
