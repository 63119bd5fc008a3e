"""`rehydrate recover` must not grow with git history: its git calls are bounded by the checkpoint (plan 4.1, part 1).

Two projects, built the same way except for their history: a repository whose main line holds 100 commits (small)
or 100,000 (big) before the checkpoint, generated as one `git fast-import` stream (one file changed per commit, so
the work tree stays one file and `git status` costs the same in both). Then in both the same: a branch `feat` pushed
to a bare origin (origin/HEAD set), `rehydrate init` and a checkpoint, 10 own commits after it, 1 dirty file, 5
commits by a teammate on origin's main (fetched). PATH is one folder holding a `git` link and a fake `gh` that
answers at once (signed in, no pull request), so no real gh or network is reached.

Then `python -m rehydrate recover --json` runs as whole processes on both, interleaved (exit 1 expected: the own
commits and the dirty file degrade live-state, the teammate's commits direction), and in-process (cli.main) on both,
interleaved. Target: big/small <= 1.5 (whole process). Each git command recover runs (found once through a logging
`git` wrapper) is then timed alone on both, so that a call that grows with history is named.

The two projects are cached (default bench/results/recover_scale/, gitignored) and rebuilt when they no longer
check out; recover writes nothing, so a cached project stays as built.

    python bench/recover_scale.py [--commits 100000] [--rounds 30] [--rebuild] [--check]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
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

TARGET = 1.5
DEFAULT_CACHE = os.path.join(_common.REPO, "bench", "results", "recover_scale")
OWN, TEAMMATE = 10, 5  # commits after the checkpoint: the agent's own on feat, a teammate's on origin's main
EXPECTED = ["live-state", "direction"]  # what recover must find degraded in both projects
IDENT = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
FAKE_GH = """\
import sys
args = sys.argv[1:]
if args[:2] == ["auth", "status"]:
    sys.exit(0)
sys.stderr.write("no pull requests found for branch\\n")
sys.exit(1)
"""
LOGGING_GIT = """\
import json, os, sys
with open(os.environ["BENCH_GIT_LOG"], "a") as f:
    f.write(json.dumps([os.getcwd(), sys.argv[1:]]) + "\\n")
os.execv({git!r}, ["git", *sys.argv[1:]])
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/recover_scale.py",
        description="`rehydrate recover --json` on a repository with 100 commits before the checkpoint against one "
        "with 100,000, interleaved, as whole processes and in-process; ratio of medians big/small.",
    )
    p.add_argument("--commits", type=int, default=100_000, help="commits before the checkpoint, big (default 100000)")
    p.add_argument("--small-commits", type=int, default=100, help="commits before the checkpoint, small (default 100)")
    p.add_argument("--rounds", type=int, default=30, help="measured rounds of whole processes (default 30)")
    p.add_argument("--inproc-rounds", type=int, default=30, help="measured rounds in-process (default 30)")
    p.add_argument("--git-rounds", type=int, default=30, help="measured rounds of each git command (default 30)")
    p.add_argument("--warmup", type=int, default=3, help="rounds run first and thrown away (default 3)")
    p.add_argument(
        "--cache-dir", default=DEFAULT_CACHE, help="where the projects are kept (default bench/results/recover_scale)"
    )
    p.add_argument("--no-cache", action="store_true", help="build both in a temporary folder, delete them after")
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached projects even if they check out")
    p.add_argument("--check", action="store_true", help="exit 1 if the target is missed (default: always exit 0)")
    args = p.parse_args(argv)
    if args.small_commits < 1 or args.commits < args.small_commits:
        p.error("--small-commits must be at least 1 and --commits at least that")
    if min(args.rounds, args.inproc_rounds, args.git_rounds) < 1 or args.warmup < 0:
        p.error("the rounds must be at least 1, --warmup at least 0")
    return args


# ---------------------------------------------------------------------------------------------------- building


def history(commits: int) -> bytes:
    """A fast-import stream: `commits` commits on refs/heads/main, each changing the one file history.txt, dated
    one minute apart in 2020 (long before any checkpoint)."""
    out = io.BytesIO()
    base = 1_577_836_800  # 2020-01-01
    for i in range(1, commits + 1):
        msg = f"History {i}\n".encode()
        body = f"commit {i}\n".encode()
        out.write(b"commit refs/heads/main\nmark :%d\n" % i)
        out.write(b"committer bench <bench@example.invalid> %d +0000\n" % (base + 60 * i))
        out.write(b"data %d\n%s" % (len(msg), msg))
        if i > 1:
            out.write(b"from :%d\n" % (i - 1))
        out.write(b"M 100644 inline history.txt\ndata %d\n%s\n" % (len(body), body))
    return out.getvalue()


def tools(folder: str) -> str:
    """A PATH of one folder: a link to the real git and the fake gh."""
    bin_dir = os.path.join(folder, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    git = shutil.which("git")
    if git is None:
        raise _common.BenchError("git is needed")
    if not os.path.lexists(os.path.join(bin_dir, "git")):
        os.symlink(git, os.path.join(bin_dir, "git"))
    gh = os.path.join(bin_dir, "gh")
    with open(gh, "w", encoding="utf-8") as f:
        f.write(f"#!{sys.executable}\n{FAKE_GH}")
    os.chmod(gh, 0o755)
    return bin_dir


def env_for(folder: str, **extra: str) -> dict[str, str]:
    """The environment of every command in a project: its own HOME, no system or global git config, PATH = tools."""
    home = os.path.join(folder, "home")
    os.makedirs(home, exist_ok=True)
    env = {k: v for k, v in _common.clean_env().items() if not k.startswith(("GH_", "GITHUB_", "GIT_"))}
    env.update(HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, PATH=tools(folder), **IDENT)
    env.update(extra)
    return env


def build(folder: str, commits: int) -> str:
    """The project (see the module's docstring) in folder/agent; returns its path."""
    os.makedirs(folder, exist_ok=True)
    env = env_for(folder)
    agent, origin, mate = (os.path.join(folder, n) for n in ("agent", "origin.git", "teammate"))

    def git(cwd: str, *args: str) -> None:
        _common.run(["git", *args], cwd=cwd, env=env)

    os.makedirs(agent)
    git(agent, "init", "-q", "-b", "main")
    proc = subprocess.run(["git", "fast-import", "--quiet"], cwd=agent, env=env, input=history(commits), check=False)
    if proc.returncode != 0:
        raise _common.BenchError("git fast-import failed")
    git(agent, "reset", "-q", "--hard", "main")
    git(agent, "switch", "-q", "-c", "feat")
    git(folder, "clone", "-q", "--bare", agent, origin)
    git(agent, "remote", "add", "origin", origin)
    git(agent, "fetch", "-q", "origin")
    git(agent, "branch", "-q", "--set-upstream-to=origin/feat")
    git(agent, "remote", "set-head", "origin", "main")
    rehydrate = [sys.executable, "-m", "rehydrate"]
    renv = {**env, "PYTHONPATH": _common.SRC}
    _common.run([*rehydrate, "init", "--goal", "measure recover against git history"], cwd=agent, env=renv)
    _common.run([*rehydrate, "checkpoint", "--done", "built", "--next", "run recover"], cwd=agent, env=renv)
    for i in range(OWN):
        with open(os.path.join(agent, f"own{i}.txt"), "w", encoding="utf-8") as f:
            f.write(f"own {i}\n")
        git(agent, "add", f"own{i}.txt")
        git(agent, "commit", "-q", "-m", f"Own work {i}")
    with open(os.path.join(agent, "history.txt"), "a", encoding="utf-8") as f:
        f.write("dirty\n")
    git(folder, "clone", "-q", "-b", "main", origin, mate)
    for i in range(TEAMMATE):
        with open(os.path.join(mate, f"mate{i}.txt"), "w", encoding="utf-8") as f:
            f.write(f"mate {i}\n")
        git(mate, "add", f"mate{i}.txt")
        _common.run(["git", "commit", "-q", "-m", f"Teammate {i}"], cwd=mate, env={**env, "GIT_AUTHOR_EMAIL": "ann@x"})
    git(mate, "push", "-q", "origin", "main")
    git(agent, "fetch", "-q", "origin")
    return agent


def recover(agent: str) -> subprocess.CompletedProcess[str]:
    env = {**env_for(os.path.dirname(agent)), "PYTHONPATH": _common.SRC}
    cmd = [sys.executable, "-m", "rehydrate", "recover", "--json"]
    return subprocess.run(cmd, cwd=agent, env=env, capture_output=True, text=True, check=False)


def check(agent: str, commits: int) -> str | None:
    """None if the project at agent is as built (its history, and recover's verdict on it); else what is wrong."""
    env = env_for(os.path.dirname(agent))
    count = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=agent, env=env, capture_output=True, text=True, check=False
    )
    if count.returncode != 0 or count.stdout.strip() != str(commits + OWN):
        return f"HEAD holds {count.stdout.strip() or '?'} commits, not {commits + OWN}"
    done = recover(agent)
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return f"recover printed no JSON (exit {done.returncode}): {done.stderr.strip()}"
    if done.returncode != 1 or answer.get("degraded") != EXPECTED:
        return f"recover exited {done.returncode}, degraded {answer.get('degraded')}, not 1 and {EXPECTED}"
    return None


def cached(args: argparse.Namespace, tmp: str, commits: int) -> tuple[str, str]:
    """A project with `commits` commits before the checkpoint, reused from the cache when it checks out."""
    root = tmp if args.no_cache else args.cache_dir
    folder = os.path.join(root, f"commits-{commits}")
    agent, meta = os.path.join(folder, "agent"), os.path.join(folder, "built.json")
    if not args.no_cache and not args.rebuild and os.path.exists(meta):
        problem = check(agent, commits)
        if problem is None:
            with open(meta, encoding="utf-8") as f:
                info = json.load(f)
            return agent, f"cached in {folder} (built {info['built']} in {info['seconds']:.1f} s)"
        print(f"rebuilding {folder}: {problem}")
    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    build(folder, commits)
    seconds = time.perf_counter() - t0
    problem = check(agent, commits)
    if problem is not None:
        raise _common.BenchError(f"the project with {commits} commits does not check out: {problem}")
    with open(meta, "w", encoding="utf-8") as f:
        built = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        json.dump({"commits": commits, "rehydrate": __version__, "built": built, "seconds": seconds}, f)
    return agent, f"built in {seconds:.1f} s ({'temporary folder' if args.no_cache else folder})"


# ---------------------------------------------------------------------------------------------------- measuring


def timed(cmd: Sequence[str], cwd: str, env: dict[str, str], codes: tuple[int, ...] = (0,)) -> Callable[[], float]:
    """The wall time of one whole process (output discarded); BenchError on an exit code not in codes."""
    argv = list(cmd)

    def measure() -> float:
        t0 = time.perf_counter()
        rc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        elapsed = time.perf_counter() - t0
        if rc.returncode not in codes:
            raise _common.BenchError(f"{argv} in {cwd} exited {rc.returncode}")
        return elapsed

    return measure


def inproc(agent: str) -> Callable[[], float]:
    """rehydrate.cli.main(["recover", "--json"]) in this process, in agent, with the project's PATH and HOME."""
    from rehydrate import cli

    env = env_for(os.path.dirname(agent))

    def measure() -> float:
        saved, cwd = dict(os.environ), os.getcwd()
        os.environ.clear()
        os.environ.update(env)
        os.chdir(agent)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                t0 = time.perf_counter()
                code = cli.main(["recover", "--json"])
                elapsed = time.perf_counter() - t0
        finally:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(saved)
        if code != 1:
            raise _common.BenchError(f"recover in {agent} exited {code} in-process")
        return elapsed

    return measure


def git_calls(agent: str, tmp: str) -> list[tuple[str, list[str]]]:
    """The git commands one `recover` runs in agent, in order: (cwd, argv), found through a logging git."""
    folder = os.path.join(tmp, "gitlog-" + os.path.basename(os.path.dirname(agent)))
    bin_dir = os.path.join(folder, "bin")
    os.makedirs(bin_dir)
    shutil.copy(os.path.join(os.path.dirname(agent), "bin", "gh"), os.path.join(bin_dir, "gh"))
    wrapper = os.path.join(bin_dir, "git")
    with open(wrapper, "w", encoding="utf-8") as f:
        f.write(f"#!{sys.executable}\n" + LOGGING_GIT.format(git=shutil.which("git")))
    os.chmod(wrapper, 0o755)
    log = os.path.join(folder, "git.log")
    env = {**env_for(os.path.dirname(agent)), "PYTHONPATH": _common.SRC, "PATH": bin_dir, "BENCH_GIT_LOG": log}
    cmd = [sys.executable, "-m", "rehydrate", "recover", "--json"]
    subprocess.run(cmd, cwd=agent, env=env, capture_output=True, check=False)
    with open(log, encoding="utf-8") as f:
        return [(cwd, argv) for cwd, argv in map(json.loads, f)]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="rehydrate-bench-recover-")
    try:
        return _bench(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ratios(times: dict[str, list[float]]) -> tuple[float, float, float, float]:
    """(small ms, big ms, ratio of medians, median of the per-round ratios)."""
    small, big = statistics.median(times["small"]) * 1000, statistics.median(times["big"]) * 1000
    per_round = statistics.median(b / s for b, s in zip(times["big"], times["small"], strict=True))
    return small, big, big / small, per_round


def _bench(args: argparse.Namespace, tmp: str) -> int:
    built = {k: cached(args, tmp, n) for k, n in (("small", args.small_commits), ("big", args.commits))}
    paths = {k: p for k, (p, _) in built.items()}
    envs = {k: {**env_for(os.path.dirname(p)), "PYTHONPATH": _common.SRC} for k, p in paths.items()}
    for env in envs.values():  # the working tree's modules, their .pyc kept outside it (compiled by the warm-up)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    cmd = [sys.executable, "-m", "rehydrate", "recover", "--json"]
    procs = {k: timed(cmd, paths[k], envs[k], (1,)) for k in paths}
    t0 = time.perf_counter()
    proc_times = _common.interleave(procs, args.rounds, args.warmup)
    t_proc = time.perf_counter() - t0
    t0 = time.perf_counter()
    inproc_times = _common.interleave({k: inproc(p) for k, p in paths.items()}, args.inproc_rounds, args.warmup)
    t_inproc = time.perf_counter() - t0
    calls = {k: git_calls(p, tmp) for k, p in paths.items()}

    print(f"recover against git history: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}")
    print(_common.load())
    for k, (_, how) in built.items():
        print(f"{k}: {args.small_commits if k == 'small' else args.commits:,} commits before the checkpoint; {how}")
    print(f"both: {OWN} own commits after the checkpoint, 1 dirty file, {TEAMMATE} teammate commits on origin/main")
    print()
    rows: list[tuple[object, ...]] = []
    ratios = []
    for label, times, rounds, secs in (
        ("whole process: python -m rehydrate recover --json", proc_times, args.rounds, t_proc),
        ("in-process: cli.main(['recover', '--json'])", inproc_times, args.inproc_rounds, t_inproc),
    ):
        small, big, ratio, per_round = _ratios(times)
        ratios.append(ratio)
        rows.append((label, rounds, f"{small:.1f}", f"{big:.1f}", f"{ratio:.3f}", f"{per_round:.3f}"))
        print(f"{label}: {rounds} rounds + {args.warmup} warm-up, interleaved, {secs:.0f} s")
    print()
    print(_common.table(["measure", "rounds", "small ms", "big ms", "big/small", "median per round"], rows))
    print()
    print(_git_table(calls, args))
    print()
    line, ok = _common.bound("big/small (whole process)", ratios[0], TARGET)
    print("target:")
    print("  " + line)
    print(f"  info  big/small (in-process) = {ratios[1]:.3f}  (not diluted by interpreter start-up)")
    print()
    options = [
        f"--commits={args.commits}",
        f"--small-commits={args.small_commits}",
        f"--rounds={args.rounds}",
        f"--inproc-rounds={args.inproc_rounds}",
        f"--git-rounds={args.git_rounds}",
        f"--warmup={args.warmup}",
    ]
    options += ["--no-cache"] if args.no_cache else [f"--cache-dir={os.path.relpath(args.cache_dir, _common.REPO)}"]
    options += ["--check"] if args.check else []
    print("reproduce: " + _common.reproduce("recover_scale.py", options) + "   (add --rebuild to rebuild the projects)")
    return 1 if args.check and not ok else 0


def _git_table(calls: dict[str, list[tuple[str, list[str]]]], args: argparse.Namespace) -> str:
    """Each git command recover ran, timed alone on both projects (interleaved), the slowest growth first named."""
    if len(calls["small"]) != len(calls["big"]):
        return f"git commands: {len(calls['small'])} on small, {len(calls['big'])} on big: not compared one by one"
    rows: list[tuple[object, ...]] = []
    for i, ((cwd_s, argv_s), (cwd_b, argv_b)) in enumerate(zip(calls["small"], calls["big"], strict=True)):
        envs = {
            k: env_for(os.path.dirname(os.path.dirname(c) if c.endswith("/state") else c))
            for k, c in (("small", cwd_s), ("big", cwd_b))
        }
        variants = {
            "small": timed(["git", *argv_s], cwd_s, envs["small"], (0, 1, 128)),
            "big": timed(["git", *argv_b], cwd_b, envs["big"], (0, 1, 128)),
        }
        small, big, ratio, _ = _ratios(_common.interleave(variants, args.git_rounds, 1))
        words = argv_b[2:] if argv_b[:1] == ["-C"] else argv_b  # the folder is long and the same in every row
        shown = " ".join(a if len(a) < 24 else a[:21] + "..." for a in words)[:90]
        rows.append((f"{i + 1}. git {shown}", f"{small:.2f}", f"{big:.2f}", f"{ratio:.2f}"))
    head = f"each git command recover runs, alone ({args.git_rounds} rounds + 1 warm-up, interleaved):"
    return head + "\n" + _common.table(["command", "small ms", "big ms", "big/small"], rows)


if __name__ == "__main__":
    sys.exit(main())
