"""The guard on a long history: its cost must stop growing with the WAL, since it runs before every tool call.

`rehydrate hook claude` answers a PreToolUse Edit of a guarded path (`reject --guard db/schema.sql`, the third record
of the log). The guard reads the watch from the reject record, looking back at most LOOKBACK (1 MiB) of the logs;
further back, the line's own watch counts. Three states, the same but for the length of the WAL (the records after
the reject are sealed, chained copies of a `resume`, as in bench/resume_scale.py): 10 records, 20,000 (about 10 MB,
well past the reach) and 100,000 (about 50 MB). Whole processes, interleaved.

Targets: every answer asks (the guard holds at every length); 100,000 / 20,000 records <= 1.2 (past the reach, the
cost no longer grows); the 100,000-record answer within 1 s (Claude Code's default hook timeout is 60 s, and the hook
runs before every edit). The answer on the short log, where the record is found, shows the cost of a whole reach.

    python bench/guard.py [--rounds 15] [--check]

Prints PASS/FAIL against the targets and exits 0, unless --check is given: then a missed target exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

import _common
from rehydrate import brief
from rehydrate.store.state import State

SIZES = {"10 records": 10, "20,000 records": 20_000, "100,000 records": 100_000}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15, help="interleaved rounds of whole processes (default 15)")
    p.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return p.parse_args(argv)


def build(repo: str, records: int) -> None:
    """A git repository whose state's WAL holds `records` chained records, the third a guarded reject."""
    _common.git_repo(repo)
    state, _ = State.init(os.path.join(repo, "state"), "measure the guard against the length of the WAL")
    state.reject("Edit db/schema.sql directly", because="every schema change needs a migration", guard="db/schema.sql")
    brief.resume(state)
    _common.pad_wal(state.wal_path, records)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-guard-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, root: str) -> int:
    print(f"guard: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}")
    print(_common.load())
    env = _common.clean_env(PYTHONPATH=_common.SRC, HOME=root)
    argv = [sys.executable, "-m", "rehydrate", "hook", "claude"]
    procs = {}
    sizes = {}
    for name, records in SIZES.items():
        repo = os.path.join(root, name.split()[0].replace(",", ""))
        build(repo, records)
        sizes[name] = os.path.getsize(os.path.join(repo, "state", "wal", "agent.jsonl"))
        event = {
            "hook_event_name": "PreToolUse",
            "cwd": repo,
            "tool_name": "Edit",
            "tool_input": {"file_path": "db/schema.sql", "old_string": "a", "new_string": "b"},
        }
        stdin = json.dumps(event).encode()
        out = subprocess.run(argv, cwd=repo, env=env, input=stdin, capture_output=True, check=True).stdout
        decision = json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out.strip() else "(none)"
        if decision != "ask":
            raise _common.BenchError(f"{name}: the guard answered {decision!r}, not 'ask'")
        procs[name] = _common.timed(argv, cwd=repo, env=env, stdin=stdin)
    print(f"{args.rounds} rounds + 1 warm-up, interleaved; every answer asks, as the guard must")
    print()
    times = _common.interleave(procs, args.rounds, warmup=1)
    med = {k: _common.median(v) for k, v in times.items()}
    rows = [(k, f"{sizes[k] / (1 << 20):.1f}", f"{med[k] * 1000:.1f}") for k in SIZES]
    print(_common.table(["PreToolUse hook process", "WAL MiB", "median ms"], rows))
    growth = med["100,000 records"] / med["20,000 records"]
    line, ok = _common.bound("100,000 / 20,000 records", growth, 1.2)
    print("  " + line)
    line2, ok2 = _common.bound("100,000 records, seconds", med["100,000 records"], 1.0)
    print("  " + line2)
    print(f"  20,000 / 10 records = {med['20,000 records'] / med['10 records']:.2f} (the cost of one whole reach)")
    print()
    print(
        "reproduce: " + _common.reproduce("guard.py", [f"--rounds={args.rounds}"] + (["--check"] if args.check else []))
    )
    return 1 if args.check and not (ok and ok2) else 0


if __name__ == "__main__":
    sys.exit(main())
