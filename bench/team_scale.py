"""Many actors in one repository: what `sync` and `resume` cost, and how each grows from 5 to 50 actors.

For each actor count N (default 5, 10, 20, 50), a real git repository and a bare remote: N actors each write
`--records` records into one state folder (decisions, rejected approaches, checkpoints, and a message to the next
actor; through the library, fsync skipped for the set-up only), committed and pushed. Then, as whole processes
(`python -m rehydrate ...`, the checkout's src/ on PYTHONPATH), interleaved across the N values round by round:
- sync, nothing to do: `rehydrate sync --json` when the clone and the remote are level;
- sync, one record: one checkpoint (not timed) then `rehydrate sync --json` (commits, fetches, pushes);
- resume: `rehydrate resume` for the first actor (the brief a fresh context reads), and its size in characters.

Reported: medians per N and the growth from the smallest N to the largest (tN/t5), for each measure. Target:
resume and the brief grow with what is shown (other actors' program counters and mail are not shown in full),
not with the records stored: resume(50)/resume(5) <= 1.5; the brief stays within its budget.

    python bench/team_scale.py [--actors 5,10,20,50] [--records 1000] [--rounds 5]
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
from rehydrate import __version__
from rehydrate.store.state import State

TARGET = 1.5


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/team_scale.py",
        description="sync and resume with 5 to 50 actors of N records each in one repository; growth ratios.",
    )
    p.add_argument("--actors", default="5,10,20,50", help="actor counts, comma-separated (default 5,10,20,50)")
    p.add_argument("--records", type=int, default=1000, help="records per actor (default 1000)")
    p.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="rounds run first and thrown away (default 1)")
    p.add_argument("--check", action="store_true", help="exit 1 if the target is missed (default: always exit 0)")
    args = p.parse_args(argv)
    try:
        args.counts = sorted({int(x) for x in args.actors.split(",") if x.strip()})
    except ValueError:
        p.error("--actors takes numbers separated by commas")
    if not args.counts or min(args.counts) < 2 or args.records < 10 or args.rounds < 1:
        p.error("--actors at least 2 each (each writes to the next), --records at least 10, --rounds at least 1")
    return args


def actor(i: int) -> str:
    return f"a{i:02d}"


def fill(state_dir: str, name: str, records: int, to: str) -> None:
    from rehydrate.store.mail import messages

    state = State.open(state_dir, actor=name)
    for i in range(records - 1):
        k = i % 10
        if k == 0:
            state.invariant(f"{name} decision {i}", "team bench")
        elif k == 5:
            state.reject(f"{name} approach {i}", "team bench")
        else:
            state.checkpoint(f"{name} step {i}", f"{name} step {i + 1}")
    messages.send(state, to, "fyi", f"{name} is done with {records} records")


def build(tmp: str, n: int, records: int) -> str:
    """A clone with n actors' state, pushed to its bare remote; returns the clone's path."""
    bare = os.path.join(tmp, f"remote-{n}.git")
    _common.run(["git", *_common.GIT_IDENT, "init", "-q", "--bare", bare])
    repo = os.path.join(tmp, f"team-{n}")
    _common.git_repo(repo)
    _common.git(repo, "remote", "add", "origin", bare)
    state_dir = os.path.join(repo, "state")
    State.init(state_dir, "measure a team of agents in one repository", "growth from 5 to 50 actors near 1", actor(0))
    for i in range(n):
        fill(state_dir, actor(i), records, actor((i + 1) % n))
    _common.git(repo, "add", "-A")
    _common.git(repo, "commit", "-qm", "team state")
    _common.git(repo, "push", "-q", "-u", "origin", "main")
    return repo


def measure_sync(repo: str, env: dict[str, str], one_record: bool) -> Callable[[], float]:
    timed = _common.timed([sys.executable, "-m", "rehydrate", "sync", "--json"], cwd=repo, env=env)
    write = [sys.executable, "-m", "rehydrate", "checkpoint", "--done", "bench round", "--next", "next round"]

    def measure() -> float:
        if one_record:
            _common.run(write, cwd=repo, env=env)
        return timed()

    return measure


def brief_size(repo: str, env: dict[str, str]) -> int:
    out = subprocess.run(
        [sys.executable, "-m", "rehydrate", "resume"], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return len(out.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="rehydrate-bench-team-")
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: str) -> int:
    t0 = time.perf_counter()
    with _common.no_fsync():
        repos = {n: build(tmp, n, args.records) for n in args.counts}
    built = time.perf_counter() - t0
    env = _common.clean_env(
        PYTHONPATH=_common.SRC,
        PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"),
        REHYDRATE_ACTOR=actor(0),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
    )
    resume = [sys.executable, "-m", "rehydrate", "resume"]
    variants: dict[str, Callable[[], float]] = {}
    for n, repo in repos.items():
        variants[f"sync idle {n}"] = measure_sync(repo, env, one_record=False)
        variants[f"sync one {n}"] = measure_sync(repo, env, one_record=True)
        variants[f"resume {n}"] = _common.timed(resume, repo, env)
    times = _common.interleave(variants, args.rounds, args.warmup)
    sizes = {n: brief_size(repo, env) for n, repo in repos.items()}

    print(f"a team in one repository: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}")
    print(_common.load())
    print(f"actors {args.counts} x {args.records:,} records each (+ one message each); set-up {built:.0f} s")
    ms = {k: statistics.median(v) * 1000 for k, v in times.items()}
    rows = []
    for n in args.counts:
        wal = os.path.join(repos[n], "state", "wal")
        mb = sum(os.path.getsize(os.path.join(wal, f)) for f in os.listdir(wal) if f.endswith(".jsonl")) / 1e6
        idle, one, resume = (ms[f"{what} {n}"] for what in ("sync idle", "sync one", "resume"))
        rows.append((n, f"{mb:.1f}", f"{idle:.0f}", f"{one:.0f}", f"{resume:.0f}", f"{sizes[n]:,}"))
    print(_common.table(["actors", "logs MB", "sync idle ms", "sync one ms", "resume ms", "brief chars"], rows))
    lo, hi = args.counts[0], args.counts[-1]
    ok = True
    for what in ("sync idle", "sync one", "resume"):
        growth = ms[f"{what} {hi}"] / ms[f"{what} {lo}"]
        if what == "resume":
            line, ok = _common.bound(f"resume({hi})/resume({lo})", growth, TARGET)
            print(line)
        else:
            print(f"      {what}({hi})/{what}({lo}) = {growth:.2f}")
    print(f"      brief({hi})/brief({lo}) = {sizes[hi] / sizes[lo]:.2f} (characters)")
    opts = [f"--actors={args.actors}", f"--records={args.records}", f"--rounds={args.rounds}"]
    print("reproduce:", _common.reproduce("team_scale.py", opts))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
