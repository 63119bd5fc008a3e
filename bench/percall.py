"""The hooks a harness calls, each as the harness runs it: `bash -c '<rehydrate> hook HARNESS'` with the event on
stdin, the script a fresh venv's (non-editable, a current pip: as pipx installs it), in a repository whose state
holds a goal, 10 decisions, 3 rejected approaches with guards (`db/*`, `*migrate*`, `*.lock`), a checkpoint and a
handoff. Interleaved rounds, the order rotating, beside `bash -c '<venv python> -c pass'` and `bash -c true`.

Each event is one documented input (tests/fixtures/hooks/HARNESS/EVENT.json, its project folder replaced by the
repository), in one of three kinds:
- per call, nothing applies: a tool call no guard matches, no task tool, a model request with nothing to add.
  Target: at most 1.3 times `python -c pass`.
- per call, something applies: a call a guard asks about, a shell command read by the shell's rules to find what it
  writes, a task tool's list. Target: at most 2.0.
- session start (SessionStart, the brief). Target: at most 2.2.
- per prompt, turn or compaction (Stop, PreCompact, PostCompact, PreCompress, a prompt): measured, no target. Those
  that record run in a second repository built the same way, so that the first one never holds a compaction.

With --against DIR (another checkout, e.g. `git worktree add ../old <commit>`), that checkout gets a venv and a
repository of its own, and each of its events runs in the same rounds: the last columns are new/old.

The targets are judged on the wall time (/pass). Beside it, the same ratio in CPU time (user + system of the whole
process, from wait4): on a shared machine, the figure that waiting for a core does not inflate.

The peers' figures are anchors from one earlier run on this kind of machine (median ms, bash -c, the event on
stdin); this bench does not run them.

    python bench/percall.py [--rounds 30] [--against DIR] [--only HARNESS] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence

import _common
import startup
from rehydrate.store.state import State

FIXTURES = os.path.join(_common.REPO, "tests", "fixtures", "hooks")
NOTHING, APPLIES, START = "per call, nothing applies", "per call, something applies", "session start"
OTHER = "per prompt, turn or compaction"  # measured, with no target of its own
TARGETS = {NOTHING: 1.3, APPLIES: 2.0, START: 2.2}
WARMUP = 2  # rounds run first and thrown away
# (harness, fixture, kind, change to the fixture's tool_input or None)
EVENTS: list[tuple[str, str, str, dict[str, object] | None]] = [
    ("claude", "PreToolUse-Edit", NOTHING, None),
    ("claude", "PreToolUse-Write", APPLIES, {"file_path": "{repo}/db/schema.sql", "content": "x"}),
    ("claude", "PreToolUse-Bash", APPLIES, None),
    ("claude", "PostToolUse-Bash", NOTHING, None),
    ("claude", "PostToolUse-TaskCreate", APPLIES, None),
    ("claude", "SessionStart-startup", START, None),
    ("codex", "PreToolUse-apply_patch", NOTHING, None),
    ("codex", "PostToolUse-update_plan", APPLIES, None),
    ("codex", "SessionStart-startup", START, None),
    ("gemini", "BeforeTool-write_file", NOTHING, None),
    ("gemini", "BeforeModel", NOTHING, None),
    ("gemini", "AfterTool-write_todos", APPLIES, None),
    ("copilot", "preToolUse-edit", APPLIES, None),  # (its fixture edits db/schema.sql: the guard asks)
    ("copilot", "postToolUse", NOTHING, None),
    ("cursor", "preToolUse-Write", APPLIES, None),  # (its fixture writes db/schema.sql: the guard warns)
    ("claude", "Stop", OTHER, None),
    ("claude", "PreCompact-auto", OTHER, None),
    ("claude", "PostCompact", OTHER, None),
    ("codex", "Stop", OTHER, None),
    ("gemini", "SessionStart-startup", START, None),
    ("gemini", "PreCompress-auto", OTHER, None),
    ("copilot", "sessionStart-new", START, None),
    ("copilot", "userPromptSubmitted", OTHER, None),
    ("copilot", "agentStop", OTHER, None),
    ("copilot", "preCompact-auto", OTHER, None),
    ("cursor", "beforeShellExecution", APPLIES, None),  # (`rm db/schema.sql`: the guard warns)
    ("cursor", "sessionStart", START, None),
    ("cursor", "stop", OTHER, None),
    ("qwen", "PreToolUse-write_file", NOTHING, None),
    ("qwen", "PreToolUse-run_shell_command", APPLIES, None),
    ("qwen", "SessionStart-startup", START, None),
    ("qwen", "PreCompact-auto", OTHER, None),
]
# The events that record (a compaction, the end of a turn's receipt) run in a repository of their own: the others'
# state stays the one described above (no compaction since the checkpoint).
WRITES = frozenset(
    ("Stop", "PreCompact-auto", "PostCompact", "PreCompress-auto", "agentStop", "preCompact-auto", "stop")
)
ANCHORS = [  # median ms, measured once side by side with rehydrate 0.1.0 on this kind of machine (not run here)
    ("bash -c true / python -c pass (the venv's) / node -e 0", "2.1 / 15.3 / 30.3"),
    ("deja-vu (Go binary) SessionStart / PreToolUse", "9.9 / 12.1"),
    ("planning-with-files (shell) UserPromptSubmit / PreToolUse", "21.5 / 9.4"),
    ("claude-mem (node, bun, a local worker) SessionStart / PreToolUse on Read", "336 / 363"),
]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=30, help="interleaved rounds (default 30)")
    p.add_argument("--against", metavar="DIR", help="another checkout, measured in the same rounds")
    p.add_argument("--only", metavar="HARNESS", help="only this harness's events")
    p.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return p.parse_args(argv)


def build(repo: str) -> None:
    _common.git_repo(repo)
    with _common.no_fsync():
        state, _ = State.init(os.path.join(repo, "state"), "measure the hooks a harness calls")
        for i in range(10):
            state.invariant(f"Decision {i}: keep the parser's table in one place", because="it is measured")
        state.reject("Edit db/schema.sql by hand", because="migrations own it", guard="db/*")
        state.reject("Run the migrations by hand", because="the deploy runs them", guard="*migrate*")
        state.reject("Edit the lockfile", because="the tool owns it", guard="*.lock")
        state.checkpoint(done="the tokenizer", next="the parser")
        state.handoff("The parser is half done; the precedence table is in src/parser.py.")
    _common.git(repo, "add", "-A")
    _common.git(repo, "commit", "-q", "-m", "state")


def event(repo: str, harness: str, name: str, change: dict[str, object] | None) -> bytes:
    with open(os.path.join(FIXTURES, harness, name + ".json"), encoding="utf-8") as f:
        data = json.loads(f.read().replace("/home/user/project", repo))
    if change is not None:
        data["tool_input"] = {k: v.replace("{repo}", repo) if isinstance(v, str) else v for k, v in change.items()}
    return json.dumps(data).encode()


def command_args(harness: str, name: str) -> str:
    """What `rehydrate hook` is given, as install writes it: the harness, and for GitHub Copilot CLI (whose input
    names no event) the event, the fixture's name up to its first `-`."""
    return f"{harness} {name.split('-', maxsplit=1)[0]}" if harness == "copilot" else harness


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-percall-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, root: str) -> int:
    sides = [("", _common.REPO)] + ([(startup.AGAINST, args.against)] if args.against else [])
    events = [e for e in EVENTS if not args.only or e[0] == args.only]
    env = _common.clean_env(HOME=root, CLAUDE_CONFIG_DIR=os.path.join(root, ".claude"))
    measures: dict[str, _common.Measure] = {}
    for suffix, source in sides:
        vpy, script = startup.make_venv(sys.executable, os.path.join(root, "venv" + suffix), source)
        repo = os.path.join(root, "repo" + suffix)
        build(repo)
        recording = os.path.join(root, "recording" + suffix)
        build(recording)
        if not suffix:
            measures["python -c pass"] = startup.timed(["bash", "-c", f"{shlex.quote(vpy)} -c pass"], repo, env)
            measures["bash -c true"] = startup.timed(["bash", "-c", "true"], repo, env)
        for harness, name, _, change in events:
            line = f"{shlex.quote(script)} hook {command_args(harness, name)}"
            where = recording if name in WRITES else repo
            stdin = event(where, harness, name, change)
            measures[f"{harness} {name}{suffix}"] = startup.timed(["bash", "-c", line], where, env, stdin)
    times = _common.interleave(measures, args.rounds, warmup=WARMUP)
    cpu = {k: startup._CPU[id(v)][WARMUP:] for k, v in measures.items()}  # user + system, each run's
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["python -c pass"]

    def per_round(a: str, b: str, of: dict[str, list[float]] = times) -> float:  # the median of same-round ratios
        return statistics.median(x / y for x, y in zip(of[a], of[b], strict=True))

    print(f"per-call hooks: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}")
    if args.against:
        print(f"{startup.AGAINST}: {os.path.abspath(args.against)} ({_common.checkout(args.against)})")
    print(_common.load())
    print(f"{args.rounds} interleaved rounds; python -c pass {base * 1000:.1f} ms, bash -c true "
          f"{med['bash -c true'] * 1000:.1f} ms (median)\n")  # fmt: skip
    header = ["event", "kind", "ms", "/pass", "cpu /pass", "target"] + (
        ["new/old", "cpu new/old"] if args.against else []
    )
    rows, ok = [], True
    for harness, name, kind, _ in events:
        key = f"{harness} {name}"
        ratio = per_round(key, "python -c pass")
        target = TARGETS.get(kind)
        ok &= target is None or ratio <= target
        on_cpu = per_round(key, "python -c pass", cpu)
        row: list[object] = [
            key,
            kind,
            f"{med[key] * 1000:.1f}",
            f"{ratio:.2f}",
            f"{on_cpu:.2f}",
            f"<= {target}" if target is not None else "-",
        ]
        if args.against:
            row.append(f"{per_round(key, key + startup.AGAINST):.2f}")
            row.append(f"{per_round(key, key + startup.AGAINST, cpu):.2f}")
        rows.append(row)
    print(_common.table(header, rows))
    print("\nanchors (not run by this bench):")
    for what, figures in ANCHORS:
        print(f"  {what}: {figures}")
    opts = [f"--rounds={args.rounds}"] + ([f"--against={args.against}"] if args.against else [])
    print(f"\n{'all targets met' if ok else 'a target is missed'}; reproduce: {_common.reproduce('percall.py', opts)}")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
