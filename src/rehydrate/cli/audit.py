"""The commands that measure what a compaction costs and whether recovery works: `rehydrate audit` (every compaction
in agent transcripts and what followed it, as text, JSON or an HTML page) and `rehydrate canary` (plant a canary
rule, print the questions, grade an answer, run an agent on them, retire it: rehydrate/canary.py)."""

from __future__ import annotations

import hashlib
import json
import os
import sys

from rehydrate import audit, canary
from rehydrate.audit.text import shown
from rehydrate.canary import MAX_ANSWER, Grade
from rehydrate.cli import common_options, emit_json, extra_hint, open_state, report
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.harness.compaction import capture as precompact
from rehydrate.text import clean
from rehydrate.transcripts.jsonl import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import TextIO

PROGRESS_AFTER = 20  # files: fewer are read too fast for a progress line to help
POSITIONALS = {"answer": "FILE"}


def args_audit(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Read Claude Code session files and Codex rollouts (PATH: a file, or every .jsonl under a "
        "folder; --all: the user's ~/.claude/projects and ~/.codex/sessions, or CLAUDE_CONFIG_DIR and "
        "CODEX_HOME). For each compaction: the context's size before and after it, files edited again that had "
        "been edited before it, identical tool calls repeated, tool errors on each side, and the model turns "
        "before the first edit; and what stood just before it (the task list, edited files, failed commands, the "
        "last requests, ids and numbers) with whether the harness's summary and rehydrate's capture kept each. "
        "Sessions are ranked by the symptoms. Record types and tools the readers do not know are counted by "
        "harness version (format drift)."
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="transcript files or folders")
    p.add_argument("--all", action="store_true", help="every transcript of the user's Claude Code and Codex")
    p.add_argument("--since", metavar="DATE", help="only files modified on or after DATE (YYYY-MM-DD)")
    p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="the symptoms only: no loss report and no format drift (each compaction's prefix is not read again)",
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write a self-contained page with a chart per session (needs the html extra)",
    )


def cmd_audit(args: argparse.Namespace) -> int:
    if not args.paths and not args.all:
        raise UsageError("nothing to read", "give transcript files or folders, or --all")
    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing and len(missing) == len(args.paths) and not args.all:  # nothing to read: a mistyped path, not a report
        raise UsageError(f"no such file or folder: {', '.join(missing)}", "give transcript files or folders, or --all")
    if args.html:
        try:
            from rehydrate.audit import html_report  # the html extra (Plotly): absent, the error says how to add it
        except ImportError as e:
            raise UsageError(
                f"the HTML report needs Plotly, which is not installed ({e})", extra_hint("html", "plotly>=6,<8")
            ) from None
    files, errors = audit.discover(args.paths, args.all, args.since)
    stderr = getattr(sys.stderr, "_stream", sys.stderr)  # the progress line redraws itself with a CR
    show = stderr.isatty() and len(files) > PROGRESS_AFTER
    try:
        capture = None
        if not args.quick:  # the loss report compares with the PreCompact hook's own capture
            capture = precompact.capture
        data = audit.report(files, progress=_progress(stderr) if show else None, capture=capture)
    finally:
        if show:
            stderr.write("\r" + " " * 72 + "\r")
    data["errors"] = errors + data["errors"]
    if args.html:
        try:
            with open(args.html, "w", encoding="utf-8") as f:
                f.write(html_report.render(data))
        except OSError as e:
            raise RehydrateError(f"cannot write {args.html}: {e.strerror}") from None
        if not args.json:
            print(f"report written to {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps({**data, "command": "audit", "ok": not data["errors"]}, indent=2))
    else:
        sys.stdout.write(audit.render(data))
    return 0


def _progress(stream: TextIO) -> Callable[[int, int, str], None]:
    """A progress line on a terminal: which file of how many is being read."""

    def show(n: int, total: int, path: str) -> None:
        stream.write(f"\r[{n}/{total}] {shown(os.path.basename(path))[:60]:<60}")
        stream.flush()

    return show


def args_canary(p: argparse.ArgumentParser) -> None:
    p.description = (
        "plant: append a canary rule with a random token (a rejected approach, default "
        '"Edit db/schema.sql without a migration file") and a canary record. questions: print the two questions '
        "(the current next action; the approaches that are off limits). check [FILE|-]: grade an answer (stdin by "
        "default): it passes only when it quotes the exact next action and every active canary rule with its token, "
        "else exit 1 naming what is missing. run --agent 'COMMAND': start the agent as a fresh process with the "
        "questions (as its last argument, or on stdin with --stdin), grade its stdout (its first MiB) when it exits "
        "(not waiting for what it leaves running) or is stopped at --timeout, and record the result in the "
        "WAL. retire [TOKEN]: retire the canary (every active one without TOKEN) by appending, never rewriting."
    )
    p.add_argument("action", choices=["plant", "questions", "check", "run", "retire"], help="what to do")
    p.add_argument(
        "answer",
        nargs="?",
        metavar="FILE",
        help="check: the answer to grade (- or absent: stdin); retire: the canary's token",
    )
    p.add_argument("--rule", metavar="TEXT", help="plant: the rule's text (its token is added)")
    p.add_argument("--agent", metavar="COMMAND", help="run: the agent command, e.g. 'claude -p' or 'codex exec'")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS", help="run: the agent's deadline (300)")
    p.add_argument("--stdin", action="store_true", help="run: give the questions on stdin, not as the last argument")
    common_options(p)


def cmd_canary(args: argparse.Namespace) -> int:
    if args.action == "questions":
        if args.json:
            emit_json("canary", True, action="questions", questions=canary.QUESTIONS)
        else:
            sys.stdout.write(canary.QUESTIONS)
        return 0
    state = open_state(args)
    if args.action == "plant":
        planted, out = canary.plant(state, args.rule)
        if args.json:
            emit_json("canary", True, action="plant", token=planted.token, rule=planted.rule)
            return 0
        report(out, args)
        print(f'planted {planted.token}: rejected approach "{planted.rule}" in {state.rel("10_invariants.md")}')
        print("ask: `rehydrate canary questions`; grade: `rehydrate canary check ANSWER` or `canary run --agent CMD`")
        return 0
    if args.action == "retire":
        tokens, out = canary.retire(state, args.answer)
        if args.json:
            emit_json("canary", True, action="retire", tokens=tokens)
            return 0
        report(out, args)
        print(f"retired {', '.join(tokens)} (a decision line and a record each; the rule's line stays, as every line)")
        return 0
    want = canary.expected(state)
    if not want.canaries:
        raise UsageError("no canary is planted", "`rehydrate canary plant` plants one")
    if args.action == "check":
        answer = _read_answer(args.answer)
        return _verdict(args, canary.grade(answer, want), answer, None)
    if not args.agent:
        raise UsageError("run needs the agent command", "--agent 'claude -p'", field="agent")
    if args.timeout <= 0:
        raise UsageError("the deadline must be positive", field="timeout")
    ran = canary.run_agent(args.agent, os.path.dirname(os.path.abspath(state.root)), args.timeout, args.stdin)
    graded = canary.grade(ran.answer, want)
    if ran.timed_out:
        graded.passed = False
        graded.missing.insert(0, f"an answer: the agent did not finish within {args.timeout:g} s")
    data = {
        "event": "run",
        "agent": clean(args.agent, one_line=True)[:1000],
        "passed": graded.passed,
        "missing": graded.missing,
        "exit": ran.code,
        "duration": round(ran.duration, 3),
        "timed_out": ran.timed_out,
        "tokens": [c.token for c in want.canaries],
        "answer_sha256": hashlib.sha256(ran.answer.encode()).hexdigest(),
        "answer_bytes": ran.size,
    }
    out = state.record("canary", data)
    report(out, args)
    return _verdict(args, graded, ran.answer, out.record["seq"] if out.record else None)


def _read_answer(name: str | None) -> str:
    if name is None or name == "-":
        return sys.stdin.buffer.read(MAX_ANSWER).decode("utf-8", "replace")
    try:
        with open_regular(name) as f:  # a FIFO or a device would block the read for ever
            return f.read(MAX_ANSWER).decode("utf-8", "replace")
    except OSError as e:
        raise UsageError(f"the answer {name} cannot be read ({e.strerror})", field="answer") from None


def _verdict(args: argparse.Namespace, graded: object, answer: str, seq: int | None) -> int:
    assert isinstance(graded, Grade)
    if args.json:
        emit_json("canary", graded.passed, action=args.action, passed=graded.passed, missing=graded.missing, record=seq)
        return 0 if graded.passed else 1
    where = f" (recorded: record {seq})" if seq is not None else ""
    if graded.passed:
        print(f"canary: passed: the answer quotes the next action and the canary rule{where}")
        return 0
    print(f"canary: FAILED{where}: the answer does not quote:", file=sys.stderr)
    for item in graded.missing:
        print(f"  - {item}", file=sys.stderr)
    shown = clean(answer, one_line=True)
    print(f"  the answer began: {shown[:300] or '(nothing)'}", file=sys.stderr)
    return 1
