"""Every hook event of every harness, as a whole process, against `python -c pass` in the same rounds; and Gemini
CLI's BeforeModel, which runs before every model request with the whole request on stdin, on a 5 MB request against
a 5 KB one.

One git repository with a state (a goal, a decision, a rejected approach that guards `db/`, a checkpoint). Each
variant is `python -m rehydrate hook HARNESS` given one documented input (tests/fixtures/hooks/HARNESS/EVENT.json,
its project folder replaced by the repository): one per fixture, for every harness that calls `rehydrate hook`. Then
Gemini's BeforeModel four ways: a request of 5 KB and one of 5 MB (its messages after the first few: 100 of 50 KB),
each with an uncompressed history (the common case: nothing to add) and a compressed one (the brief after the
summary, every time).

Target: BeforeModel 5 MB / 5 KB <= 1.2, for the uncompressed and the compressed request alike (the hook reads the
request's first messages only; reading the rest of stdin is the one cost that grows). The other ratios say what
each event costs beside the interpreter's start.

Events that write (a compaction's record, a brief's journal line) write once per call: the state grows by the rounds
run, a few hundred records at most.

    python bench/hooks.py [--rounds 10] [--check] [--only gemini]

Prints PASS/FAIL against the targets and exits 0, unless --check is given: then a missed target exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence

import _common
from rehydrate.store.state import State

FIXTURES = os.path.join(_common.REPO, "tests", "fixtures", "hooks")
SMALL = 5 * 1024
LARGE = 5 * 1024 * 1024
TARGET = 1.2


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=10, help="interleaved rounds of whole processes (default 10)")
    p.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    p.add_argument("--only", metavar="HARNESS", help="only this harness's events (and the interpreter's start)")
    return p.parse_args(argv)


def build(repo: str) -> None:
    _common.git_repo(repo)
    state, _ = State.init(os.path.join(repo, "state"), "measure every hook event")
    state.invariant("Parse with a Pratt parser", because="precedence stays in one table")
    state.reject("Edit db/schema.sql by hand", because="migrations own it", guard="db/*")
    state.checkpoint(done="the tokenizer", next="the parser")


def fixture(repo: str, harness: str, name: str) -> dict[str, object]:
    with open(os.path.join(FIXTURES, harness, name + ".json"), encoding="utf-8") as f:
        data: dict[str, object] = json.loads(f.read().replace("/home/user/project", repo))
    return data


def stringified(event: dict[str, object]) -> bytes:
    """As Gemini CLI writes a hook's stdin: JSON.stringify, no spaces."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


def sized(event: dict[str, object], size: int) -> bytes:
    """event with messages of 50,000 characters (or fewer) added after its own until its bytes reach size."""
    event = json.loads(json.dumps(event))
    request = event["llm_request"]
    assert isinstance(request, dict)
    messages = request["messages"]
    base = len(stringified(event))
    while base < size:
        chunk = min(50_000, size - base)
        messages.append({"role": "user" if len(messages) % 2 else "model", "content": "y" * chunk})
        base = len(stringified(event))
    return stringified(event)


def piped(argv: list[str], cwd: str, env: dict[str, str], stdin: bytes) -> _common.Measure:
    """A whole process given stdin through a pipe written as a harness writes it: as much per write as the pipe
    takes (subprocess.run writes 4 KiB at a time, with a select call before each: for 5 MB, a cost of the writer's,
    not the hook's)."""
    import subprocess
    import threading
    import time

    def measure() -> float:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        assert proc.stdin is not None
        fd = proc.stdin.fileno()

        def write() -> None:
            view = memoryview(stdin)
            try:
                while view:
                    view = view[os.write(fd, view) :]
            except BrokenPipeError:
                pass
            finally:
                proc.stdin.close()  # type: ignore[union-attr]

        writer = threading.Thread(target=write)
        writer.start()
        code = proc.wait()
        writer.join()
        elapsed = time.perf_counter() - t0
        if code != 0:
            raise _common.BenchError(f"{argv} exited {code}")
        return elapsed

    return measure


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-hooks-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, root: str) -> int:
    from rehydrate import harness as registry

    print(f"hook events: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}")
    print(_common.load())
    repo = os.path.join(root, "repo")
    build(repo)
    env = _common.clean_env(PYTHONPATH=_common.SRC, HOME=root, CLAUDE_CONFIG_DIR=os.path.join(root, ".claude"))
    procs: dict[str, _common.Measure] = {"python -c pass": piped([sys.executable, "-c", "pass"], repo, env, b"")}
    harnesses = [h for h in registry.HOOKS if not args.only or h == args.only]
    for harness in harnesses:
        folder = os.path.join(FIXTURES, harness)
        for name in sorted(n[:-5] for n in os.listdir(folder) if n.endswith(".json")):
            argv = [sys.executable, "-m", "rehydrate", "hook", harness]
            if getattr(registry.get(harness), "EVENT_IN_ARGV", False):  # its input names no event: the command does
                argv.append(name.split("-")[0])
            stdin = json.dumps(fixture(repo, harness, name)).encode()
            procs[f"{harness} {name}"] = piped(argv, repo, env, stdin)
    sizes: dict[str, int] = {}
    if "gemini" in harnesses:
        argv = [sys.executable, "-m", "rehydrate", "hook", "gemini"]
        for kind, name in (("plain", "BeforeModel"), ("compressed", "BeforeModel-compressed")):
            event = fixture(repo, "gemini", name)
            for label, size in (("5 KB", SMALL), ("5 MB", LARGE)):
                stdin = sized(event, size)
                key = f"gemini BeforeModel {kind}, {label}"
                sizes[key] = len(stdin)
                procs[key] = piped(argv, repo, env, stdin)
    print(f"{args.rounds} rounds + 1 warm-up, interleaved; whole processes of `python -m rehydrate hook HARNESS`")
    for key, size in sizes.items():
        print(f"  {key}: {size:,} bytes on stdin")
    print()
    times = _common.interleave(procs, args.rounds, warmup=1)
    med = {k: _common.median(v) for k, v in times.items()}
    floor = med["python -c pass"]
    rows = [(k, f"{m * 1000:.1f}", f"{m / floor:.2f}") for k, m in med.items()]
    print(_common.table(["variant", "median ms", "/ python -c pass"], rows))
    print()
    ok = True
    for kind in ("plain", "compressed") if sizes else ():
        ratio = med[f"gemini BeforeModel {kind}, 5 MB"] / med[f"gemini BeforeModel {kind}, 5 KB"]
        line, passed = _common.bound(f"BeforeModel {kind}: 5 MB / 5 KB", ratio, TARGET)
        print("  " + line)
        ok = ok and passed
    print()
    options = [f"--rounds={args.rounds}"] + (["--check"] if args.check else [])
    options += [f"--only={args.only}"] if args.only else []
    print("reproduce: " + _common.reproduce("hooks.py", options))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
