"""Transcripts: `rehydrate audit --json --quick` throughput against ccusage and a bare parse loop (the one read of each
file that finds the compactions and their symptoms; the loss report, which reads each compaction's prefix again, is
left out as ccusage has none), and the cost of a tail read.

1. Throughput. A corpus of Claude Code session files of at least --megabytes (200 by default; 2000 with --big, built
   in bench/results/, gitignored, and deleted after the run), made of copies of the real transcript in
   shared/fixtures (its NOTICE.md copied with them; each copy's message ids made unique, so that no tool can skip a
   copy as a duplicate). Measured whole, interleaved: `rehydrate audit --json CORPUS`; ccusage 17.2.1 (installed
   from npm into a temporary folder) `daily --offline --json` with CLAUDE_CONFIG_DIR pointed at the same corpus; and
   a bare loop in Python that only parses every line with orjson (the parser audit uses; json without it). Each is
   reported by its median wall time, its median CPU time (user + system of the process: steadier on a shared
   machine) and its peak memory (flat: audit streams); each ratio is taken per round (the two processes run one
   after the other, in a rotating order) and reported as the median of the rounds with its spread (lowest to
   highest), and the load average is printed before and after. Targets: audit >= 4x ccusage, >= 0.7x the bare
   loop (median over rounds). --unfiltered also times audit with its bytes pre-filter off
   (transcripts.claude.read.audited: every line parsed), to show what the filter saves.
2. Tail. The last 20 turns of a 200 MB transcript against a 1 MB one that ends with the same 20 turns, read with
   rehydrate.transcripts.reader.tail in this process, interleaved. Target: median ratio <= 1.5.

    python bench/transcripts.py [--rounds 9] [--tail-rounds 50] [--skip-ccusage] [--unfiltered]
    python bench/transcripts.py --big --megabytes 2000 --rounds 5 --skip-tail
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import _common
from rehydrate.transcripts.reader import tail

FIXTURES = os.path.join(os.path.dirname(_common.REPO), "shared", "fixtures", "transcripts")  # beside the checkout
FIXTURE_NAME = "claude-code-2.1.39-manual-compact.jsonl"
FIXTURE = os.path.join(FIXTURES, FIXTURE_NAME)
NOTICE = os.path.join(FIXTURES, "NOTICE.md")
RESULTS = os.path.join(_common.REPO, "bench", "results")  # gitignored: where a corpus too big for /tmp is built
CCUSAGE = "ccusage@17.2.1"
# audit with its pre-filter off (scan.report's prefilter, on by default), the same command line otherwise
UNFILTERED = """
import sys
from rehydrate.audit import scan
scan.report.__defaults__ = (None, False)
from rehydrate.cli import main
sys.exit(main(["audit", "--json", "--quick", sys.argv[1]]))
"""
BARE = """
import os, sys
try:
    from orjson import loads
except ImportError:
    from json import loads
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), "rb") as f:
                for line in f:
                    try:
                        loads(line)
                    except ValueError:
                        pass
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=9, help="interleaved rounds of the throughput runs (default 9)")
    p.add_argument("--tail-rounds", type=int, default=50, help="interleaved rounds of the tail reads (default 50)")
    p.add_argument("--megabytes", type=int, default=200, help="the corpus's size, at least (default 200)")
    p.add_argument(
        "--big",
        action="store_true",
        help="build the corpus in bench/results/ (gitignored) instead of a temporary folder, for sizes /tmp cannot "
        "hold (--megabytes 2000); it is deleted when the run ends",
    )
    p.add_argument("--fixtures", default=FIXTURES, help="the folder of the real transcripts (shared/fixtures)")
    p.add_argument("--unfiltered", action="store_true", help="also time audit with its bytes pre-filter off")
    p.add_argument("--skip-tail", action="store_true", help="leave out the tail read (part 2)")
    p.add_argument("--skip-ccusage", action="store_true", help="leave ccusage out (no npm needed)")
    return p.parse_args(argv)


def build_corpus(root: str, megabytes: int) -> tuple[str, int]:
    """Copies of the fixture under root/projects/-bench-project/, each with its own message ids."""
    with open(FIXTURE, "rb") as f:
        data = f.read()
    folder = os.path.join(root, "projects", "-bench-project")
    os.makedirs(folder)
    shutil.copy(NOTICE, os.path.join(folder, "NOTICE.md"))  # the copies keep their notice with them
    total = 0
    n = 0
    while total < megabytes << 20:
        copy = data.replace(b'"id":"msg_', f'"id":"msg_{n:04d}'.encode()).replace(
            b'"requestId":"req_', f'"requestId":"req_{n:04d}'.encode()
        )
        with open(os.path.join(folder, f"session-{n:04d}.jsonl"), "wb") as f:
            f.write(copy)
        total += len(copy)
        n += 1
    return folder, total


def tail_files(root: str, megabytes: int) -> tuple[str, str]:
    """Two transcripts ending with the same 20 turns: one of about 1 MB, one of `megabytes` MB."""
    with open(FIXTURE, "rb") as f:
        lines = f.read().split(b"\n")
    records = [x for x in lines if x.strip()]
    turn = []  # one turn: a user's prompt, then the first 30 records that follow the real compaction
    prompt = {"type": "user", "message": {"role": "user", "content": "go on"}, "timestamp": "2026-02-12T15:00:00Z"}
    turn.append(json.dumps(prompt).encode())
    turn += records[1490:1520]
    block = b"\n".join(turn * 20) + b"\n"
    filler = b"\n".join(records) + b"\n"
    small = os.path.join(root, "small.jsonl")
    big = os.path.join(root, "big.jsonl")
    with open(small, "wb") as f:
        f.write(filler[: max(0, (1 << 20) - len(block))].rsplit(b"\n", 1)[0] + b"\n" + block)
    with open(big, "wb") as f:
        while f.tell() < megabytes << 20:
            f.write(filler)
        f.write(block)
    return small, big


def main(argv: Sequence[str] | None = None) -> int:
    global FIXTURE, NOTICE
    args = parse_args(argv)
    FIXTURE = os.path.join(args.fixtures, FIXTURE_NAME)
    NOTICE = os.path.join(args.fixtures, "NOTICE.md")
    if not os.path.exists(FIXTURE):
        raise SystemExit(f"the fixture is missing: {FIXTURE} (shared/fixtures beside the repository, or --fixtures)")
    if args.big:
        os.makedirs(RESULTS, exist_ok=True)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-transcripts-", dir=RESULTS if args.big else None)
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, root: str) -> int:
    _throughput(args, root)
    if not args.skip_tail:
        _tail(args, root)
    options = [f"--rounds={args.rounds}", f"--tail-rounds={args.tail_rounds}", f"--megabytes={args.megabytes}"]
    flags = ("big", "unfiltered", "skip_tail", "skip_ccusage")
    options += [f"--{f.replace('_', '-')}" for f in flags if getattr(args, f)]
    options += [] if args.fixtures == FIXTURES else ["--fixtures=FOLDER"]
    print("reproduce: " + _common.reproduce("transcripts.py", options))
    print(f"json parser: {'orjson' if parser() == 'orjson' else 'json (install orjson for the fast path)'}")
    return 0


def _timed(cmd: list[str], env: dict[str, str], cpu: list[float], rss: list[float]) -> _common.Measure:
    """The wall time of one whole process; its CPU time (user + system, from wait4) is appended to cpu: on a shared
    machine the CPU time is the steadier of the two."""

    def measure() -> float:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            _common.run(cmd, env=env)  # once more, to show its output in the error
            raise _common.BenchError(f"{cmd} exited {proc.returncode}")
        cpu.append(usage.ru_utime + usage.ru_stime)
        rss.append(usage.ru_maxrss / 1024)  # KiB on Linux: MiB
        return elapsed

    return measure


def _throughput(args: argparse.Namespace, root: str) -> None:
    folder, size = build_corpus(os.path.join(root, "claude"), args.megabytes)
    mb = size / (1 << 20)
    env = _common.clean_env(PYTHONPATH=_common.SRC)
    commands = {
        "audit": ([sys.executable, "-m", "rehydrate", "audit", "--json", "--quick", folder], env),
        "bare": ([sys.executable, "-c", BARE, folder], env),
    }
    if args.unfiltered:
        commands["unfiltered"] = ([sys.executable, "-c", UNFILTERED, folder], env)
    if not args.skip_ccusage:
        npm = os.path.join(root, "npm")
        os.makedirs(npm)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", npm, CCUSAGE], check=True)
        ccusage = os.path.join(npm, "node_modules", ".bin", "ccusage")
        cc_env = _common.clean_env(CLAUDE_CONFIG_DIR=os.path.join(root, "claude"))
        commands["ccusage"] = ([ccusage, "daily", "--offline", "--json"], cc_env)
    cpus: dict[str, list[float]] = {k: [] for k in commands}
    rss: dict[str, list[float]] = {k: [] for k in commands}  # the peak memory of each run, to show it stays flat
    variants = {k: _timed(cmd, e, cpus[k], rss[k]) for k, (cmd, e) in commands.items()}
    before = _common.load()
    times = _common.interleave(variants, args.rounds, warmup=1)
    cpus = {k: v[1:] for k, v in cpus.items()}  # the warm-up round left out
    print(f"transcripts: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}, parser {parser()}")
    print(f"before: {before}")
    print(f"after:  {_common.load()}")
    print(f"corpus: {size / 1e6:,.0f} MB in {len(os.listdir(folder)) - 1} Claude Code session files")
    print()
    med = {k: _common.median(v) for k, v in times.items()}
    cpu = {k: _common.median(v) for k, v in cpus.items()}
    rows = [(k, f"{med[k]:.2f}", f"{cpu[k]:.2f}", f"{mb / med[k]:.0f}", f"{max(rss[k]):.0f}") for k in variants]
    print(_common.table(["variant", "median s", "median CPU s", "MB/s", "peak MiB"], rows))
    print()
    targets = [("bare", 0.7, "the bare parse loop"), ("ccusage", 4.0, "ccusage"), ("unfiltered", None, "unfiltered")]
    for other, target, name in targets:
        if other in times:
            for kind, values in (("wall", times), ("CPU", cpus)):
                print("  " + _ratio(name, kind, ratios(values[other], values["audit"]), target))
    per_round = ratios(times["bare"], times["audit"])
    print(f"        audit vs the bare loop, wall, per round: {', '.join(f'{r:.2f}' for r in per_round)}")
    print()


def ratios(other: list[float], audit: list[float]) -> list[float]:
    """other / audit, round by round (each round ran the two one after the other)."""
    return [o / a for o, a in zip(other, audit, strict=True)]


def _ratio(name: str, kind: str, values: list[float], target: float | None) -> str:
    """One ratio's line: its median over the rounds, its spread, its target."""
    median = _common.median(values)
    spread = f"rounds {min(values):.2f} to {max(values):.2f}"
    if target is None:
        return f"      audit vs audit {name} = {median:.2f}x ({kind}, median of {len(values)}; {spread})"
    verdict = "PASS" if median >= target else "FAIL"
    rounds = f"median of {len(values)}; {spread}; target >= {target:.2f}x"
    return f"{verdict}  audit vs {name} = {median:.2f}x ({kind}, {rounds})"


def _tail(args: argparse.Namespace, root: str) -> None:
    small, big = tail_files(root, args.megabytes)

    if tail(small, 20) != tail(big, 20):
        raise _common.BenchError("the two files do not end with the same 20 turns")

    def reader(path: str) -> _common.Callable[[], float]:
        def measure() -> float:
            t0 = time.perf_counter()
            tail(path, 20)
            return time.perf_counter() - t0

        return measure

    tails = _common.interleave({"small": reader(small), "big": reader(big)}, args.tail_rounds, warmup=3)
    ts = {k: _common.median(v) * 1000 for k, v in tails.items()}
    sizes = {k: os.path.getsize(p) / 1e6 for k, p in (("small", small), ("big", big))}
    print(_common.table(["tail of 20 turns", "MB", "median ms"], [(k, f"{sizes[k]:.0f}", f"{ts[k]:.2f}") for k in ts]))
    line, _ = _common.bound("big/small", ts["big"] / ts["small"], 1.5)
    print("  " + line)
    print()


def parser() -> str:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return "json"
    return "orjson"


if __name__ == "__main__":
    sys.exit(main())
