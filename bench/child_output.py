"""What a child's output costs rehydrate in memory: `canary run` and `rehydrate run` on a child that floods stdout.

`canary run` keeps the first MAX_ANSWER (1 MiB) bytes of the agent's stdout, reads the rest and drops it as it comes;
`rehydrate run` passes the command's output through while it hashes it, holding none of it. So neither process should
grow with the output. Whole processes, each measured by its own wait4() (the peak resident set size of that process
and of what it waited for; the writers hold one 1 MiB block):

    floor          canary run, an agent that writes nothing
    canary MB      canary run, an agent that writes --mb MB to stdout and exits
    canary yes     canary run --timeout 2, an agent that writes for ever (`yes`): the deadline stops it
    run MB         rehydrate run -- a command that writes --mb MB (stdout to /dev/null)

Target: every peak <= the floor + 64 MiB (before, `canary run` held the whole output: 300 MiB of it peaked at
615 MiB, `yes` for 2 s at 1.1 GiB). Peaks are not noisy the way times are: the median over the rounds is reported,
beside the median wall time.

    python bench/child_output.py [--mb 300] [--rounds 3] [--check] [--against DIR]

With --against DIR, another checkout's src/ (an older commit: `git worktree add --detach ../old COMMIT`) runs the
same variants in the same rounds. Prints PASS/FAIL against the target for this checkout and exits 0, unless --check
is given: then a missed target exits 1.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import _common

WRITER = "import os, sys\nblock = b'x' * (1 << 20)\nfor _ in range(int(sys.argv[1])):\n    os.write(1, block)\n"
MARGIN_MIB = 64.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mb", type=int, default=300, help="MiB the flooding child writes (default 300)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    p.add_argument("--against", metavar="DIR", help="another checkout, measured in the same rounds")
    return p.parse_args(argv)


def peak(argv: Sequence[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """One whole process: its peak resident set size (MiB) and its wall time (seconds)."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=null, stderr=null)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - t0
    if child.returncode not in (0, 1):  # canary run exits 1 when the answer fails the grade, as these all do
        _common.run(argv, cwd, env)
        raise _common.BenchError(f"{shlex.join(argv)} exited {child.returncode}")
    rss = usage.ru_maxrss / (1 << 20) if sys.platform == "darwin" else usage.ru_maxrss / 1024
    return rss, elapsed


def variants(writer: str, mb: int) -> dict[str, list[str]]:
    """The commands, run in a repository with a planted canary; the checkout measured is the environment's
    PYTHONPATH."""
    py = shlex.quote(sys.executable)
    base = [sys.executable, "-m", "rehydrate"]
    return {
        "floor": [*base, "canary", "run", "--agent", f"{py} {shlex.quote(writer)} 0"],
        f"canary {mb} MiB": [*base, "canary", "run", "--agent", f"{py} {shlex.quote(writer)} {mb}"],
        "canary yes 2 s": [*base, "canary", "run", "--timeout", "2", "--agent", "yes"],
        f"run {mb} MiB": [*base, "run", "--", sys.executable, writer, str(mb)],
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-output-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, root: str) -> int:
    print(f"child_output: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}")
    print(_common.load())
    writer = os.path.join(root, "writer.py")
    with open(writer, "w", encoding="utf-8") as f:
        f.write(WRITER)
    checkouts = {"": _common.SRC}
    if args.against:
        checkouts[" [against]"] = os.path.join(os.path.abspath(args.against), "src")
    measures: dict[str, Callable[[], float]] = {}
    walls: dict[str, list[float]] = {}
    for tag, src in checkouts.items():
        repo = os.path.join(root, "repo" + tag.strip(" []"))
        env = _common.clean_env(PYTHONPATH=src, HOME=root)
        _common.git_repo(repo)
        for cmd in (["init", "--goal", "measure"], ["checkpoint", "--done", "a", "--next", "b"], ["canary", "plant"]):
            _common.run([sys.executable, "-m", "rehydrate", *cmd], cwd=repo, env=env)
        for name, cmd in variants(writer, args.mb).items():
            walls[name + tag] = []

            def measure(
                cmd: list[str] = cmd, repo: str = repo, env: dict[str, str] = env, key: str = name + tag
            ) -> float:
                rss, wall = peak(cmd, repo, env)
                walls[key].append(wall)
                return rss

            measures[name + tag] = measure
    print(f"{args.rounds} rounds, interleaved; peak RSS of each rehydrate process by wait4()")
    print()
    peaks = _common.interleave(measures, args.rounds)
    med = {k: _common.median(v) for k, v in peaks.items()}
    rows = [(k, f"{med[k]:.0f}", f"{_common.median(walls[k]):.2f}") for k in measures]
    print(_common.table(["process", "peak MiB", "median s"], rows))
    ok = True
    for name in measures:
        if name.startswith("floor") or name.endswith("[against]"):
            continue
        line, fine = _common.bound(f"{name}: peak - floor, MiB", med[name] - med["floor"], MARGIN_MIB)
        print("  " + line)
        ok = ok and fine
    print()
    options = [f"--mb={args.mb}", f"--rounds={args.rounds}"] + (["--check"] if args.check else [])
    options += [f"--against={args.against}"] if args.against else []
    print("reproduce: " + _common.reproduce("child_output.py", options))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
