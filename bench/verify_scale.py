"""`rehydrate verify` on a 1,000,000-record WAL against the floor: a bare loop that parses and hashes each line.

Builds a state (a real `init`, `checkpoint` and `resume`, then `resume` records sealed and chained in-process with
store.wal.seal/encode until the WAL holds --records records, about 650 bytes each), cached under
bench/results/verify_scale/ (gitignored) and rebuilt when it no longer checks out. Then three whole processes run
side by side, the order rotating each round:

- bare: `python -c` reading the same WAL line by line, json.loads and hashlib.sha256(...).hexdigest() on each;
- verify: `python -m rehydrate verify --dir D` (this checkout's src/);
- re-check: the one-time check of the whole chain after a change outside rehydrate: this worktree's seen cache
  (store/local/place.py: `<git dir>/rehydrate/...`, or `state/.local/` outside git) is removed, then
  `python -m rehydrate status --dir D` (its reconcile reads the whole log once, and writes the cache again).

Prints the medians, the ratios verify/bare (target <= 3.0) and re-check/bare (target <= 2.5), each process's peak
RSS (its VmHWM: memory must not grow with the log; compare with a run at --records 100000), the load
average and the command.

    python bench/verify_scale.py [--records 1000000] [--rounds 3] [--warmup 1] [--check]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import _common
from rehydrate import __version__, brief
from rehydrate.store.local import place as local
from rehydrate.store.state import State
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal

TARGETS = {"verify": 3.0, "re-check": 2.5}
DEFAULT_CACHE = os.path.join(_common.REPO, "bench", "results", "verify_scale")
BARE = """
import hashlib, json, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)
        hashlib.sha256(line).hexdigest()
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/verify_scale.py",
        description="`rehydrate verify` and the one-time re-check of the chain on a big WAL, against a bare "
        "json.loads + sha256 loop over the same file, interleaved; ratios of medians and peak RSS.",
    )
    p.add_argument("--records", type=int, default=1_000_000, help="records in the WAL (default 1000000)")
    p.add_argument("--rounds", type=int, default=3, help="measured rounds (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="rounds run first and thrown away (default 1)")
    p.add_argument("--cache-dir", default=DEFAULT_CACHE, help="where the state is kept (bench/results/verify_scale)")
    p.add_argument("--no-cache", action="store_true", help="build the state in a temporary folder, delete it after")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed (default: always exit 0)")
    return p.parse_args(argv)


def build(folder: str, records: int) -> str:
    """A state in folder/state whose WAL holds exactly `records` valid, chained records; returns the state path."""
    path = os.path.join(folder, "state")
    os.makedirs(folder, exist_ok=True)
    state, _ = State.init(path, "measure verify against the size of the WAL", "verify/bare <= 3.0")
    state.checkpoint("built the state", "run rehydrate verify")
    brief.resume(state)
    _common.pad_wal(state.wal_path, records)
    return path


def check(path: str, records: int) -> str | None:
    """Why the state at path is not a valid one of `records` records (cheap: its tail and views), or None."""
    try:
        last = walback.read_tail(os.path.join(path, "wal", "agent.jsonl"), 1).records[-1][1]
        out = State.open(path).reconcile(repair=False)
    except (OSError, IndexError, wal.BadRecord, _common.BenchError) as e:
        return str(e)
    except Exception as e:  # a RehydrateError: the state is not usable
        return str(e)
    if last["seq"] != records:
        return f"it holds {last['seq']} records"
    return None if out.ok else "; ".join(p.message for p in out.problems)


def state_for(args: argparse.Namespace, tmp: str) -> tuple[str, str]:
    """The state to measure, and how it was had (cached, built)."""
    folder = os.path.join(tmp, "big") if args.no_cache else os.path.join(args.cache_dir, f"big-{args.records}")
    path = os.path.join(folder, "state")
    if not args.no_cache and os.path.isdir(path) and check(path, args.records) is None:
        return path, f"cached in {folder}"
    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    build(folder, args.records)
    problem = check(path, args.records)
    if problem is not None:
        raise _common.BenchError(f"the built state does not check out: {problem}")
    return path, f"built in {time.perf_counter() - t0:.1f} s" + ("" if args.no_cache else f", cached in {folder}")


# Each variant runs under this launcher, which prints the process's own peak RSS (VmHWM) as it exits: the rusage of a
# child (os.wait4, RUSAGE_CHILDREN) also counts the pages it shared with this process before its exec.
LAUNCH = """
import atexit, runpy, sys
def peak():
    try:
        with open("/proc/self/status") as f:
            sys.stderr.write("".join("PEAK " + ln.split()[1] + "\\n" for ln in f if ln.startswith("VmHWM:")))
    except OSError:
        pass
atexit.register(peak)
mode, target = sys.argv[1], sys.argv[2]
if mode == "-m":
    sys.argv = sys.argv[2:]
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    sys.argv = ["-c", *sys.argv[3:]]
    exec(compile(target, "<bare>", "exec"), {"__name__": "__main__"})
"""


def process(
    argv: list[str], env: dict[str, str], rss: list[int], before: Callable[[], None] | None = None
) -> _common.Measure:
    """One whole process per call (argv: -m MODULE ARGS or -c CODE ARGS, run by LAUNCH): its wall time; its peak
    RSS (KiB) appended to rss (0 where /proc is not there)."""
    full = [sys.executable, "-c", LAUNCH, *argv]

    def measure() -> float:
        if before is not None:
            before()
        t0 = time.perf_counter()
        proc = subprocess.run(full, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise _common.BenchError(f"{argv} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
        peaks = [int(ln.split()[1]) for ln in proc.stderr.decode(errors="replace").splitlines() if ln[:5] == "PEAK "]
        rss.append(peaks[-1] if peaks else 0)
        return elapsed

    return measure


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="rehydrate-bench-verify-")
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: str) -> int:
    path, how = state_for(args, tmp)
    log = os.path.join(path, "wal", "agent.jsonl")
    caches = [os.path.join(local.local_dir(path), "seen", "agent.seen"), os.path.join(path, "wal", ".agent.seen")]
    env = _common.clean_env(PYTHONPATH=_common.SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
    rss: dict[str, list[int]] = {"bare": [], "verify": [], "re-check": []}

    def drop_cache() -> None:
        for cache in caches:
            if os.path.exists(cache):
                os.unlink(cache)

    variants = {
        "bare": process(["-c", BARE, log], env, rss["bare"]),
        "verify": process(["-m", "rehydrate", "verify", "--dir", path], env, rss["verify"]),
        "re-check": process(["-m", "rehydrate", "status", "--dir", path], env, rss["re-check"], drop_cache),
    }
    load_before = _common.load()
    times = _common.interleave(variants, args.rounds, args.warmup)
    load_after = _common.load()

    what = f"rehydrate {__version__} ({_common.checkout()}) on {sys.executable}"
    print(f"verify against a bare parse-and-hash loop: {what}")
    print(f"{load_before}; after the rounds: {load_after}")
    print(f"WAL: {args.records:,} records, {os.path.getsize(log) / 1e6:,.1f} MB; {how}")
    print()
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = []
    for k, v in times.items():
        peak = max(rss[k][-len(v) :]) if v else 0
        ratio = med[k] / med["bare"]
        per_round = statistics.median(t / b for t, b in zip(v, times["bare"], strict=True))
        spread = f"{min(v):.2f}-{max(v):.2f}"
        rows.append((k, len(v), f"{med[k]:.2f}", spread, f"{ratio:.2f}", f"{per_round:.2f}", f"{peak / 1024:.1f}"))
    head = ["variant", "rounds", "median s", "min-max s", "x bare", "per-round x", "peak RSS MiB"]
    print(_common.table(head, rows))
    print()
    ok = True
    for k, limit in TARGETS.items():
        line, passed = _common.bound(f"{k}/bare", med[k] / med["bare"], limit)
        print(line)
        ok = ok and passed
    print()
    options = [f"--records={args.records}", f"--rounds={args.rounds}", f"--warmup={args.warmup}"]
    options += ["--no-cache"] if args.no_cache else [f"--cache-dir={args.cache_dir}"]
    print("reproduce: " + _common.reproduce("verify_scale.py", options + (["--check"] if args.check else [])))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
