"""Start-up cost of the hook path: `rehydrate checkpoint` and `rehydrate resume` as whole processes.

A fresh virtual environment holds only rehydrate, installed from this checkout (non-editable, as pipx would), and a
temporary git repository holds a state made by `rehydrate init`. Each round runs, in an order that rotates:

  (a) <venv>/bin/python -c pass                      the interpreter's own start
  (b) <venv>/bin/rehydrate checkpoint --done x --next y
  (c) <venv>/bin/rehydrate resume
  (d) <venv>/bin/python floor.py                     the same durable writes a checkpoint makes, nothing else:
                                                     append + fsync, temp file + fsync + os.replace + fsync folder
  (e) git status, as a checkpoint runs it            informational: the one subprocess a checkpoint starts

Targets: checkpoint/pass, resume/pass and hook/pass <= 2.2. Then `python -X importtime` shows what the hook
path imports beyond a bare interpreter.

With --against DIR (another checkout, e.g. `git worktree add DIR <commit>`), that checkout gets a venv and a repository
of its own, and its checkpoint, resume and hook run in the same rounds: both sides' ratios, measured side by side.

With --full, (h) runs the same hook in a second repository where every check has work: a clone of a bare origin on
a branch with an upstream, a teammate's commit on origin/main fetched, an own commit, a dirty file and a handoff note
since the checkpoint, and a 2 MB Claude Code transcript (built from the real fixture in shared/fixtures, its last 300
records after the checkpoint) recorded by a real PreCompact hook since the checkpoint and named by the SessionStart
event, so that recency reads a real tail; its ratio to `python -c pass` is held to a bound of 3.0, and so is (f)'s.
With --against too, the other checkout's hook runs in a full repository of its own in the same rounds:
hook-full/hook-full[against] is hook(new)/hook(old).

    python bench/startup.py [--rounds 30] [--check] [--against DIR] [--full] [--key]

With --key, (i) runs checkpoint, resume and hook where the actor holds a key (each checkpoint then signs its
record with Ed25519, importing `cryptography`); their ratios to (a) are held to the same target.

The venv is made with the interpreter that runs the bench (--python to choose another): run it with Python 3.13 to
measure 3.13.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import _common

TARGET = 2.2
BOUND_FULL = 3.0  # the bound on hook/pass and hook-full/pass, printed with --full
TRANSCRIPT_MB = 2.0  # the transcript of (h)'s full repository
FULL_HOLDS = (
    "a clone of a bare origin on branch feat tracking origin/feat, a state and a checkpoint; since it a teammate's "
    "commit on origin/main (fetched), an own commit, a dirty file and a handoff note"
)
IDENT = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
MATE = ["-c", "user.name=mate", "-c", "user.email=mate@example.invalid"]
AGAINST = "[against]"  # the suffix of the other checkout's variants

FLOOR = '''\
"""The durable writes of one checkpoint, and nothing else."""
import os
import sys

folder, wal_size, view_size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(os.path.join(folder, "wal.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
try:
    os.write(fd, b"x" * (wal_size - 1) + b"\\n")
    os.fsync(fd)
finally:
    os.close(fd)
tmp = os.path.join(folder, ".next.md.%d.tmp" % os.getpid())
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
try:
    os.write(fd, b"y" * (view_size - 1) + b"\\n")
    os.fsync(fd)
finally:
    os.close(fd)
os.replace(tmp, os.path.join(folder, "next.md"))
fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
try:
    os.fsync(fd)
finally:
    os.close(fd)
'''

# the command gitinfo.snapshot runs, with its environment
GIT_STATUS = ["git", "status", "--porcelain=v2", "--branch", "-z", "--", ":/", ":(exclude)."]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/startup.py",
        description="Whole-process start-up of `rehydrate checkpoint` and `rehydrate resume` against `python -c "
        "pass` and a floor of the same durable writes, interleaved; ratios of medians. Installs rehydrate from this "
        "checkout into a fresh venv (needs PyPI for the build backend).",
    )
    p.add_argument("--rounds", type=int, default=30, help="measured rounds (default 30)")
    p.add_argument("--warmup", type=int, default=3, help="rounds run first and thrown away (default 3)")
    p.add_argument("--python", default=sys.executable, help="interpreter that creates the venv (default: this one)")
    p.add_argument("--importtime-runs", type=int, default=5, help="runs of -X importtime, median taken (default 5)")
    p.add_argument("--top", type=int, default=10, help="modules shown per import table (default 10)")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed (default: always exit 0)")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (venv, repo) and print its path")
    p.add_argument(
        "--against",
        metavar="DIR",
        help="another checkout of rehydrate (e.g. a git worktree of an older commit) measured in the same rounds",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="also (h): the SessionStart hook in a clone of a bare origin, on a branch with an upstream, with a "
        "teammate's commit on origin/main fetched, an own commit and a dirty file since the checkpoint",
    )
    p.add_argument(
        "--key",
        action="store_true",
        help="also (i): checkpoint, resume and hook where the actor holds a key: signed records",
    )
    p.add_argument(
        "--fixtures",
        default=os.path.join(os.path.dirname(_common.REPO), "shared", "fixtures", "transcripts"),
        help="with --full: the folder of the real transcripts (default: shared/fixtures beside the checkout)",
    )
    p.add_argument(
        "--transcript-mb", type=float, default=TRANSCRIPT_MB, help="with --full: the transcript's size, MB (default 2)"
    )
    args = p.parse_args(argv)
    if args.rounds < 1 or args.warmup < 0 or args.importtime_runs < 1:
        p.error("--rounds and --importtime-runs must be at least 1, --warmup at least 0")
    return args


def make_venv(python: str, where: str, source: str = _common.REPO) -> tuple[str, str]:
    """A fresh venv with rehydrate installed from a checkout (this one by default); returns (its python, its
    rehydrate script)."""
    env = _common.clean_env(PIP_DISABLE_PIP_VERSION_CHECK="1")
    _common.run([python, "-m", "venv", where], env=env)
    vpy = os.path.join(where, "bin", "python")
    # A current pip, as pipx (its shared pip) and CI use: the pip bundled with an interpreter may be years older, and
    # older pips write a console script that imports `re` before rehydrate runs (row (g) shows what that costs).
    _common.run([vpy, "-m", "pip", "install", "--quiet", "--no-input", "--upgrade", "pip"], env=env)
    _common.run([vpy, "-m", "pip", "install", "--quiet", "--no-input", source], env=env)
    return vpy, os.path.join(where, "bin", "rehydrate")


def script_imports_re(script: str) -> bool:
    """Whether the console script pip wrote imports `re` (older pips' template does)."""
    with open(script, encoding="utf-8") as f:
        return any(line.strip() == "import re" for line in f)


_CPU: dict[int, list[float]] = {}  # id of a measure -> the CPU time (user + system) of each of its runs


def pip_version(python: str) -> str:
    out = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, check=False).stdout
    return " ".join(out.split()[:2]) or "pip: unknown version"


def timed(
    cmd: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> _common.Measure:
    """_common.timed's measurement (the wall time of one whole process), and its CPU time (user + system, from
    os.wait4) kept in _CPU: on a shared machine, the figure that waiting for a core does not inflate."""
    argv = list(cmd)
    cpu: list[float] = []

    def measure() -> float:
        t0 = time.perf_counter()
        pipe = subprocess.PIPE if stdin is not None else None
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=pipe, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if proc.stdin is not None:
            try:
                proc.stdin.write(stdin or b"")
                proc.stdin.close()
            except BrokenPipeError:
                pass
        _pid, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            _common.run(argv, cwd, env)  # once more, to show its output in the error
            raise _common.BenchError(f"{shlex.join(argv)} exited {proc.returncode}")
        cpu.append(usage.ru_utime + usage.ru_stime)
        return elapsed

    _CPU[id(measure)] = cpu
    return measure


def hook_path(rehydrate: str, repo: str, env: dict[str, str], suffix: str = "") -> dict[str, _common.Measure]:
    """The three hook-path processes of one install, in a repository with a state (made here)."""
    _common.git_repo(repo)
    _common.run([rehydrate, "init", "--goal", "benchmark the hook path"], cwd=repo, env=env)
    _common.run([rehydrate, "checkpoint", "--done", "x", "--next", "y"], cwd=repo, env=env)
    return {
        "checkpoint" + suffix: timed([rehydrate, "checkpoint", "--done", "x", "--next", "y"], cwd=repo, env=env),
        "resume" + suffix: timed([rehydrate, "resume"], cwd=repo, env=env),
        "hook" + suffix: timed([rehydrate, "hook", "claude"], cwd=repo, env=env, stdin=session_start(repo)),
    }


def keyed_path(rehydrate: str, repo: str, env: dict[str, str]) -> dict[str, _common.Measure]:
    """(i): the three hook-path processes where the actor holds a key (`rehydrate key init`, the key file under the
    bench's folder): every checkpoint signs its record; a resume or hook verifies only a last record this clone has
    not verified (here none: the checkpoints before it signed theirs)."""
    keyed_env = dict(env, REHYDRATE_KEY_FILE=os.path.join(os.path.dirname(repo), "signing.key"))
    found = hook_path(rehydrate, repo, keyed_env, "-key")
    _common.run([rehydrate, "key", "init"], cwd=repo, env=keyed_env)
    _common.run([rehydrate, "checkpoint", "--done", "x", "--next", "y"], cwd=repo, env=keyed_env)
    return found


def full_repo(
    rehydrate: str, root: str, env: dict[str, str], fixtures: str | None = None, megabytes: float = TRANSCRIPT_MB
) -> tuple[str, str | None]:
    """(h)'s repository: the agent's clone of a bare origin on branch feat (pushed, tracking origin/feat) with a
    state and a checkpoint; since then a teammate's commit on origin/main (fetched), an own commit, a dirty file, a
    handoff note, and (when the real fixture is in `fixtures`) a Claude Code transcript of `megabytes` MB recorded by
    a real PreCompact hook (its capture in the WAL), the last 300 records of it after the checkpoint (built by
    recover_scale.py). So the hook's git probe asks git status and git log (HEAD moved), direction its log and
    user.email, and recency reads the transcript's tail back to the checkpoint. (the repository, the transcript or
    None)"""
    os.makedirs(root, exist_ok=True)
    seed, origin, repo, mate = (os.path.join(root, n) for n in ("seed", "origin.git", "repo-full", "mate"))
    _common.git_repo(seed)
    _common.run(["git", "clone", "-q", "--bare", seed, origin])
    for clone in (repo, mate):
        _common.run(["git", "clone", "-q", origin, clone])

    def commit(where: str, name: str, who: list[str]) -> None:
        with open(os.path.join(where, name), "w", encoding="utf-8") as f:
            f.write(f"# {name}\n")
        _common.run(["git", *who, "add", name], cwd=where)
        _common.run(["git", *who, "commit", "-qm", f"Add {name}"], cwd=where)

    _common.run(["git", "switch", "-q", "-c", "feat"], cwd=repo)
    commit(repo, "parser.py", IDENT)
    _common.run(["git", "push", "-q", "-u", "origin", "feat"], cwd=repo)
    _common.run([rehydrate, "init", "--goal", "benchmark the hook path"], cwd=repo, env=env)
    _common.run([rehydrate, "checkpoint", "--done", "x", "--next", "wait for #12"], cwd=repo, env=env)
    commit(mate, "tokenizer.py", MATE)
    _common.run(["git", "push", "-q", "origin", "main"], cwd=mate)
    _common.run(["git", "fetch", "-q"], cwd=repo)
    commit(repo, "binding.py", IDENT)
    with open(os.path.join(repo, "notes.md"), "w", encoding="utf-8") as f:
        f.write("dirty\n")
    handoff = subprocess.run(
        [rehydrate, "handoff"],
        cwd=repo,
        env=env,
        input=b"# Handoff\n\nWaiting for #12.\n",
        capture_output=True,
        check=False,
    )
    if handoff.returncode != 0:
        raise _common.BenchError(f"rehydrate handoff exited {handoff.returncode}")
    transcript = _transcript(rehydrate, root, repo, env, fixtures, megabytes) if fixtures else None
    return repo, transcript


def _transcript(
    rehydrate: str, root: str, repo: str, env: dict[str, str], fixtures: str, megabytes: float
) -> str | None:
    """The transcript of (h), recorded by a PreCompact hook after the checkpoint; None without the fixture."""
    import recover_scale

    path = os.path.join(fixtures, recover_scale.FIXTURE_NAME)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        records = [line for line in f.read().split(b"\n") if line.strip()]
    with open(os.path.join(repo, "state", "wal", "agent.jsonl"), "rb") as f:
        ckpt = [json.loads(x) for x in f.read().splitlines() if b'"op":"checkpoint"' in x][-1]
    ckpt_ms = recover_scale._ms(ckpt["ts"])
    transcript = os.path.join(root, "transcripts", "bench-session.jsonl")  # outside the work tree: not a dirty file
    os.makedirs(os.path.dirname(transcript))
    block = recover_scale.after_block(records, ckpt_ms)
    recover_scale.write_transcript(transcript, records, int(megabytes * (1 << 20)), 0, block, ckpt_ms)
    event = {"session_id": "bench", "transcript_path": transcript, "cwd": repo, "hook_event_name": "PreCompact"}
    event.update(trigger="auto", custom_instructions="")
    pre = subprocess.run(
        [rehydrate, "hook", "claude"], cwd=repo, env=env, input=json.dumps(event).encode(), check=False
    )
    if pre.returncode != 0:
        raise _common.BenchError(f"the PreCompact hook exited {pre.returncode}")
    return transcript


def parse_importtime(stderr: str) -> dict[str, tuple[int, int]]:
    """module -> (self us, cumulative us) from the output of python -X importtime."""
    out: dict[str, tuple[int, int]] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue  # the header line
        out[parts[2].strip()] = (int(parts[0]), int(parts[1]))
    return out


def importtime(cmd: Sequence[str], cwd: str, env: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    """module -> (median self us, median cumulative us) over several runs of cmd under -X importtime."""
    samples: dict[str, list[tuple[int, int]]] = {}
    for _ in range(runs):
        proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise _common.BenchError(f"{shlex.join(cmd)} exited {proc.returncode}\n{proc.stderr[-2000:]}")
        for mod, times in parse_importtime(proc.stderr).items():
            samples.setdefault(mod, []).append(times)
    return {mod: (statistics.median(s for s, _ in v), statistics.median(c for _, c in v)) for mod, v in samples.items()}


def import_table(title: str, times: dict[str, tuple[float, float]], bare: set[str], top: int) -> str:
    extra = {m: t for m, t in times.items() if m not in bare}
    total = sum(s for s, _ in extra.values())
    rows = sorted(extra.items(), key=lambda kv: -kv[1][1])[:top]
    lines = [f"{title}: {len(extra)} modules beyond a bare interpreter, {total / 1000:.1f} ms (sum of self times)"]
    lines.append(
        _common.table(
            ["module", "cumulative ms", "self ms"], [(m, f"{c / 1000:.2f}", f"{s / 1000:.2f}") for m, (s, c) in rows]
        )
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-startup-")
    try:
        return _bench(args, root)
    finally:
        if args.keep:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def session_start(repo: str, transcript: str | None = None) -> bytes:
    """The JSON Claude Code sends a SessionStart hook right after a compaction (its transcript: a file that does not
    exist, unless given)."""
    event = {
        "session_id": "bench",
        "transcript_path": transcript or os.path.join(repo, "transcript.jsonl"),
        "cwd": repo,
        "hook_event_name": "SessionStart",
        "source": "compact",
    }
    return json.dumps(event).encode()


def _full(
    args: argparse.Namespace, root: str, env: dict[str, str], rehydrate: str, other: str
) -> tuple[dict[str, _common.Measure], str]:
    """(h): the SessionStart hook in the full repository (full_repo), for this checkout and, with --against, for the
    other in one of its own; and what the full repository holds, as the report says it."""
    full: dict[str, _common.Measure] = {}
    fixtures = args.fixtures if os.path.isdir(args.fixtures) else None
    transcript = None
    for suffix, script in (("", rehydrate), (AGAINST, other)):
        if not script:
            continue
        where = os.path.join(root, "full" + ("-against" if suffix else ""))
        repo_full, transcript = full_repo(script, where, env, fixtures, args.transcript_mb)
        stdin = session_start(repo_full, transcript)
        full["hook-full" + suffix] = timed([script, "hook", "claude"], cwd=repo_full, env=env, stdin=stdin)
    held = FULL_HOLDS + (
        f"; a {args.transcript_mb:g} MB Claude Code transcript (from the real fixture; its last 300 records after "
        "the checkpoint) recorded by a PreCompact hook since the checkpoint and named by the SessionStart event"
        if transcript
        else f"; no transcript (the fixture is not in {args.fixtures}: --fixtures)"
    )
    return full, held


def _pairs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The ratios the report prints, (numerator, denominator), by the variants this run has."""
    pairs = [("checkpoint", "pass"), ("resume", "pass"), ("hook", "pass"), ("checkpoint", "floor"), ("resume", "floor")]
    pairs.append(("re", "pass"))  # what an older pip's wrapper script would add to each ratio
    if args.full:
        pairs += [("hook-full", "pass"), ("hook-full", "hook")]
        pairs += [("hook-full", "hook-full" + AGAINST), ("hook-full" + AGAINST, "pass")] if args.against else []
    if args.full and not args.against:
        print(
            "hook-full/hook: (h) over this checkout's own hook (f) in the plain repository; give --against a checkout"
        )
        print("from before the ledger came to the hook for hook(new)/hook(old) measured in the same rounds")
        print()
    if args.key:  # a key held, against the bounds and against the same process without one
        pairs += [(k + "-key", "pass") for k in ("checkpoint", "resume", "hook")]
        pairs += [(k + "-key", k) for k in ("checkpoint", "resume", "hook")]
    if args.against:  # the other checkout's ratios, and this one's time over the other's, in the same rounds
        pairs += [(k + AGAINST, "pass") for k in ("checkpoint", "resume", "hook")]
        pairs += [(k, k + AGAINST) for k in ("checkpoint", "resume", "hook")]
    return pairs


def _bench(args: argparse.Namespace, root: str) -> int:  # noqa: PLR0912, PLR0915 - the run, top to bottom, as the report prints it
    t0 = time.perf_counter()
    vpy, rehydrate = make_venv(args.python, os.path.join(root, "venv"))
    t_venv = time.perf_counter() - t0
    env = _common.clean_env()
    repo = os.path.join(root, "repo")
    ours = hook_path(rehydrate, repo, env)
    theirs: dict[str, _common.Measure] = {}
    other = ""  # the other checkout's rehydrate script
    if args.against:
        against = os.path.abspath(args.against)
        _vpy, other = make_venv(args.python, os.path.join(root, "venv-against"), against)
        theirs = hook_path(other, os.path.join(root, "repo-against"), env, AGAINST)
    full, held = _full(args, root, env, rehydrate, other) if args.full else ({}, "")
    keyed = keyed_path(rehydrate, os.path.join(root, "repo-key"), env) if args.key else {}
    version = _common.run([rehydrate, "--version"], env=env).stdout.strip()
    pyver = _common.run([vpy, "-c", "import sys; print(sys.version.split()[0])"], env=env).stdout.strip()

    # the floor writes records of the sizes a checkpoint writes
    state = os.path.join(repo, "state")
    with open(os.path.join(state, "wal", "agent.jsonl"), "rb") as f:
        wal_size = len(f.read().splitlines()[-1]) + 1
    view_size = os.path.getsize(os.path.join(state, "99_next.md"))
    floor_dir = os.path.join(root, "floor")
    os.mkdir(floor_dir)
    floor_py = os.path.join(root, "floor.py")
    with open(floor_py, "w", encoding="utf-8") as script:
        script.write(FLOOR)

    variants = {
        "pass": timed([vpy, "-c", "pass"], cwd=repo, env=env),
        "re": timed([vpy, "-c", "import re"], cwd=repo, env=env),
        **ours,
        **theirs,
        **full,
        **keyed,
        "floor": timed([vpy, floor_py, floor_dir, str(wal_size), str(view_size)], cwd=repo, env=env),
        "git": timed(GIT_STATUS, cwd=state, env=_common.clean_env(GIT_OPTIONAL_LOCKS="0", LC_ALL="C")),
    }
    t1 = time.perf_counter()
    times = _common.interleave(variants, args.rounds, args.warmup)
    cpu = {k: _CPU[id(v)][args.warmup :] for k, v in variants.items()}
    t_measure = time.perf_counter() - t1
    med = {k: _common.median(v) * 1000 for k, v in times.items()}

    labels = {
        "pass": "(a) python -c pass",
        "checkpoint": "(b) rehydrate checkpoint --done x --next y",
        "resume": "(c) rehydrate resume",
        "hook": "(f) rehydrate hook claude, answering SessionStart (compact)",
        "floor": f"(d) floor: python + append/fsync ({wal_size} B) + replace/fsync x2",
        "git": "(e) git status, as checkpoint runs it (info)",
        "re": "(g) python -c 'import re': what an older pip's console script adds (info)",
    }
    if args.full:
        labels["hook-full"] = "(h) the same hook in the full repository (below)"
        if args.against:
            labels["hook-full" + AGAINST] = f"{labels['hook-full']} {AGAINST}"
    if args.against:
        labels.update({k + AGAINST: f"{labels[k]} {AGAINST}" for k in ("checkpoint", "resume", "hook")})
    if args.key:
        labels.update(
            {k + "-key": f"(i) {labels[k][4:]}, the actor holding a key" for k in ("checkpoint", "resume", "hook")}
        )
    print(f"rehydrate start-up: {version} ({_common.checkout()}), Python {pyver}")
    print(_common.load())
    print(f"fresh venv, non-editable install of {_common.REPO} ({t_venv:.0f} s to build)")
    wrapper = "imports re" if script_imports_re(rehydrate) else "does not import re"
    print(f"the console script pip wrote {wrapper} ({pip_version(vpy)})")
    if args.against:
        print(f"{AGAINST}: a venv of its own with {os.path.abspath(args.against)} ({_common.checkout(args.against)})")
    if args.full:
        print(f"(h)'s full repository{' (and one of its own for ' + AGAINST + ')' if args.against else ''}: {held}")
    print(
        f"{args.rounds} rounds + {args.warmup} warm-up, interleaved (order rotating each round), "
        f"{t_measure:.0f} s; whole processes, wall time"
    )
    print()
    rows = []
    for key, label in labels.items():
        q = statistics.quantiles(times[key], n=4) if len(times[key]) > 1 else [times[key][0]] * 3
        rows.append((label, f"{med[key]:.1f}", f"{q[0] * 1000:.1f}", f"{q[2] * 1000:.1f}"))
    print(_common.table(["variant", "median ms", "p25 ms", "p75 ms"], rows))
    print()

    def per_round(a: str, b: str) -> float:
        return _common.median([x / y for x, y in zip(times[a], times[b], strict=True)])

    pairs = _pairs(args)
    print(
        _common.table(
            ["ratio", "of medians", "median per round"],
            [(f"{a}/{b}", f"{med[a] / med[b]:.2f}", f"{per_round(a, b):.2f}") for a, b in pairs],
        )
    )
    print()
    print("CPU time (user + system of each process, os.wait4): the same ratios, less inflated by a busy machine")
    print(
        _common.table(
            ["ratio", "of medians (CPU)"],
            [(f"{a}/{b}", f"{_common.median(cpu[a]) / _common.median(cpu[b]):.2f}") for a, b in pairs],
        )
    )
    print()
    print("where a checkpoint's time goes (differences of medians, approximate):")
    print(f"  interpreter start             {med['pass']:6.1f} ms")
    print(f"  durable writes (floor - pass) {med['floor'] - med['pass']:6.1f} ms")
    print(f"  git status subprocess         {med['git']:6.1f} ms")
    rest = med["checkpoint"] - med["floor"] - med["git"]
    print(f"  the rest: imports and logic   {rest:6.1f} ms")
    print()
    print("targets:")
    misses = 0
    for a in ("checkpoint", "resume", "hook"):
        line, ok = _common.bound(f"{a}/pass", med[a] / med["pass"], TARGET)
        print("  " + line)
        misses += not ok
    if args.key:  # the same targets with a key held
        for a in ("checkpoint-key", "resume-key", "hook-key"):
            line, ok = _common.bound(f"{a}/pass (keyed)", med[a] / med["pass"], TARGET)
            print("  " + line)
            misses += not ok
    if args.full:  # the hook with every check, on both repositories
        for a in ("hook", "hook-full"):
            line, ok = _common.bound(f"{a}/pass (with every check)", med[a] / med["pass"], BOUND_FULL)
            print("  " + line)
            misses += not ok
    print()

    bare = importtime([vpy, "-X", "importtime", "-c", "pass"], repo, env, args.importtime_runs)
    for title, cmd in (
        ('python -X importtime -c "import rehydrate.cli"', [vpy, "-X", "importtime", "-c", "import rehydrate.cli"]),
        (
            "python -X importtime <venv>/bin/rehydrate resume (everything it imports)",
            [vpy, "-X", "importtime", rehydrate, "resume"],
        ),
        (
            "python -X importtime <venv>/bin/rehydrate checkpoint (everything it imports)",
            [vpy, "-X", "importtime", rehydrate, "checkpoint", "--done", "x", "--next", "y"],
        ),
    ):
        print(import_table(title, importtime(cmd, repo, env, args.importtime_runs), set(bare), args.top))
        print(f"(median of {args.importtime_runs} runs; cumulative includes the modules a module imports)")
        print()
    if args.key:  # what signing imports
        where = os.path.join(root, "repo-key")
        keyed_env = dict(env, REHYDRATE_KEY_FILE=os.path.join(root, "signing.key"))
        cmd = [vpy, "-X", "importtime", rehydrate, "checkpoint", "--done", "x", "--next", "y"]
        title = "python -X importtime <venv>/bin/rehydrate checkpoint, the actor holding a key"
        print(import_table(title, importtime(cmd, where, keyed_env, args.importtime_runs), set(bare), args.top))
        print(f"(median of {args.importtime_runs} runs; cumulative includes the modules a module imports)")
        print()

    options = (
        [
            f"--rounds={args.rounds}",
            f"--warmup={args.warmup}",
            f"--importtime-runs={args.importtime_runs}",
            f"--top={args.top}",
            f"--python={args.python}",
        ]
        + (["--check"] if args.check else [])
        + ([f"--against={args.against}"] if args.against else [])
        + (["--full", f"--transcript-mb={args.transcript_mb:g}"] if args.full else [])
        + (["--key"] if args.key else [])
    )
    print("reproduce: " + _common.reproduce("startup.py", options))
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    sys.exit(main())
