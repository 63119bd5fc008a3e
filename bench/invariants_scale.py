"""No size cliff, no quadratic writes: `checkpoint` and `invariant` on a state whose 10_invariants.md
holds 200,000 decision lines, against the same commands on an empty state.

States, each in its own temporary git repository, made by the real `init` and `checkpoint` code, then:

    empty       nothing more
    big         + 200,000 decision lines, each with the record `State.invariant` writes for it, sealed and chained
                through the store's own code (wal.seal; the running binding extended by binding.Lines.add)
    hand        empty + 25,000 lines added by hand to 10_invariants.md (no record), for the adoption

Whole processes (`python -m rehydrate ...`, this checkout's src/ on PYTHONPATH), interleaved round by round, the order
rotating: `checkpoint` and `invariant` on empty and big. Then, timed once per round on a fresh copy of `hand`:
`verify --repair` (adopts the 25,000 lines; target < 30 s); and `verify` on big (the full check). And, in this
process, one pass of the running binding over big's 10 (binding.lines_of): what the cheap path still pays to compare
10 with the last record while no cache spares it the read. Targets: big/empty <= 1.5 for checkpoint and invariant.

    python bench/invariants_scale.py [--decisions 200000] [--hand 25000] [--rounds 15] [--verify-rounds 3] [--check]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import _common
from rehydrate import __version__
from rehydrate.store import layout
from rehydrate.store.latches import binding
from rehydrate.store.state import State
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal

TARGET = 1.5
ADOPT_TARGET = 30.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/invariants_scale.py",
        description="checkpoint and invariant on an empty state and on 200,000 decision lines, interleaved; "
        "the adoption of 25,000 lines added by hand; verify on the big state.",
    )
    p.add_argument("--decisions", type=int, default=200_000, help="decision lines of the big state (default 200000)")
    p.add_argument("--hand", type=int, default=25_000, help="lines added by hand, adopted (default 25000)")
    p.add_argument("--rounds", type=int, default=15, help="measured rounds of whole processes (default 15)")
    p.add_argument("--warmup", type=int, default=2, help="rounds run first and thrown away (default 2)")
    p.add_argument("--verify-rounds", type=int, default=3, help="rounds of verify and of the adoption (default 3)")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed (default: always exit 0)")
    args = p.parse_args(argv)
    if min(args.decisions, args.hand, args.rounds, args.verify_rounds) < 1 or args.warmup < 0:
        p.error("--decisions, --hand, --rounds and --verify-rounds must be at least 1, --warmup at least 0")
    return args


def base(folder: str) -> State:
    _common.git_repo(folder)
    state, _ = State.init(os.path.join(folder, "state"), "keep 10 writable at any size", "no size cliff")
    state.checkpoint("built the state", "measure")
    return state


def decisions(state: State, n: int) -> None:
    """n decision lines with their records, written with buffered writes (as `State.invariant` would bind them)."""
    last = walback.read_tail(state.wal_path, 1).records[-1][1]
    bound = binding.Lines.parse(last["views"][layout.INVARIANTS])
    if bound is None:
        raise _common.BenchError("the last record does not bind 10 by its running hash")
    prev, seq, ts = last["h"], int(last["seq"]), last["ts"]
    inv = state.path(layout.INVARIANTS)
    with open(inv, "ab", buffering=1 << 20) as view, open(state.wal_path, "ab", buffering=1 << 20) as log:
        for i in range(n):
            text = f"decision {i:06d}: keep the cache keyed by path and mtime"
            ident = "D-" + wal.sha256(f"{state.actor}\0{ts}\0{text}\0{i}".encode())[:6]
            line = layout.entry_line("D", ident, ts[:10], text, "a rebuild is slow", None)
            view.write(line.encode() + b"\n")
            bound = bound.add(line.encode())
            data = {"id": ident, "text": text, "because": "a rebuild is slow", "line": line}
            data["line_sha256"] = wal.sha256(line.encode())
            seq += 1
            rec = {"v": 1, "seq": seq, "ts": ts, "actor": state.actor, "op": "invariant", "data": data}
            rec = wal.seal({**rec, "views": {**last["views"], layout.INVARIANTS: bound.text()}, "prev": prev})
            log.write(wal.encode(rec))
            prev = rec["h"]
        for f in (view, log):
            f.flush()
            os.fsync(f.fileno())


def by_hand(state: State, n: int) -> None:
    with open(state.path(layout.INVARIANTS), "a", encoding="utf-8") as f:
        for i in range(n):
            f.write(f"- a note typed by hand, number {i:06d}, about the cache keyed by path and mtime\n")


def checked(state: State, name: str) -> None:
    out = State.open(state.root).reconcile(repair=False)
    if not out.ok:
        raise _common.BenchError(f"{name}: " + "; ".join(f"{p.file}: {p.message}" for p in out.problems))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="rehydrate-bench-inv-")
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ({min(values) * 1000:.1f}-{max(values) * 1000:.1f})"


def _once(
    args: argparse.Namespace, tmp: str, hand: State, big: State, cmd: Callable[..., _common.Measure]
) -> tuple[list[float], list[float], list[float]]:
    """The adoption (each round on a fresh copy of hand), verify on big, and passes of the running binding."""
    adopt, verify = [], []
    for r in range(args.verify_rounds):
        copy = os.path.join(tmp, f"hand-{r}")
        shutil.copytree(os.path.dirname(hand.root), copy, symlinks=True)
        adopt.append(cmd(State(os.path.join(copy, "state"), hand.actor), "verify", "--repair")())
        verify.append(cmd(big, "verify")())
        shutil.rmtree(copy)
    with open(big.path(layout.INVARIANTS), "rb") as f:
        data = f.read()
    passes = []
    for _ in range(5):
        t = time.perf_counter()
        binding.lines_of(data)
        passes.append(time.perf_counter() - t)
    return adopt, verify, passes


def _bench(args: argparse.Namespace, tmp: str) -> int:
    t0 = time.perf_counter()
    empty, big, hand = (base(os.path.join(tmp, k)) for k in ("empty", "big", "hand"))
    decisions(big, args.decisions)
    by_hand(hand, args.hand)
    for state, name in ((empty, "empty"), (big, "big")):
        checked(state, name)
    t_build = time.perf_counter() - t0
    size = os.path.getsize(big.path(layout.INVARIANTS))
    env = _common.clean_env(PYTHONPATH=_common.SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
    py = [sys.executable, "-m", "rehydrate"]

    def cmd(state: State, *words: str) -> _common.Measure:
        return _common.timed([*py, *words, "--dir", state.root], cwd=os.path.dirname(state.root), env=env)

    procs = {}
    for name, state in (("empty", empty), ("big", big)):
        procs[f"checkpoint {name}"] = cmd(state, "checkpoint", "--done", "a step", "--next", "the next step")
        procs[f"invariant {name}"] = cmd(state, "invariant", "keep the binding running", "--because", "O(1) appends")
    print(f"no size cliff: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}")
    print(_common.load() + " (before)")
    t0 = time.perf_counter()
    times = _common.interleave(procs, args.rounds, args.warmup)
    t_proc = time.perf_counter() - t0
    adopt, verify, passes = _once(args, tmp, hand, big, cmd)
    print(_common.load() + " (after)")
    print(
        f"states built in {t_build:.1f} s (big: {args.decisions:,} decision lines, 10_invariants.md "
        f"{size / 1e6:.1f} MB); whole processes: {args.rounds} rounds + {args.warmup} warm-up, {t_proc:.0f} s"
    )
    print()
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [(k, _ms(v), f"{med[k] / med[k.split()[0] + ' empty']:.2f}") for k, v in times.items()]
    print(_common.table(["python -m rehydrate ...", "ms median (min-max)", "/ empty"], rows))
    print()
    print(f"verify --repair adopting {args.hand:,} lines added by hand: " + ", ".join(f"{x:.2f} s" for x in adopt))
    print(f"verify on {args.decisions:,} decision lines: " + ", ".join(f"{x:.2f} s" for x in verify))
    print(
        f"one pass of the running binding over 10 ({size / 1e6:.1f} MB, in-process, what the cheap path pays "
        f"without a cache): {statistics.median(passes) * 1000:.0f} ms median of 5"
    )
    print()
    print("targets:")
    ok = True
    for what in ("checkpoint", "invariant"):
        line, good = _common.bound(f"{what} big/empty", med[f"{what} big"] / med[f"{what} empty"], TARGET)
        print("  " + line)
        ok = ok and good
    line, good = _common.bound("adoption seconds (median)", statistics.median(adopt), ADOPT_TARGET)
    print("  " + line)
    ok = ok and good
    print()
    options = [
        f"--decisions={args.decisions}",
        f"--hand={args.hand}",
        f"--rounds={args.rounds}",
        f"--warmup={args.warmup}",
        f"--verify-rounds={args.verify_rounds}",
    ]
    options += ["--check"] if args.check else []
    print("reproduce: " + _common.reproduce("invariants_scale.py", options))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
