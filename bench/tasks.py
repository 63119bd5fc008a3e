"""The task list in the state: what the hook after a task-tool call costs beside the guard, and what a 30-item task
list adds to the SessionStart brief.

Three git repositories with a state, the same but for their task list: none; 30 items (10 in progress or pending with
descriptions, 20 done) recorded through the hook; the same 30 in a third that the changing variant writes to. Claude
Code 2.1.332 keeps its task list on disk (CLAUDE_CONFIG_DIR/tasks/<session>/<id>.json): the hook reads it there, as
it does in a real session. Whole processes of `rehydrate hook claude`, interleaved:

  (a) python -c pass                                  the interpreter's own start
  (b) PreToolUse Edit, the guard                       the per-call hook every edit already pays
  (c) PostToolUse TaskUpdate, the list unchanged       reads the task store, compares, writes nothing
  (d) PostToolUse TaskUpdate, one status changed       reads the task store, records the list, renders 30_tasks.md
  (e) SessionStart startup, no task list
  (f) SessionStart startup, the 30-item task list

Target: (f)/(e) <= 1.1 (the list is shown within the brief's budget, at the cost of one more small file read). The
ratios (c)/(b) and (d)/(b) say what the task-tool hook costs beside the guard; (b)/(a) and (c)/(a) beside the
interpreter. The task hook runs only on task-tool calls (install's matchers), never on other tools.

    python bench/tasks.py [--rounds 15] [--check]

Prints PASS/FAIL against the target and exits 0, unless --check is given: then a missed target exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import _common
from rehydrate.store import tasks
from rehydrate.store.state import State

SESSION = "3f6c1a2e-8b4d-4e7a-9c15-2d7e0b9a4f61"
ITEMS = 30


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15, help="interleaved rounds of whole processes (default 15)")
    p.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    return p.parse_args(argv)


def _task(i: int) -> dict[str, object]:
    status = "in_progress" if i == 1 else "pending" if i <= 10 else "completed"
    subject = f"Step {i}: make the parser handle case {i} of the grammar and its error messages"
    return {"id": str(i), "subject": subject, "description": f"see calc/parser.py, case {i}" * 3, "status": status}


def write_store(home: str, first_status: str = "in_progress") -> None:
    """Claude Code's task store for SESSION under home (CLAUDE_CONFIG_DIR): ITEMS tasks, the first one's status
    given."""
    folder = os.path.join(home, "tasks", SESSION)
    os.makedirs(folder, exist_ok=True)
    for i in range(1, ITEMS + 1):
        task = _task(i)
        if i == 1:
            task["status"] = first_status
        with open(os.path.join(folder, f"{i}.json"), "w") as f:
            json.dump(task, f)


def build(repo: str, with_tasks: bool) -> None:
    _common.git_repo(repo)
    state, _ = State.init(os.path.join(repo, "state"), "measure the task list's cost on the hook path")
    state.checkpoint(done="the tokenizer", next="the parser")
    if with_tasks:
        made = [tasks.item(t["subject"], t["status"], t["id"], t["description"]) for t in map(_task, range(1, 31))]
        state.tasks(tasks.make("Claude Code's task tools", made, SESSION))


def event(repo: str, name: str, **fields: object) -> bytes:
    base = {"session_id": SESSION, "cwd": repo, "hook_event_name": name, "transcript_path": "", **fields}
    return json.dumps(base).encode()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-tasks-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _changing(argv: list[str], repo: str, env: dict[str, str], stdin: bytes, home: str) -> _common.Measure:
    """(d): each call first flips the first task's status in the store (outside the timing), so each records."""
    flip = ["in_progress", "completed"]  # reversed before each call: the first call changes the list

    def measure() -> float:
        flip.reverse()
        write_store(home, flip[0])
        t0 = time.perf_counter()
        rc = subprocess.run(argv, cwd=repo, env=env, input=stdin, capture_output=True, check=False)
        elapsed = time.perf_counter() - t0
        if rc.returncode != 0 or rc.stdout.strip() or rc.stderr.strip():
            raise _common.BenchError(f"the task hook said {rc.stdout!r} {rc.stderr!r}")
        return elapsed

    return measure


def _lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def _bench(args: argparse.Namespace, root: str) -> int:
    print(f"task list: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}")
    print(_common.load())
    repos = {name: os.path.join(root, name) for name in ("none", "tasks30", "changing")}
    for name, repo in repos.items():
        build(repo, name != "none")
    homes = {name: os.path.join(root, f"claude-{name}") for name in repos}
    for name in ("tasks30", "changing"):
        write_store(homes[name])
    argv = [sys.executable, "-m", "rehydrate", "hook", "claude"]

    def env(name: str) -> dict[str, str]:
        return _common.clean_env(PYTHONPATH=_common.SRC, HOME=root, CLAUDE_CONFIG_DIR=homes[name])

    edit = {"tool_name": "Edit", "tool_input": {"file_path": "app.py", "old_string": "a", "new_string": "b"}}
    update = {"tool_name": "TaskUpdate", "tool_input": {"taskId": "1", "status": "in_progress"}}
    update["tool_response"] = {"success": True, "taskId": "1", "updatedFields": ["status"]}
    start = {"source": "startup"}
    for name in ("none", "tasks30"):
        out = subprocess.run(argv, cwd=repos[name], env=env(name), input=event(repos[name], "SessionStart", **start),
                             capture_output=True, check=True).stdout  # fmt: skip
        shown = "## Task list" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        if shown != (name == "tasks30"):
            raise _common.BenchError(f"{name}: the brief {'lacks' if not shown else 'shows'} a task list")
    before = len(_common.run(["git", "log", "--oneline"], cwd=repos["none"]).stdout)
    procs = {
        "(a) python -c pass": _common.timed([sys.executable, "-c", "pass"]),
        "(b) PreToolUse Edit (the guard)": _common.timed(
            argv, cwd=repos["none"], env=env("none"), stdin=event(repos["none"], "PreToolUse", **edit)
        ),
        "(c) PostToolUse TaskUpdate, unchanged": _common.timed(
            argv, cwd=repos["tasks30"], env=env("tasks30"), stdin=event(repos["tasks30"], "PostToolUse", **update)
        ),
        "(d) PostToolUse TaskUpdate, a change": _changing(
            argv,
            repos["changing"],
            env("changing"),
            event(repos["changing"], "PostToolUse", **update),
            homes["changing"],
        ),
        "(e) SessionStart, no task list": _common.timed(
            argv, cwd=repos["none"], env=env("none"), stdin=event(repos["none"], "SessionStart", **start)
        ),
        "(f) SessionStart, 30-item task list": _common.timed(
            argv, cwd=repos["tasks30"], env=env("tasks30"), stdin=event(repos["tasks30"], "SessionStart", **start)
        ),
    }
    print(f"{args.rounds} rounds + 1 warm-up, interleaved; whole processes of `rehydrate hook claude`")
    print()
    times = _common.interleave(procs, args.rounds, warmup=1)
    med = {k[:3]: _common.median(v) for k, v in times.items()}
    print(_common.table(["variant", "median ms"], [(k, f"{_common.median(v) * 1000:.1f}") for k, v in times.items()]))
    print()
    recorded, unchanged = (
        _lines(os.path.join(repos[n], "state", "wal", "agent.jsonl")) for n in ("changing", "tasks30")
    )
    print(f"records: (d)'s log holds {recorded} (one per call), (c)'s {unchanged} (the unchanged list records nothing)")
    if len(_common.run(["git", "log", "--oneline"], cwd=repos["none"]).stdout) != before:
        raise _common.BenchError("a hook made a commit")
    for a, b in (("(c)", "(b)"), ("(d)", "(b)"), ("(b)", "(a)"), ("(c)", "(a)"), ("(d)", "(a)")):
        print(f"  {a}/{b} = {med[a] / med[b]:.2f}")
    line, ok = _common.bound("(f)/(e) SessionStart with a 30-item task list / without", med["(f)"] / med["(e)"], 1.1)
    print("  " + line)
    print()
    print(
        "reproduce: " + _common.reproduce("tasks.py", [f"--rounds={args.rounds}"] + (["--check"] if args.check else []))
    )
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
