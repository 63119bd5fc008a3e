"""`rehydrate canary`: plant a canary rule, print the questions, grade an answer, run an agent on them, retire it
(rehydrate/canary.py)."""

from __future__ import annotations

import os
import sys

from rehydrate.cli import common_options, emit_json, open_state, report
from rehydrate.errors import UsageError
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

POSITIONALS = {"answer": "FILE"}


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
    from rehydrate import canary

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
    import hashlib

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
    from rehydrate.canary import MAX_ANSWER

    if name is None or name == "-":
        return sys.stdin.buffer.read(MAX_ANSWER).decode("utf-8", "replace")
    from rehydrate.transcripts.jsonl import open_regular  # a FIFO or a device would block the read for ever

    try:
        with open_regular(name) as f:
            return f.read(MAX_ANSWER).decode("utf-8", "replace")
    except OSError as e:
        raise UsageError(f"the answer {name} cannot be read ({e.strerror})", field="answer") from None


def _verdict(args: argparse.Namespace, graded: object, answer: str, seq: int | None) -> int:
    from rehydrate.canary import Grade

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
