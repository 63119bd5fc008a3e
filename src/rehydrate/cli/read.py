"""The commands that read the state: resume, verify, status, log.

`resume` is on the hook path: this module imports nothing at load time but what every command has loaded already.
"""

from __future__ import annotations

import sys

from rehydrate.cli import (
    DIR_HELP,
    common_options,
    crash_log,
    emit_json,
    flagged,
    open_state,
    problems_json,
    say,
)
from rehydrate.errors import ExitCode, RehydrateError, UsageError
from rehydrate.text import clean, named, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def args_resume(p: argparse.ArgumentParser) -> None:
    from rehydrate.brief import DEFAULT_BUDGET  # loaded by the command anyway: the help's default costs nothing

    p.description = (
        "Reconcile the state, then print the brief in boot order within a character "
        "budget, ending with the ledger of checks. Logged as a resume record. Exit 1 if degraded."
    )
    p.add_argument(
        "--budget",
        type=int,
        metavar="CHARS",
        help=f"the most characters the brief may use (default {DEFAULT_BUDGET})",
    )
    common_options(p)


def cmd_resume(args: argparse.Namespace) -> int:
    from rehydrate import brief
    from rehydrate.store.locate import locate, resolve_actor
    from rehydrate.store.state import State

    try:
        state = State.open(args.dir, args.actor)
        result = brief.resume(state, args.budget)
    except UsageError:
        raise
    except Exception as e:
        if isinstance(e, RehydrateError):
            message, code = flagged(e, args, with_hint=True), int(e.exit_code)
        else:
            message, code = f"internal error ({type(e).__name__}: {e}); details in {crash_log(e)}", ExitCode.BUG
        text = brief.reduced(locate(args.dir), resolve_actor(args.actor), message, args.budget)
        if args.json:
            emit_json("resume", False, brief=text, confidence="degraded (state)", error=message)
        else:
            sys.stdout.write(text)
            print(f"rehydrate: {message}", file=sys.stderr)
        return code
    degraded = result.confidence != "recovered"
    if args.json:
        emit_json(
            "resume",
            not degraded,
            brief=result.text,
            confidence=result.confidence,
            findings=[f.as_dict() for f in result.findings],
            quotes=[q.as_json() for f in result.findings for q in f.quotes],
            omitted=result.omitted,
            seq=result.record["seq"],
            **problems_json(result),
        )
    else:
        sys.stdout.write(result.text)
    return ExitCode.DISCREPANCY if degraded else 0


def args_verify(p: argparse.ArgumentParser) -> None:
    p.description = (
        "The full recognize step: every log's hash chain, 00 and 10 against what the "
        "WAL bound, each view against the WAL, a torn tail. --repair applies only the safe repairs: "
        "redo a lagging view, cut a torn tail (keeping a .broken copy), record lines added by hand."
    )
    p.add_argument(
        "--repair",
        action="store_true",
        help="apply the safe repairs (redo lagging or missing views, cut a torn last line, restore a lost "
        "final newline, finish an interrupted rotate, remove stale temporary files, record lines added by hand) "
        "and say what was done",
    )
    common_options(p)


def cmd_verify(args: argparse.Namespace) -> int:
    state = open_state(args)
    out = state.verify(repair=args.repair)
    seq = out.record["seq"] if out.record else None
    if args.json:
        emit_json("verify", out.ok, state=state.root, records=seq, **problems_json(out))
        return 0 if out.ok else ExitCode.DISCREPANCY
    for r in out.repaired:
        say("repaired:", "note", f" {r}")
    for p in out.problems:
        where = p.file + (f":{p.line}" if p.line else "")
        fix = " (safe to repair: rehydrate verify --repair)" if p.repairable and not args.repair else ""
        say("info:" if p.info else "problem:", "note" if p.info else "bad", f" {where}: {p.message} [{p.code}]{fix}")
    if out.ok:
        said = f"{seq} record(s), hash chain intact, latches hold, views match the WAL"
        say("ok:", "good", f" {state.rel('')} verified: {said}")
        return 0
    say(f"{sum(not p.info for p in out.problems)} problem(s)", "bad", f" in {state.rel('')}")
    return ExitCode.DISCREPANCY


def args_status(p: argparse.ArgumentParser) -> None:
    p.description = "Show the goal, the last checkpoint, the next action and any problem. Exit 1 if there is a problem."
    common_options(p)


def args_ack(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Restate, after a compaction, what you will do next and which rejected approaches you will not retry. The "
        "restatement is checked against the state (its next allowed action, its newest rejected approaches), "
        "recorded in this worktree's journal, and named in the next ledger when it does not match. Exit 1 on a "
        "mismatch."
    )
    p.add_argument("--next", required=True, metavar="TEXT", help="the next action, in your words")
    p.add_argument(
        "--rejected",
        default="",
        metavar="IDS",
        help="the ids of the rejected approaches you will not retry (R-xxxxxx), separated by commas or spaces",
    )
    common_options(p)


def cmd_ack(args: argparse.Namespace) -> int:
    from rehydrate.brief import ack
    from rehydrate.store import layout

    named = [i for i in args.rejected.replace(",", " ").split() if i]
    bad = [i for i in named if layout.entry_id(f"- {i} ") is None]
    if bad:
        raise UsageError(f"not an entry id: {bad[0][:40]!r}", "name rejected approaches by their ids, e.g. R-91be04")
    if not args.next.strip():
        raise UsageError("the next action is empty", "say what you will do next with --next TEXT")
    state = open_state(args)
    data = ack.ack(state, args.next, named)
    if args.json:
        emit_json("ack", data["matches"], **{k: data[k] for k in ("covered", "missing", "unknown", "state_next")})
    elif data["matches"]:
        print("ack: your restatement matches the state (next action and the newest rejected approaches)")
    else:
        print("ack: your restatement does NOT match the state:")
        for line in ack.problems(data):
            print(f"  - {line}")
        print(f"  the state's next allowed action: {data['state_next']}")
        print("  re-read the brief (`rehydrate resume`) before acting")
    return 0 if data["matches"] else ExitCode.DISCREPANCY


def cmd_status(args: argparse.Namespace) -> int:
    from rehydrate.brief import receipt

    state = open_state(args)
    out = state.status()
    x = out.extra
    delivery = receipt.settle(state, record=False)
    if args.json:
        emit_json(
            "status",
            out.ok,
            state=state.root,
            actor=state.actor,
            goal=x["goal"],
            checkpoint=x["checkpoint"],
            next=x["next"],
            records=x["records"],
            lines=x["lines"] or [],
            delivery=delivery,
            **problems_json(out),
        )
        return 0 if out.ok else ExitCode.DISCREPANCY
    print(f"state:       {state.root} (actor {state.actor}, {x['records']} record(s))")
    print(f"goal:        {x['goal']}")
    print(f"checkpoint:  {x['checkpoint']}")
    print(f"last done:   {x['next'].get('done', '?')}")
    print(f"next action: {x['next'].get('next', '?')}")
    line = receipt.finding(delivery)
    if line is not None:
        print(f"last brief:  {line.status}: {line.message}")
    elif delivery is not None:
        when = str(delivery.get("ts"))[:16]
        print(f"last brief:  given at {when}Z; its delivery is not judged yet ({delivery.get('detail')})")
    _print_lines(x["lines"])
    for r in out.repaired:
        say("repaired:", "note", f"    {r}")
    for p in out.problems:
        where = p.file + (f":{p.line}" if p.line else "")
        pad = " " * (8 if p.info else 5)  # the values line up after "problem:" as after "next action:"
        say("info:" if p.info else "problem:", "note" if p.info else "bad", f"{pad}{where}: {p.message} [{p.code}]")
    if out.ok:
        if not out.problems:
            say("problems:", "good", "    none")
        return 0
    return ExitCode.DISCREPANCY


def _print_lines(lines: list[dict[str, Any]] | None) -> None:
    """The merged lines of work not yet chosen by a checkpoint: each line's branch, last checkpoint and next action
    (from a record of the log: cleaned for a terminal)."""
    if not lines:
        return
    from rehydrate.store.wal.graph import line_name

    print(f"merged:      {len(lines)} lines of work were merged; a checkpoint chooses the next action")
    for i, line in enumerate(lines):
        cp = line.get("checkpoint")
        name = named(clean(line_name(line, i), one_line=True), 80)  # a branch from a record: quoted unless plain
        if not isinstance(cp, dict):
            print(f"  line:      {name}: no checkpoint yet")
            continue
        when = clean(str(cp.get("ts", "")), one_line=True)[:19]
        nxt = quoted(cp.get("next", ""), 200)
        seq = named(clean(str(cp.get("seq")), one_line=True)[:12])
        print(f"  line:      {name}: checkpoint {seq}, {named(when)}; next: {nxt}")


def args_log(p: argparse.ArgumentParser) -> None:
    p.description = (
        "List every record of the state folder (state/wal/*.jsonl and state/archive/*.jsonl, every "
        "actor), oldest first: by time, then actor, then seq; one line each (seq, actor, op, time, a short "
        "summary), or with --json one JSON object per line (seq, actor, op, ts, data, h). A line that is not a "
        "valid record is named on stderr and skipped (exit 1). Read-only: it takes no lock and repairs nothing."
    )
    p.add_argument("--op", action="append", metavar="OP", help="only records of this op (repeatable)")
    p.add_argument(
        "--grep", metavar="TEXT", help="only records whose data holds TEXT (case-insensitive; archives included)"
    )
    p.add_argument("--actor", action="append", metavar="NAME", help="only this actor's records (repeatable)")
    p.add_argument(
        "--since", metavar="TIME", help="only records at or after TIME (UTC: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS])"
    )
    p.add_argument("--dir", metavar="DIR", help=DIR_HELP)
    p.add_argument("--json", action="store_true", help="one JSON object per line: seq, actor, op, ts, data, h")


def cmd_log(args: argparse.Namespace) -> int:
    from rehydrate.store.locate import locate
    from rehydrate.store.wal import history

    root = locate(args.dir)
    missing = history.unknown_op(root, args.op or [])
    if missing is not None:  # a mistyped --op would list nothing and exit 0
        op, close, names = missing
        hint = f"did you mean {close!r}? " if close else ""
        raise UsageError(f"no record has the op {op!r}", f"{hint}the ops: {', '.join(names)}", field="op")
    found = history.read(root, ops=args.op, actors=args.actor, since=args.since, grep=args.grep)
    for d in found.damaged:  # a file's name, too, came with `git pull`: one line, cleaned
        print(f"rehydrate: skipped {clean(str(d), one_line=True)}", file=sys.stderr)
    if args.json:  # ASCII-only JSON: whatever a record holds, the line is valid and carries no control byte
        import json

        out = [json.dumps(e.as_dict()) for e in found.entries]
    else:  # every field that came from a file on one line, cleaned (a forged op or actor could hold a newline)

        def one(text: str) -> str:
            return clean(text, one_line=True)[:64]

        rows = [(e.seq, one(e.actor), one(e.op), one(e.ts[:19].replace("T", " ")), e.summary()) for e in found.entries]
        actor_w = max((len(r[1]) for r in rows), default=0)
        op_w = max((len(r[2]) for r in rows), default=0)
        out = [f"{seq:>6}  {actor:<{actor_w}}  {op:<{op_w}}  {when}  {what}" for seq, actor, op, when, what in rows]
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    return ExitCode.DISCREPANCY if found.damaged else 0
