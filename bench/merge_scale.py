"""The first command after a merge of two long branches, against the same command without a merge.

A real git repository holds a state; two branches each add `--records` records (decisions, rejected approaches and
checkpoints, written through the library with fsync skipped for the set-up only, each branch committed), and
`git merge` joins them with the committed union attributes (no conflict is allowed: the bench fails if there is one).
A second repository holds the same number of records on one line (2 x `--records`, no merge), as the baseline.

What is measured, as whole processes (`python -m rehydrate status --json`), interleaved round by round:
- merged: the first command after the merge. Before each round the clone's per-worktree cache is put back as it
  was just before the merge (it had seen its own branch), so every round is a first command;
- linear: the first command on the baseline after its log grew the same way (its cache put back as it was when it
  had seen the first half: a fast-forward `git pull`);
- linear-cold: the same with no cache at all (a fresh clone's first command: the whole log checked once);
- merged-warm and linear-warm: the same command again, the cache as the first command left it (for reference).

Reported: the medians, the ratio merged/linear (target: <= 1.5), merged/linear-cold, and the warm ratio. The
first write after the merge (which appends the merge record) is timed once, for information.

    python bench/merge_scale.py [--records 10000] [--rounds 7]
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
        prog="bench/merge_scale.py",
        description="The first `rehydrate status` after a merge of two branches with N records each, against the "
        "same command on one line of 2N records whose cache is as stale; whole processes, interleaved.",
    )
    p.add_argument("--records", type=int, default=10_000, help="records added on each branch (default 10000)")
    p.add_argument("--rounds", type=int, default=7, help="measured rounds (default 7)")
    p.add_argument("--warmup", type=int, default=1, help="rounds run first and thrown away (default 1)")
    p.add_argument("--check", action="store_true", help="exit 1 if the target is missed (default: always exit 0)")
    args = p.parse_args(argv)
    if args.records < 10 or args.rounds < 1 or args.warmup < 0:
        p.error("--records must be at least 10, --rounds at least 1, --warmup at least 0")
    return args


def add_records(path: str, n: int, tag: str) -> None:
    """n records through the library: mostly checkpoints, one decision and one rejected approach in ten each."""
    state = State.open(path)
    for i in range(n):
        k = i % 10
        if k == 0:
            state.invariant(f"{tag} decision {i}", f"measured on {tag}")
        elif k == 5:
            state.reject(f"{tag} approach {i}", f"measured on {tag}")
        else:
            state.checkpoint(f"{tag} step {i}", f"{tag} step {i + 1}")


def local_cache(repo: str) -> list[str]:
    """The per-worktree knowledge of the clone (wherever this version keeps it): saved and put back between rounds."""
    return [os.path.join(repo, ".git", "rehydrate"), os.path.join(repo, "state", "wal", ".agent.seen")]


def snapshot(repo: str, into: str) -> None:
    shutil.rmtree(into, ignore_errors=True)
    os.makedirs(into)
    for i, p in enumerate(local_cache(repo)):
        if os.path.isdir(p):
            shutil.copytree(p, os.path.join(into, str(i)))
        elif os.path.exists(p):
            shutil.copy2(p, os.path.join(into, str(i)))


def restore(repo: str, saved: str) -> None:
    for i, p in enumerate(local_cache(repo)):
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.unlink(p)
        src = os.path.join(saved, str(i))
        if os.path.isdir(src):
            shutil.copytree(src, p)
        elif os.path.exists(src):
            shutil.copy2(src, p)


def build(tmp: str, n: int) -> tuple[str, str, str, str]:
    """(merged repo, its pre-merge cache, linear repo, its half-seen cache)."""
    merged = os.path.join(tmp, "merged")
    _common.git_repo(merged)
    State.init(os.path.join(merged, "state"), "measure the first command after a merge", "merged/linear near 1")
    _common.git(merged, "add", "-A")
    _common.git(merged, "commit", "-qm", "state")
    _common.git(merged, "checkout", "-qb", "feat")
    add_records(os.path.join(merged, "state"), n, "feat")
    _common.git(merged, "commit", "-qam", "feat")
    _common.git(merged, "checkout", "-q", "main")
    add_records(os.path.join(merged, "state"), n, "main")
    _common.git(merged, "commit", "-qam", "main")
    State.open(os.path.join(merged, "state")).reconcile()  # the cache as main's own last command left it
    before = os.path.join(tmp, "merged-cache")
    snapshot(merged, before)
    out = subprocess.run(
        ["git", *_common.GIT_IDENT, "merge", "-q", "--no-edit", "feat"],
        cwd=merged,
        capture_output=True,
        text=True,
        check=False,
    )
    conflicts = _common.git(merged, "diff", "--name-only", "--diff-filter=U").split()
    if out.returncode != 0 or conflicts:
        raise _common.BenchError(f"the merge conflicted: {conflicts or out.stdout + out.stderr}")

    linear = os.path.join(tmp, "linear")
    _common.git_repo(linear)
    State.init(os.path.join(linear, "state"), "measure the first command after a merge", "merged/linear near 1")
    add_records(os.path.join(linear, "state"), n, "main")
    State.open(os.path.join(linear, "state")).reconcile()
    half = os.path.join(tmp, "linear-cache")
    snapshot(linear, half)
    add_records(os.path.join(linear, "state"), n, "more")
    _common.git(linear, "add", "-A")
    _common.git(linear, "commit", "-qm", "state")
    return merged, before, linear, half


def first_command(repo: str, saved: str, env: dict[str, str]) -> Callable[[], float]:
    timed = _common.timed([sys.executable, "-m", "rehydrate", "status", "--json"], cwd=repo, env=env)

    def measure() -> float:
        restore(repo, saved)
        return timed()

    return measure


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="rehydrate-bench-merge-")
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: str) -> int:
    t0 = time.perf_counter()
    with _common.no_fsync():
        merged, before, linear, half = build(tmp, args.records)
    built = time.perf_counter() - t0
    env = _common.clean_env(PYTHONPATH=_common.SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
    empty = os.path.join(tmp, "no-cache")
    os.makedirs(empty)  # no cache at all: a fresh clone's first command, the whole log checked once
    status = [sys.executable, "-m", "rehydrate", "status", "--json"]
    times = _common.interleave(
        {
            "merged": first_command(merged, before, env),
            "linear": first_command(linear, half, env),
            "linear-cold": first_command(linear, empty, env),
        },
        args.rounds,
        args.warmup,
    )
    _common.run(status, cwd=merged, env=env)
    _common.run(status, cwd=linear, env=env)
    warm = _common.interleave(
        {"merged-warm": _common.timed(status, merged, env), "linear-warm": _common.timed(status, linear, env)},
        args.rounds,
        args.warmup,
    )
    clean = _common.git(merged, "status", "--porcelain", "--", "state")
    t0 = time.perf_counter()
    _common.run([sys.executable, "-m", "rehydrate", "checkpoint", "--done", "merged", "--next", "go"], merged, env)
    first_write = time.perf_counter() - t0

    print(f"first command after a merge: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}")
    print(_common.load())
    size = os.path.getsize(os.path.join(merged, "state", "wal", "agent.jsonl"))
    print(f"two branches x {args.records:,} records merged (log {size / 1e6:.1f} MB); set-up {built:.0f} s")
    ms = {k: statistics.median(v) * 1000 for k, v in {**times, **warm}.items()}
    rows = [(k, f"{v:.1f}") for k, v in ms.items()]
    print(_common.table(["status --json, whole process", "median ms"], rows))
    ratio = ms["merged"] / ms["linear"]
    line, ok = _common.bound("first command: merged/linear", ratio, TARGET)
    print(line)
    print(f"       merged/linear-cold = {ms['merged'] / ms['linear-cold']:.2f} (a fresh clone's first command)")
    print(f"       warm: merged-warm/linear-warm = {ms['merged-warm'] / ms['linear-warm']:.2f}")
    print(f"the first write after the merge (checkpoint, appends the merge record): {first_write * 1000:.0f} ms")
    print(f"git status of state/ after the reads and before that write was {'clean' if not clean else 'dirty'}")
    print("reproduce:", _common.reproduce("merge_scale.py", [f"--records={args.records}", f"--rounds={args.rounds}"]))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
