"""The Stop hook on a transcript whose last line is huge: its cost must grow with that line's size, not with its square.

The Stop hook counts the tool calls since the last checkpoint by reading the transcript backwards
(rehydrate.transcripts.jsonl.newer_than). Its last line can be huge: a Write of a big file puts the whole file in one
record. Two transcripts, the same few turns, then a last line of 1 MiB in one and 32 MiB in the other:

1. In-process, interleaved: transcripts.claude.read.tool_calls_since on each, and a floor on each: the least any reader
   must do, one f.read() of the whole file and one parse of its last line. The floor's own big/small ratio is not 32:
   buffers of 32 MiB miss the caches and fault in fresh pages, 1 MiB ones do not. So the reader's big/small ratio is
   shown beside the floor's, and the target is on the big file, where a reader's algorithm shows: the quadratic
   reader this replaced scanned the growing line again for each 64 KiB chunk (52 s at 32 MiB,
   hundreds of times the floor). Target: reader / floor <= 2 on the big file.
2. Whole processes, interleaved: `rehydrate hook claude` answering the Stop event with a reminder configured, in a
   real git repository with a state. Target: the big one well inside Claude Code's 10 s timeout for Stop (<= 5 s).

    python bench/stop_hook.py [--rounds 7] [--small-mib 1] [--big-mib 32] [--check]

Prints PASS/FAIL against the targets and exits 0, unless --check is given: then a missed target exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import _common
from rehydrate.transcripts.claude.read import tool_calls_since

try:  # the parser the reader uses
    from orjson import loads
except ImportError:
    from json import loads  # type: ignore[assignment]

AT = "2999-01-01T00:00:00.000Z"  # after the state's checkpoint: every call counts


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    p.add_argument("--small-mib", type=int, default=1, help="the small last line, MiB (default 1)")
    p.add_argument("--big-mib", type=int, default=32, help="the big last line, MiB (default 32)")
    p.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return p.parse_args(argv)


def transcript(path: str, mib: int) -> None:
    """A user turn, three tool calls, and a last line: a Write whose content is `mib` MiB."""
    lines = [{"type": "user", "timestamp": AT, "message": {"role": "user", "content": "go"}}]
    for i in range(3):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}
        lines.append({"type": "assistant", "timestamp": AT, "message": {"content": [block]}})
    write = {"type": "tool_use", "id": "toolu_w", "name": "Write", "input": {"file_path": "big.txt"}}
    write["input"]["content"] = "x" * (mib << 20)
    lines.append({"type": "assistant", "timestamp": AT, "message": {"content": [write]}})
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(x) + "\n" for x in lines))


def in_process(path: str) -> Callable[[], float]:
    def measure() -> float:
        t0 = time.perf_counter()
        calls = tool_calls_since(path, "")
        elapsed = time.perf_counter() - t0
        if calls != 4:
            raise _common.BenchError(f"{path}: {calls} tool calls counted, 4 expected")
        return elapsed

    return measure


def floor(path: str) -> Callable[[], float]:
    """The least a reader must do: read the file once, parse its last line once."""

    def measure() -> float:
        t0 = time.perf_counter()
        with open(path, "rb") as f:
            data = f.read()
        loads(data[data.rindex(b"\n", 0, len(data) - 1) + 1 :])
        return time.perf_counter() - t0

    return measure


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-stop-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, root: str) -> int:
    small, big = os.path.join(root, "small.jsonl"), os.path.join(root, "big.jsonl")
    transcript(small, args.small_mib)
    transcript(big, args.big_mib)
    size = {"small": os.path.getsize(small), "big": os.path.getsize(big)}
    print(f"stop_hook: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}")
    print(_common.load())
    print(f"last line: {args.small_mib} MiB vs {args.big_mib} MiB ({args.rounds} rounds, interleaved)")
    print()

    variants = {
        "reader small": in_process(small),
        "reader big": in_process(big),
        "floor small": floor(small),
        "floor big": floor(big),
    }
    times = _common.interleave(variants, args.rounds, warmup=1)
    med = {k: _common.median(v) for k, v in times.items()}
    rows = [(k, f"{size[k.split()[1]] / (1 << 20):.1f}", f"{med[k] * 1000:.1f}") for k in variants]
    print(_common.table(["in-process", "MiB", "median ms"], rows))
    reader = med["reader big"] / med["reader small"]
    base = med["floor big"] / med["floor small"]
    print(
        f"  reader big/small = {reader:.1f}; floor big/small = {base:.1f}; sizes big/small = "
        f"{size['big'] / size['small']:.1f}; reader/floor at {args.big_mib} MiB = "
        f"{med['reader big'] / med['floor big']:.2f}"
    )
    line, ok = _common.bound(f"reader / floor at {args.big_mib} MiB", med["reader big"] / med["floor big"], 2.0)
    print("  " + line)
    print()

    repo = os.path.join(root, "repo")
    _common.git_repo(repo)
    env = _common.clean_env(PYTHONPATH=_common.SRC, HOME=root)
    _common.run([sys.executable, "-m", "rehydrate", "init", "--goal", "bench"], cwd=repo, env=env)
    with open(os.path.join(repo, "state", "config.json"), "w", encoding="utf-8") as f:
        f.write('{"stop_reminder_after": 1}')
    argv = [sys.executable, "-m", "rehydrate", "hook", "claude"]

    def stop(path: str) -> bytes:
        event = {"hook_event_name": "Stop", "cwd": repo, "stop_hook_active": False, "transcript_path": path}
        return json.dumps(event).encode()

    procs = {
        "small": _common.timed(argv, cwd=repo, env=env, stdin=stop(small)),
        "big": _common.timed(argv, cwd=repo, env=env, stdin=stop(big)),
    }
    whole = _common.interleave(procs, max(3, args.rounds // 2), warmup=1)
    wmed = {k: _common.median(v) for k, v in whole.items()}
    rows = [(k, f"{size[k] / (1 << 20):.1f}", f"{wmed[k]:.2f}") for k in ("small", "big")]
    print(_common.table(["Stop hook process", "MiB", "median s"], rows))
    line, ok2 = _common.bound("big, seconds", wmed["big"], 5.0)
    print("  " + line + "   (Claude Code's timeout for Stop: 10 s)")
    print()
    options = [f"--rounds={args.rounds}", f"--small-mib={args.small_mib}", f"--big-mib={args.big_mib}"]
    print("reproduce: " + _common.reproduce("stop_hook.py", options + (["--check"] if args.check else [])))
    return 1 if args.check and not (ok and ok2) else 0


if __name__ == "__main__":
    sys.exit(main())
