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
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import _common
from rehydrate import __version__

TARGET = 1.5  # recover on 100,000 commits / on 100, and on a 200 MB transcript / on a 1 MB one
HISTORY_LIMIT = 1.3  # this bench's own line for "a hook must not grow with history"
PARTS = ("commits", "transcripts", "history")
FIXTURES = os.path.join(os.path.dirname(_common.REPO), "shared", "fixtures", "transcripts")  # beside the checkout
FIXTURE_NAME = "claude-code-2.1.39-manual-compact.jsonl"
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
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed (default: always exit 0)")
    p.add_argument(
        "--part",
        action="append",
        choices=PARTS,
        help="the part to run, repeatable: commits (git history), transcripts (a big transcript against a small "
        "one), history (SessionStart against the records since the checkpoint); default: all three",
    )
    p.add_argument("--megabytes", type=int, default=200, help="transcripts: the big transcript, MB (default 200)")
    p.add_argument("--small-megabytes", type=float, default=1, help="transcripts: the small one, MB (default 1)")
    p.add_argument(
        "--after-megabytes",
        type=int,
        default=30,
        help="transcripts: the cut case's MB after the checkpoint (default 30)",
    )
    p.add_argument("--transcript-rounds", type=int, default=20, help="transcripts: measured rounds (default 20)")
    p.add_argument("--fixtures", default=FIXTURES, help="the folder of the real transcripts (shared/fixtures)")
    p.add_argument("--resumes", type=int, default=1000, help="history: resume records after the checkpoint, big")
    p.add_argument("--small-resumes", type=int, default=10, help="history: the same, small (default 10)")
    p.add_argument("--history-rounds", type=int, default=30, help="history: measured rounds (default 30)")
    args = p.parse_args(argv)
    args.part = [x for x in PARTS if x in (args.part or PARTS)]
    if args.small_megabytes <= 0 or args.megabytes < args.small_megabytes or args.after_megabytes >= args.megabytes:
        p.error("--megabytes must be at least --small-megabytes (> 0) and more than --after-megabytes")
    if (
        args.small_resumes < 1
        or args.resumes < args.small_resumes
        or min(args.transcript_rounds, args.history_rounds) < 1
    ):
        p.error("--small-resumes must be at least 1, --resumes at least that, the rounds at least 1")
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
    parts = {"commits": _bench, "transcripts": _transcripts, "history": _history}
    try:
        misses = 0
        for n, part in enumerate(args.part):
            if n:
                print("\n" + "=" * 100 + "\n")
            misses += parts[part](args, tmp)
        return 1 if args.check and misses else 0
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
    options += ["--part=commits"]
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


# ---------------------------------------------------------------------------------------------------- transcripts
# Part 2 (plan 4.2): `recover --json --transcript PATH` on a big Claude Code transcript against a small one, both
# ending with the same records after the checkpoint; the PreCompact capture hook on both; and a big transcript with
# many MB after the checkpoint, where the hook's and the capture's read caps show.

STAMP = re.compile(rb'"timestamp":"[^"]*"')
DAY_MS = 86_400_000
AFTER = 300  # records after the checkpoint, the same in every transcript


def _fixture(args: argparse.Namespace) -> list[bytes]:
    path = os.path.join(args.fixtures, FIXTURE_NAME)
    if not os.path.exists(path):
        raise SystemExit(f"the fixture is missing: {path} (shared/fixtures beside the repository, or --fixtures)")
    with open(path, "rb") as f:
        return [line for line in f.read().split(b"\n") if line.strip()]


def _iso(ms: int) -> bytes:
    return b"%s.%03dZ" % (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)).encode(), ms % 1000)


def _ms(ts: str) -> int:
    """Milliseconds since the epoch of a WAL stamp (2026-12-01T02:52:39.175Z)."""
    import calendar

    whole, _, frac = ts.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) * 1000 + int((frac or "0")[:3].ljust(3, "0"))


class _Stamper:
    """Rewrites every "timestamp" of the lines it is given: from start_ms on, step_ms apart, in file order."""

    def __init__(self, start_ms: int, step_ms: int) -> None:
        self.next, self.step = start_ms, step_ms

    def __call__(self, m: re.Match[bytes]) -> bytes:
        self.next += self.step
        return b'"timestamp":"' + _iso(self.next) + b'"'


def _unique(data: bytes, tag: bytes) -> bytes:
    """The fixture's ids made unique by a tag: message, request and tool ids, uuids and their parents."""
    for key in (b'"msg_', b'"req_', b'"toolu_', b'"uuid":"', b'Uuid":"'):
        data = data.replace(key, key + tag)
    return data


def _filler(f: io.BufferedWriter, records: list[bytes], size: int, stamper: _Stamper, tag: str) -> None:
    """size bytes (cut at a line's end) of copies of the whole fixture, each with its own ids, restamped."""
    body = b"\n".join(records) + b"\n"
    left, n = size, 0
    while left > 0:
        copy = STAMP.sub(stamper, _unique(body, b"%s%05d" % (tag.encode(), n)))
        if len(copy) > left:
            copy = copy[: copy.rfind(b"\n", 0, left) + 1]
            if not copy:
                break
        f.write(copy)
        left -= len(copy)
        n += 1


def after_block(records: list[bytes], ckpt_ms: int) -> bytes:
    """The AFTER records every transcript ends with, stamped an hour after the checkpoint: the user's prompt after the
    fixture's compaction (its line 1491) and the 297 records after it (Bash calls, three Edits), then a Bash call
    whose result is an error (lines 656 and 661)."""
    chosen = [*records[1490 : 1490 + AFTER - 2], records[655], records[660]]
    return STAMP.sub(_Stamper(ckpt_ms + 3_600_000, 100), _unique(b"\n".join(chosen) + b"\n", b"after"))


def write_transcript(path: str, records: list[bytes], size: int, after: int, block: bytes, ckpt_ms: int) -> None:
    """A transcript of about size bytes: copies of the fixture stamped in the 30 days before the checkpoint, then
    `after` bytes of copies stamped after it, then block. Written through a temporary file, streamed."""
    tmp = path + ".part"
    with open(tmp, "wb", buffering=1 << 20) as f:
        _filler(f, records, size - after - len(block), _Stamper(ckpt_ms - 30 * DAY_MS, 10), "b")
        if after:
            _filler(f, records, after, _Stamper(ckpt_ms + 1000, 10), "a")
        f.write(block)
    os.replace(tmp, path)


def transcript_project(folder: str) -> tuple[str, str]:
    """A git repository with a state and a checkpoint (folder/project): (its path, the checkpoint's ts)."""
    env = {**env_for(folder), "PYTHONPATH": _common.SRC}
    project = os.path.join(folder, "project")
    _common.git_repo(project)
    rehydrate = [sys.executable, "-m", "rehydrate"]
    _common.run([*rehydrate, "init", "--goal", "measure recover against transcripts"], cwd=project, env=env)
    _common.run([*rehydrate, "checkpoint", "--done", "the tokenizer", "--next", "binding powers"], cwd=project, env=env)
    with open(os.path.join(project, "state", "wal", "agent.jsonl"), "rb") as f:
        ckpt = [json.loads(x) for x in f.read().splitlines() if b'"op":"checkpoint"' in x][-1]
    return project, str(ckpt["ts"])


def _sizes(args: argparse.Namespace) -> dict[str, tuple[int, int]]:
    """name -> (bytes, bytes after the checkpoint before the common block)."""
    mb = 1 << 20
    return {
        "small": (int(args.small_megabytes * mb), 0),
        "big": (args.megabytes * mb, 0),
        "cut": (args.megabytes * mb, args.after_megabytes * mb),
    }


def transcripts_built(args: argparse.Namespace, tmp: str) -> tuple[str, dict[str, str], str]:
    """(the project template, name -> transcript path, how it was got), cached when --no-cache is not given."""
    folder = os.path.join(tmp if args.no_cache else args.cache_dir, "transcripts")
    meta = os.path.join(folder, "built.json")
    sizes = _sizes(args)
    paths = {k: os.path.join(folder, f"{k}-{n}-{a}.jsonl") for k, (n, a) in sizes.items()}
    want = {"rehydrate": __version__, "sizes": {k: list(v) for k, v in sizes.items()}, "after": AFTER}
    if not args.no_cache and not args.rebuild and os.path.exists(meta):
        with open(meta, encoding="utf-8") as f:
            info = json.load(f)
        if all(info.get(k) == v for k, v in want.items()) and all(os.path.exists(p) for p in paths.values()):
            return os.path.join(folder, "project"), paths, f"cached in {folder} (built in {info['seconds']:.1f} s)"
        print(f"rebuilding {folder}: built for other sizes or another version")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    t0 = time.perf_counter()
    project, ckpt_ts = transcript_project(folder)
    records = _fixture(args)
    block = after_block(records, _ms(ckpt_ts))
    for k, (size, after) in sizes.items():
        write_transcript(paths[k], records, size, after, block, _ms(ckpt_ts))
    seconds = time.perf_counter() - t0
    with open(meta, "w", encoding="utf-8") as f:
        json.dump({**want, "checkpoint": ckpt_ts, "seconds": seconds}, f)
    return project, paths, f"built in {seconds:.1f} s ({'temporary folder' if args.no_cache else folder})"


def _event(name: str, project: str, transcript: str, **more: str) -> bytes:
    """The JSON Claude Code sends the hook `name` (PreCompact auto, SessionStart compact) naming transcript."""
    event = {"session_id": "bench-session", "transcript_path": transcript, "cwd": project, "hook_event_name": name}
    return json.dumps({**event, **more}).encode()


PRECOMPACT = {"trigger": "auto", "custom_instructions": ""}


def _project_copy(template: str, tmp: str, name: str) -> tuple[str, dict[str, str]]:
    """A fresh copy of the project template in tmp/name, and the environment its commands run with."""
    folder = os.path.join(tmp, name)
    project = os.path.join(folder, "project")
    shutil.copytree(template, project, symlinks=True)
    env = {**env_for(folder), "PYTHONPATH": _common.SRC, "PYTHONPYCACHEPREFIX": os.path.join(tmp, "pycache")}
    return project, env


def _recency(project: str, env: dict[str, str], transcript: str) -> tuple[int, str]:
    """(recover's exit code, its recency finding(s) as status: finding) for transcript."""
    cmd = [sys.executable, "-m", "rehydrate", "recover", "--json", "--transcript", transcript]
    done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, check=False)
    try:
        checks = json.loads(done.stdout)["checks"]
    except (ValueError, KeyError):
        raise _common.BenchError(f"recover printed no ledger (exit {done.returncode}): {done.stderr[-2000:]}") from None
    found = [f"{c['status']}: {c['finding']}" for c in checks if c["name"] == "recency"]
    return done.returncode, " | ".join(found)


def _capture(project: str) -> dict[str, Any]:
    """The capture of the last compaction record in project's WAL."""
    with open(os.path.join(project, "state", "wal", "agent.jsonl"), "rb") as f:
        last = [json.loads(x) for x in f.read().splitlines() if b'"op":"compaction"' in x][-1]
    capture = last["data"].get("capture")
    if not isinstance(capture, dict):
        raise _common.BenchError(f"the compaction record holds no capture: {last['data']}")
    return capture


def _shown(capture: dict[str, Any]) -> str:
    read = capture.get("read") or {}
    span = read.get("to", 0) - read.get("from", 0)
    edited, failed = capture.get("edited") or {}, capture.get("failed") or []
    return (
        f"read {span / (1 << 20):.2f} MiB (bytes {read.get('from', 0):,} to {read.get('to', 0):,}, "
        f"cut {read.get('cut')}, {read.get('lines')} lines), {capture.get('tool_calls')} tool calls, "
        f"{capture.get('user_turns')} user turns, "
        f"{len(edited.get('files', [])) + edited.get('more', 0)} files edited, {len(failed)} failed commands, "
        f"error {capture.get('error')}"
    )


def _transcripts(args: argparse.Namespace, tmp: str) -> int:
    template, paths, how = transcripts_built(args, tmp)
    sizes = {k: os.path.getsize(p) for k, p in paths.items()}
    runs = {
        f"{what}-{k}": _project_copy(template, tmp, f"t-{what}-{k}") for what in ("r", "h") for k in ("small", "big")
    }
    findings = {k: _recency(*runs[f"r-{k}"], paths[k]) for k in ("small", "big")}
    for k, (code, finding) in findings.items():
        if code != 1 or not finding.startswith("degraded: ") or "files edited" not in finding:
            raise _common.BenchError(f"recover on the {k} transcript: exit {code}, recency {finding!r}")
    rehydrate = [sys.executable, "-m", "rehydrate"]
    variants: dict[str, _common.Measure] = {}
    for k in ("small", "big"):
        project, env = runs[f"r-{k}"]
        variants[f"recover-{k}"] = timed(
            [*rehydrate, "recover", "--json", "--transcript", paths[k]], project, env, (1,)
        )
        project, env = runs[f"h-{k}"]
        event = _event("PreCompact", project, paths[k], **PRECOMPACT)
        variants[f"precompact-{k}"] = _common.timed([*rehydrate, "hook", "claude"], project, env, event)
    t0 = time.perf_counter()
    times = _common.interleave(variants, args.transcript_rounds, args.warmup)
    secs = time.perf_counter() - t0
    captures = {k: _capture(runs[f"h-{k}"][0]) for k in ("small", "big")}

    print(f"recover against the transcript's size: rehydrate {__version__} ({_common.checkout()}) from {_common.SRC}")
    print(_common.load())
    print(f"transcripts from {FIXTURE_NAME} (ids made unique, restamped), {how}:")
    print(f"  small: {sizes['small']:,} bytes; big: {sizes['big']:,} bytes; both end with the same {AFTER} records")
    print("  after the checkpoint (a user prompt, Bash calls, 3 Edits, a failing Bash); all else is stamped before it")
    for k, (_, finding) in findings.items():
        print(f"  recency in recover, {k}: {_ends(finding)}")
    print()
    print(f"{args.transcript_rounds} rounds + {args.warmup} warm-up, interleaved, {secs:.0f} s; whole processes")
    rows: list[tuple[object, ...]] = []
    for what, label in (
        ("recover", "python -m rehydrate recover --json --transcript T"),
        ("precompact", "hook claude PreCompact (capture)"),
    ):
        small, big, ratio, per_round = _ratios({k: times[f"{what}-{k}"] for k in ("small", "big")})
        rows.append((label, f"{small:.1f}", f"{big:.1f}", f"{ratio:.3f}", f"{per_round:.3f}"))
    print(_common.table(["measure", "small ms", "big ms", "big/small", "median per round"], rows))
    for k, capture in captures.items():
        print(f"  the PreCompact capture, {k}: {_shown(capture)}")
    print()
    ok = _cut_case(args, template, tmp, paths["cut"], sizes["cut"])
    ratio = _ratios({k: times[f"recover-{k}"] for k in ("small", "big")})[2]
    line, passed = _common.bound("recover big/small transcript (whole process)", ratio, TARGET)
    print("target:")
    print("  " + line)
    hook = _ratios({k: times[f"precompact-{k}"] for k in ("small", "big")})[2]
    # The capture's own bound (its task list's look-back is bounded by recent.TODOS_BACK): a line of the report
    # that does not move the exit code, which stays recover's
    print("  " + _common.bound("PreCompact capture big/small", hook, TARGET)[0])
    print(f"  {'PASS' if ok else 'FAIL'}  the cut case (each part above)")
    print()
    options = [
        "--part=transcripts",
        f"--megabytes={args.megabytes}",
        f"--small-megabytes={args.small_megabytes:g}",
        f"--after-megabytes={args.after_megabytes}",
        f"--transcript-rounds={args.transcript_rounds}",
        f"--warmup={args.warmup}",
    ]
    options += ["--no-cache"] if args.no_cache else [f"--cache-dir={os.path.relpath(args.cache_dir, _common.REPO)}"]
    options += [] if args.fixtures == FIXTURES else ["--fixtures=FOLDER"]
    options += ["--check"] if args.check else []
    print(
        "reproduce: " + _common.reproduce("recover_scale.py", options) + "   (add --rebuild to rebuild the transcripts)"
    )
    return int(not passed)


def _ends(text: str, head: int = 160, tail: int = 360) -> str:
    """A long finding as its start and its end (where a cut read says how much it left unread)."""
    return text if len(text) <= head + tail + 5 else f"{text[:head]} [...] {text[-tail:]}"


def _brief_lines(answer: str, word: str) -> list[str]:
    """The lines of the brief in a hook's JSON answer that hold word."""
    found = json.loads(answer) if answer.strip() else {}
    text = found.get("hookSpecificOutput", {}).get("additionalContext", "") if isinstance(found, dict) else ""
    return [line.strip() for line in text.splitlines() if word in line]


def _cut_case(args: argparse.Namespace, template: str, tmp: str, path: str, size: int) -> bool:
    """A transcript with --after-megabytes after the checkpoint: PreCompact's capture reads its 16 MiB and stops,
    SessionStart's recency its 4 MiB (hook scope), recover's reaches the checkpoint (64 MiB). Each once, timed."""
    project, env = _project_copy(template, tmp, "t-cut")
    hook = [sys.executable, "-m", "rehydrate", "hook", "claude"]
    t0 = time.perf_counter()
    pre = subprocess.run(
        hook,
        cwd=project,
        env=env,
        input=_event("PreCompact", project, path, **PRECOMPACT),
        capture_output=True,
        check=False,
    )
    t_pre = time.perf_counter() - t0
    capture = _capture(project)
    t0 = time.perf_counter()
    start = subprocess.run(
        hook,
        cwd=project,
        env=env,
        input=_event("SessionStart", project, path, source="compact").decode(),
        capture_output=True,
        text=True,
        check=False,
    )
    t_start = time.perf_counter() - t0
    t0 = time.perf_counter()
    code, finding = _recency(project, env, path)
    t_rec = time.perf_counter() - t0
    lines = _brief_lines(start.stdout, "- recency:")
    print(
        f"the cut case: {size:,} bytes, {args.after_megabytes} MB of it after the checkpoint "
        f"(then the same {AFTER} records)"
    )
    print(f"  PreCompact ({t_pre * 1000:.0f} ms, exit {pre.returncode}): the capture {_shown(capture)}")
    print(f"  SessionStart compact ({t_start * 1000:.0f} ms, exit {start.returncode}): the brief's ledger says")
    for line in lines or ["(no recency line in the brief)"]:
        print(f"    {_ends(line)}")
    for line in [x for x in _brief_lines(start.stdout, "confidence") if x.startswith("confidence:")][:1]:
        print(f"    {line[:300]}")
    print(f"  recover --json --transcript ({t_rec * 1000:.0f} ms, exit {code}): recency {_ends(finding)}")
    read = capture.get("read") or {}
    checks = (
        (bool(read.get("cut")) and read.get("to", 0) - read.get("from", 0) <= 16 << 20, "the capture stops at 16 MiB"),
        (
            any("without reaching the checkpoint" in x for x in lines),
            "the brief's recency line says it stopped at 4 MiB",
        ),
        (code == 1 and "without reaching" not in finding, "recover reads back to the checkpoint"),
    )
    for ok, what in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {what}")
    return all(ok for ok, _ in checks)


# ---------------------------------------------------------------------------------------------------- history
# Part 3: the SessionStart hook must not grow with the sessions since the checkpoint. Each SessionStart writes a
# `resume` record to the worktree's journal (store/local/journal.py), which the hook reads back (events._already_given,
# store/wal/since.find) besides the WAL: 10 against 1,000 resume records.


def history_project(folder: str, resumes: int) -> tuple[str, dict[str, str]]:
    """A git repository with a state and a checkpoint, one real SessionStart hook (its `resume` record, in the
    journal), then that record's sealed, chained copies (_common.pad_wal: the store's wal.seal and wal.encode) up to
    `resumes` records after the checkpoint. (the project, its environment)"""
    env = {**env_for(folder), "PYTHONPATH": _common.SRC}
    project = os.path.join(folder, "project")
    _common.git_repo(project)
    rehydrate = [sys.executable, "-m", "rehydrate"]
    _common.run([*rehydrate, "init", "--goal", "measure the hook against its history"], cwd=project, env=env)
    _common.run([*rehydrate, "checkpoint", "--done", "the tokenizer", "--next", "binding powers"], cwd=project, env=env)
    event = _event("SessionStart", project, os.path.join(folder, "home", "no-transcript.jsonl"), source="compact")
    proc = subprocess.run(
        [*rehydrate, "hook", "claude"], cwd=project, env=env, input=event, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise _common.BenchError(f"the SessionStart hook exited {proc.returncode}: {proc.stderr[-2000:]!r}")
    _common.pad_wal(os.path.join(project, ".git", "rehydrate", "state", "journal", "agent.jsonl"), resumes)
    return project, {**env, "PYTHONPYCACHEPREFIX": os.path.join(os.path.dirname(folder), "pycache")}


def since_inproc(project: str) -> Callable[[], float]:
    """store.wal.since.find on project's state, in this process (read only): the back-scan alone."""
    from rehydrate.store.state import State
    from rehydrate.store.wal import since

    state = State.open(os.path.join(project, "state"))

    def measure() -> float:
        with state.reading() as snap:
            t0 = time.perf_counter()
            found = since.find(state, snap)
            elapsed = time.perf_counter() - t0
        if not found.complete:
            raise _common.BenchError(f"since.find did not reach the checkpoint in {project}: {found.problem}")
        return elapsed

    return measure


def _history(args: argparse.Namespace, tmp: str) -> int:
    counts = {"small": args.small_resumes, "big": args.resumes}
    built = {k: history_project(os.path.join(tmp, f"history-{k}"), n) for k, n in counts.items()}
    hook = [sys.executable, "-m", "rehydrate", "hook", "claude"]
    variants = {
        k: _common.timed(hook, p, env, _event("SessionStart", p, os.path.join(tmp, "none.jsonl"), source="compact"))
        for k, (p, env) in built.items()
    }
    t0 = time.perf_counter()
    times = _common.interleave(variants, args.history_rounds, args.warmup)
    secs = time.perf_counter() - t0
    inproc_times = _common.interleave({k: since_inproc(p) for k, (p, _) in built.items()}, args.history_rounds, 1)
    records = {}
    for k, (p, _) in built.items():
        with open(os.path.join(p, "state", "wal", "agent.jsonl"), "rb") as f:
            records[k] = f.read().count(b"\n")

    print(
        "the SessionStart hook against the records since the checkpoint: "
        f"rehydrate {__version__} ({_common.checkout()})"
    )
    print(_common.load())
    for k, n in counts.items():
        print(
            f"{k}: {n:,} resume records after the checkpoint when built "
            f"({records[k]:,} records in the WAL after the run)"
        )
    print("each measured run appends one more resume record to its state, as a real SessionStart does")
    print(f"{args.history_rounds} rounds + {args.warmup} warm-up, interleaved, {secs:.0f} s")
    rows: list[tuple[object, ...]] = []
    for label, t in (
        ("whole process: hook claude, SessionStart compact", times),
        ("in-process: store.wal.since.find (the back-scan alone)", inproc_times),
    ):
        small, big, ratio, per_round = _ratios(t)
        rows.append((label, f"{small:.2f}", f"{big:.2f}", f"{ratio:.3f}", f"{per_round:.3f}"))
    print(_common.table(["measure", "small ms", "big ms", "big/small", "median per round"], rows))
    print()
    line, _ok = _common.bound("hook big/small (whole process)", _ratios(times)[2], HISTORY_LIMIT)
    print('target (this bench\'s line for "a hook must not grow with history"):')
    print("  " + line)
    print()
    options = [
        "--part=history",
        f"--resumes={args.resumes}",
        f"--small-resumes={args.small_resumes}",
        f"--history-rounds={args.history_rounds}",
        f"--warmup={args.warmup}",
    ]
    print("reproduce: " + _common.reproduce("recover_scale.py", options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
