"""`rehydrate resume` must cost what the brief shows, not what the views hold.

Six states, each in its own temporary git repository, made by the real commands (`init`, `checkpoint`) and, for the
many entries, by records written through the store's own sealing (each record binds its line's sha256 and the
view's running binding, as `State.invariant` writes them; `reconcile(repair=False)` must find the views bound):

    empty       init + one checkpoint
    decisions   + 25,000 decision lines in 10_invariants.md
    handoff     decisions + a 1 MB 20_handoff.md (State.handoff)
    rejected    empty + 3,000 rejected approaches
    200k        empty + 200,000 decision lines (about 23 MB: the brief at size)
    50k-rej     empty + 50,000 rejected approaches (every id named, or covered by a named range)

Then `rehydrate resume` runs as a whole process on all six, interleaved, and `brief.render` alone in this process on
the same inputs (read once, rendered each round). Target: handoff/empty <= 1.3 (whole process).

A resume on an unchanged 10_invariants.md reads only what it shows, by the summary of its last scan kept in the
worktree's seen cache (store/local/place.py); the first resume after 10 changed other than by an append of this clone's
(a `git pull`, an edit) scans it whole: the column "no summary" times that resume (the summary removed before each run),
its ratio against the empty state's resume run the same way (its cache rewritten just before it, too).

    python bench/brief_scale.py [--rounds 20] [--decisions 25000] [--rejected 3000] [--big 200000]
        [--many-rejected 50000] [--check]
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
from rehydrate import __version__, brief
from rehydrate.store import layout
from rehydrate.store.latches import binding
from rehydrate.store.local import seen
from rehydrate.store.state import State
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal

TARGET = 1.3
HANDOFF_BYTES = 1_000_000


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/brief_scale.py",
        description="`rehydrate resume` and brief.render on an empty state against large views, interleaved.",
    )
    p.add_argument("--decisions", type=int, default=25_000, help="decision lines (default 25000)")
    p.add_argument("--rejected", type=int, default=3_000, help="rejected approaches (default 3000)")
    p.add_argument("--big", type=int, default=200_000, help="decision lines of the 200k state (default 200000)")
    p.add_argument(
        "--many-rejected", type=int, default=50_000, help="rejected approaches of the 50k-rej state (default 50000)"
    )
    p.add_argument("--rounds", type=int, default=20, help="measured rounds of whole processes (default 20)")
    p.add_argument("--inproc-rounds", type=int, default=20, help="measured rounds of brief.render (default 20)")
    p.add_argument("--warmup", type=int, default=2, help="rounds run first and thrown away (default 2)")
    p.add_argument("--check", action="store_true", help="exit 1 if the target is missed (default: always exit 0)")
    args = p.parse_args(argv)
    counts = (args.rounds, args.inproc_rounds, args.decisions, args.rejected, args.big, args.many_rejected)
    if min(counts) < 1 or args.warmup < 0:
        p.error("--rounds, --inproc-rounds, --decisions, --rejected, --big and --many-rejected must be at least 1")
    return args


def base(folder: str) -> State:
    """A git repository with a state in it: init and one checkpoint, by the real commands' code."""
    _common.git_repo(folder)
    path = os.path.join(folder, "state")
    state, _ = State.init(path, "measure the brief against the size of the views", "resume costs what it shows")
    state.checkpoint("built the state", "run rehydrate resume")
    return state


def entries(state: State, kind: str, n: int) -> None:
    """n decision ("D") or rejected ("R") lines, each with the record `State.invariant`/`reject` writes for it:
    the line and its sha256 in the data, the views' bindings (10_invariants.md's running one,
    store/latches/binding.py)."""
    last = walback.read_tail(state.wal_path, 1).records[-1][1]
    view_path = state.path(layout.INVARIANTS)
    with open(view_path, "rb") as f:
        running = binding.lines_of(f.read())
    bound = dict(last["views"])
    prev, seq, ts = last["h"], int(last["seq"]), last["ts"]
    op, word = ("invariant", "decision") if kind == "D" else ("reject", "rejected")
    because = "a rebuild is slow"
    with open(view_path, "ab") as view, open(state.wal_path, "ab", buffering=1 << 20) as log:
        for i in range(n):
            text = f"{word} {i:06d}: keep the cache keyed by path and mtime"
            ident = f"{kind}-" + wal.sha256(f"{state.actor}\0{ts}\0{text}".encode())[:6]
            line = layout.entry_line(kind, ident, ts[:10], text, because, None)
            raw = (line + "\n").encode()
            view.write(raw)
            running = running.add(raw[:-1])
            bound[layout.INVARIANTS] = running.text()
            data = {"id": ident, "text": text, "because": because, "line": line, "line_sha256": wal.sha256(raw[:-1])}
            seq += 1
            rec = {"v": 1, "seq": seq, "ts": ts, "actor": state.actor, "op": op, "data": data, "views": dict(bound)}
            rec = wal.seal({**rec, "prev": prev})
            log.write(wal.encode(rec))
            prev = rec["h"]
        for f in (view, log):
            f.flush()
            os.fsync(f.fileno())


def handoff_text(size: int) -> str:
    """A handoff note of about `size` bytes: numbered lines of plain text."""
    line = "- step {:06d}: measured the cache, kept the keys by path, wrote down what the next session should check"
    out = [line.format(i) for i in range(size // (len(line) + 1) + 1)]
    return "\n".join(out)[:size].rstrip()


STATES = ("empty", "decisions", "handoff", "rejected", "200k", "50k-rej")


def build(tmp: str, args: argparse.Namespace) -> dict[str, str]:
    """The six states; returns each one's state folder. Each is checked: reconcile(repair=False).ok."""
    paths: dict[str, str] = {}
    for name in STATES:
        state = base(os.path.join(tmp, name))
        if name in ("decisions", "handoff"):
            entries(state, "D", args.decisions)
        if name == "handoff":
            State.open(state.root).handoff(handoff_text(HANDOFF_BYTES))
        if name in ("rejected", "50k-rej"):
            entries(state, "R", args.rejected if name == "rejected" else args.many_rejected)
        if name == "200k":
            entries(state, "D", args.big)
        out = State.open(state.root).reconcile(repair=False)
        if not out.ok:
            raise _common.BenchError(f"{name}: " + "; ".join(f"{p.file}: {p.message}" for p in out.problems))
        paths[name] = state.root
    return paths


def render_input(path: str) -> brief.BriefInput:
    """What `resume` gives `render` for the state at path (the checks run once, as resume runs them)."""
    from rehydrate import checks

    state = State.open(path)
    with state.reading() as snap:
        sizes: dict[str, int] = {}
        parts: dict[str, object] = {}
        shown = brief._views(state, snap, brief.DEFAULT_BUDGET, sizes, parts)
        findings = checks.run_all(checks.Context(state, snap.outcome(), views=shown))
        conf = checks.confidence(findings)
        return brief._input(state, shown, findings, conf, snap.last, None, sizes, parts)


def inproc_render(inp: brief.BriefInput) -> Callable[[], float]:
    def measure() -> float:
        t0 = time.perf_counter()
        out = brief.render(inp)
        elapsed = time.perf_counter() - t0
        if len(out.text) > brief.DEFAULT_BUDGET:
            raise _common.BenchError("the brief is over its budget")
        return elapsed

    return measure


def inproc_read_render(path: str) -> Callable[[], float]:
    """The brief's own reads of the views (from the files, as `reduced` reads them: no reconciliation, no checks) and
    its rendering."""
    state = State.open(path)

    def measure() -> float:
        t0 = time.perf_counter()
        sizes: dict[str, int] = {}
        parts: dict[str, object] = {}
        shown = brief._views(state, None, brief.DEFAULT_BUDGET, sizes, parts)
        out = brief.render(brief._input(state, shown, [], "recovered", None, None, sizes, parts))
        elapsed = time.perf_counter() - t0
        if len(out.text) > brief.DEFAULT_BUDGET:
            raise _common.BenchError("the brief is over its budget")
        return elapsed

    return measure


def without_summary(measure: Callable[[], float], path: str) -> Callable[[], float]:
    """The resume that scans 10 whole: the cache's summary of its last scan removed first (the rest of it kept)."""
    state = State.open(path)

    def cold() -> float:
        cache = seen.Seen.load(state.seen_path)
        if cache is not None:
            cache.scan = ""
            cache.save(state.seen_path, cache.dirs)
        return measure()

    return cold


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="rehydrate-bench-brief-")
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: str) -> int:
    t0 = time.perf_counter()
    paths = build(tmp, args)
    t_build = time.perf_counter() - t0
    sizes = {
        k: {
            n: os.path.getsize(os.path.join(p, n))
            for n in (layout.INVARIANTS, layout.HANDOFF)
            if os.path.exists(os.path.join(p, n))
        }
        for k, p in paths.items()
    }
    env = _common.clean_env(PYTHONPATH=_common.SRC, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
    procs = {
        k: _common.timed([sys.executable, "-m", "rehydrate", "resume", "--dir", p], cwd=os.path.dirname(p), env=env)
        for k, p in paths.items()
    }
    procs.update({k + " cold": without_summary(procs[k], p) for k, p in paths.items()})
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc_times = _common.interleave(procs, args.rounds, args.warmup)
    t_proc = time.perf_counter() - t0
    inputs = {k: render_input(p) for k, p in paths.items()}
    t0 = time.perf_counter()
    render_times = _common.interleave({k: inproc_render(v) for k, v in inputs.items()}, args.inproc_rounds, args.warmup)
    t_render = time.perf_counter() - t0
    read_times = _common.interleave(
        {k: inproc_read_render(p) for k, p in paths.items()}, args.inproc_rounds, args.warmup
    )
    load_after = os.getloadavg()

    print(f"the brief against the size of the views: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}")
    print(f"states built in {t_build:.1f} s, each checked: reconcile(repair=False).ok (every view bound)")
    print(
        f"whole process: python -m rehydrate resume --dir D, {args.rounds} rounds + {args.warmup} warm-up, "
        f"{t_proc:.0f} s"
    )
    print(
        f"in-process: brief.render(input of D), {args.inproc_rounds} rounds + {args.warmup} warm-up, {t_render:.0f} s;"
        " read+render: the brief's own reads of the views from the files (no reconciliation) and brief.render"
    )
    print(
        "load average (1, 5, 15 min): before "
        + " ".join(f"{x:.2f}" for x in load_before)
        + ", after "
        + " ".join(f"{x:.2f}" for x in load_after)
    )
    print()
    proc_ms = {k: statistics.median(v) * 1000 for k, v in proc_times.items()}
    render_ms = {k: statistics.median(v) * 1000 for k, v in render_times.items()}
    read_ms = {k: statistics.median(v) * 1000 for k, v in read_times.items()}
    rows: list[tuple[object, ...]] = []
    for k in paths:
        what = ", ".join(f"{n} {b / 1e6:.2f} MB" for n, b in sizes[k].items())
        rows.append(
            (
                k,
                what,
                f"{proc_ms[k]:.1f}",
                f"{proc_ms[k] / proc_ms['empty']:.2f}",
                f"{proc_ms[k + ' cold']:.1f}",
                f"{proc_ms[k + ' cold'] / proc_ms['empty cold']:.2f}",
                f"{render_ms[k]:.2f}",
                f"{render_ms[k] / render_ms['empty']:.1f}",
                f"{read_ms[k]:.2f}",
            )
        )
    heads = ["state", "views", "resume ms", "/ empty", "no summary", "/ empty", "render ms", "/ empty"]
    heads.append("read+render ms")
    print(_common.table(heads, rows))
    print()
    line, ok = _common.bound("handoff/empty (whole process)", proc_ms["handoff"] / proc_ms["empty"], TARGET)
    print("target:")
    print("  " + line)
    print()
    options = [
        f"--decisions={args.decisions}",
        f"--rejected={args.rejected}",
        f"--big={args.big}",
        f"--many-rejected={args.many_rejected}",
        f"--rounds={args.rounds}",
        f"--inproc-rounds={args.inproc_rounds}",
        f"--warmup={args.warmup}",
    ]
    options += ["--check"] if args.check else []
    print("reproduce: " + _common.reproduce("brief_scale.py", options))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
