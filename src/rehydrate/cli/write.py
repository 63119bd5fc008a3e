"""The commands that write the state: init, invariant, reject, withdraw, checkpoint, handoff, rotate.

`checkpoint` is on the hook path: this module imports at load time only what a checkpoint loads anyway; each other
command imports what it alone needs (argparse too: a checkpoint's command line is read without it) in its handler.
"""

from __future__ import annotations

import os
import sys

from rehydrate.cli import common_options, emit_json, open_state, problems_json, report
from rehydrate.errors import UsageError
from rehydrate.store import actors, layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def args_init(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Create state/ (00_goal.md, 10_invariants.md, 99_next.md, wal/ACTOR.jsonl). "
        "The goal is write-once: an existing one is never replaced. The boot rule goes, as a marked "
        "block, into AGENTS.md, CLAUDE.md and GEMINI.md where they exist, and into those --rules names."
    )
    p.add_argument("--goal", required=True, help="the task, in a sentence or a few")
    p.add_argument("--done-when", metavar="TEXT", help="what counts as done")
    p.add_argument(
        "--rules",
        metavar="LIST",
        default="",
        help="instruction files to create if absent: comma-separated from agents,claude,gemini",
    )
    common_options(p)


def cmd_init(args: argparse.Namespace) -> int:
    from rehydrate.harness.setup import NEXT_STEPS, rules
    from rehydrate.store.locate import init_location
    from rehydrate.store.state import State

    create = rules.parse_names(args.rules)
    # the instruction files are checked (symlinks out of the project refused) before the state exists, so that a
    # refusal leaves no half-done init behind; the folder is found as State.init finds it
    planned = init_location(args.dir)
    rules.plan(os.path.dirname(planned), os.path.basename(planned), create)
    state, out = State.init(args.dir, args.goal, args.done_when, args.actor)
    project = os.path.dirname(state.root)
    installed = rules.install(project, os.path.relpath(state.root, project), create)
    if args.json:
        emit_json(
            "init",
            True,
            state=state.root,
            actor=state.actor,
            record=out.record,
            rules=dict(installed),
            next=list(NEXT_STEPS[1:]),
            **problems_json(out),
        )
        return 0
    report(out, args)
    where = state.rel("")
    if project != os.path.abspath(os.getcwd()):  # say where: not the current folder (init from a subfolder)
        from rehydrate.store.locate import named

        at_root = named(args.dir) is None and os.path.lexists(os.path.join(project, ".git"))
        note = " at the repository's root, where the harness hooks look" if at_root else ""
        where = f"{state.root}{os.sep}{note}"
    print(
        f"initialized {where} (actor {state.actor}): 00_goal.md, 10_invariants.md, 99_next.md, wal/{state.actor}.jsonl"
    )
    for name, what in installed:
        print(f"boot rule: {name} {what}")
    print("next:")
    for line in NEXT_STEPS[1:]:
        print(f"  {line}")
    return 0


def args_invariant(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Append a decision to 10_invariants.md through the WAL, with an id hashed from the actor, "
        "the time and the text (the same decision recorded twice gets two ids)."
    )
    p.add_argument("text", help="the decision")
    p.add_argument("--because", required=True, help="why: so that a later session does not undo it")
    _supersedes(p)
    common_options(p)


def _supersedes(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--supersedes",
        metavar="ID",
        action="append",  # given twice: refused (_entry), never the last one silently
        help="an earlier entry (D-xxxxxx or R-xxxxxx) this one replaces: it is out of force from now on (the log "
        "keeps it; the brief and the guard follow the new entry). --because says why",
    )


def cmd_invariant(args: argparse.Namespace) -> int:
    return _entry(args, "invariant")


def args_reject(p: argparse.ArgumentParser) -> None:
    p.description = "Append a rejected approach to 10_invariants.md through the WAL."
    p.add_argument("approach", help="the approach that was tried or considered and ruled out")
    p.add_argument("--because", required=True, help="why it was ruled out")
    p.add_argument("--guard", metavar="PATTERN", help="a path glob or command pattern a harness hook can watch for")
    p.add_argument(
        "--contains",
        metavar="TEXT",
        help="a text the hook watches for in what is written (file content, replacement text, patch lines) or "
        "run (the command); with --guard, both must match",
    )
    _supersedes(p)
    common_options(p)


def cmd_reject(args: argparse.Namespace) -> int:
    return _entry(args, "reject")


def args_withdraw(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Take a decision or rejected approach recorded by mistake out of force: a line of its own is appended to "
        "10_invariants.md (nothing is removed: the file stays append-only and bound); the brief no longer shows "
        "the entry and a rejected approach's guard no longer watches. To replace an entry with a better one, record "
        "the new one with --supersedes instead."
    )
    p.add_argument("id", help="the entry's id (D-xxxxxx or R-xxxxxx)")
    p.add_argument("--because", required=True, help="why it was a mistake")
    common_options(p)


def cmd_withdraw(args: argparse.Namespace) -> int:
    return _entry(args, "withdraw")


def _entry(args: argparse.Namespace, kind: str) -> int:
    sup = getattr(args, "supersedes", None) or [None]
    if len(sup) > 1:
        raise UsageError(
            "--supersedes is given more than once: an entry supersedes one earlier entry",
            f"take the others out with `rehydrate withdraw ID --because WHY` (or a {kind} of their own each)",
            field="supersedes",
        )
    state = open_state(args)
    if kind == "invariant":
        out = state.invariant(args.text, args.because, sup[0])
    elif kind == "reject":
        out = state.reject(args.approach, args.because, args.guard, args.contains, sup[0])
    else:
        out = state.withdraw(args.id, args.because)
    rec = out.record
    data = rec["data"]
    lifted = data["text"] if kind == "withdraw" else data.get("supersedes")
    was = _superseded_by(state, lifted) if kind == "withdraw" else None
    if args.json:
        extra = {"lifted": lifted} if lifted else {}
        if was:
            extra["stays_out"] = was
        emit_json(kind, True, id=data["id"], line=data["line"], seq=rec["seq"], **extra, **problems_json(out))
        return 0
    report(out, args)
    print(f"recorded {data['id']} in {state.rel('10_invariants.md')} (record {rec['seq']})")
    if lifted:
        print(f"{lifted} is out of force from now on: the brief and the guard no longer follow it")
    if was:
        print(f"{was}, which {lifted} superseded, stays out: record it again if it still holds")
    return 0


def _superseded_by(state: Any, ident: str) -> str | None:
    """The entry an entry itself superseded, if it did (read from its line)."""
    key = f"- {ident} "
    text = state.view_text(layout.INVARIANTS) or ""
    return next((layout.entry_lifts(line) for line in text.split("\n") if line.startswith(key)), None)


def args_checkpoint(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Append a checkpoint record (binding git HEAD, branch and dirty files), then "
        "replace 99_next.md, the program counter."
    )
    p.add_argument("--done", required=True, metavar="TEXT", help="what was just completed")
    p.add_argument("--next", required=True, metavar="TEXT", help="the next allowed action")
    p.add_argument("--goal", metavar="TEXT", help="the current goal (default: the previous checkpoint's)")
    import argparse

    class Claim(argparse.Action):  # --claim TEXT [--receipt ID], in pairs, in the order given
        def __call__(self, parser: Any, ns: Any, value: Any, option: Any = None) -> None:
            claims = getattr(ns, "claims", None) or []
            if self.dest == "claims":
                claims.append([value, None])
            elif not claims or claims[-1][1] is not None:
                parser.error("--receipt ID belongs to the --claim TEXT just before it")
            else:
                claims[-1][1] = value
            ns.claims = claims

    p.add_argument(
        "--claim",
        dest="claims",
        action=Claim,
        metavar="TEXT",
        help="something this checkpoint claims (`tests pass`); repeat for several. The brief and the ledger show it "
        "verified, stale, failed or unverified",
    )
    p.add_argument(
        "--receipt",
        dest="receipt",
        action=Claim,
        metavar="ID",
        help="the receipt (`rehydrate run` printed it) that backs the --claim just before it",
    )
    common_options(p)


def cmd_checkpoint(args: argparse.Namespace) -> int:
    state = open_state(args)
    claims = [(text, rid) for text, rid in getattr(args, "claims", None) or []]
    out = state.checkpoint(args.done, args.next, args.goal, claims)
    rec = out.record
    git = rec.get("git") or {}
    claimed = rec["data"].get("claims") or []
    if args.json:
        extra = {"claims": claimed} if claimed else {}
        emit_json("checkpoint", True, seq=rec["seq"], ts=rec["ts"], git=git, **extra, **problems_json(out))
        return 0
    report(out, args)
    if git.get("repo") is False:
        where = f"no git ({git.get('reason', 'not a repository')})"
    else:
        head = str(git["head"])[:7] if git.get("head") else "(no commit yet)"
        dirty = git.get("dirty_count", len(git.get("dirty", [])))
        where = f"HEAD {head} on {git.get('branch') or 'a detached HEAD'}, {dirty} dirty file(s)"
    print(f"checkpoint {rec['seq']} written: {where}; next: {state.rel(actors.pc_names(state.actor, rec)[0])}")
    for claim in claimed:
        receipt = claim.get("receipt")
        how = f"receipt {receipt['id']}, exit {receipt.get('exit')}" if receipt else "no receipt: unverified"
        print(f"claim: {claim['text']} ({how})")
    return 0


def args_handoff(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Replace 20_handoff.md through the WAL; the text comes from stdin or --file. --clear leaves no note: an old "
        "one degrades every brief after the next checkpoint, until a new handoff replaces it or it is cleared."
    )
    p.add_argument("--file", metavar="F", help="read the note from F instead of stdin")
    p.add_argument("--clear", action="store_true", help="no note at all (the next session reads none)")
    common_options(p)


def cmd_handoff(args: argparse.Namespace) -> int:
    if args.clear and args.file:
        raise UsageError("--clear leaves no note: it takes no --file", field="clear")
    if args.clear:
        text = ""
    elif args.file:
        from rehydrate.transcripts.jsonl import open_regular  # a FIFO or a device would block the read for ever

        try:
            with open_regular(args.file) as f:
                text = f.read(8 << 20).decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        except OSError as e:
            raise UsageError(f"cannot read {args.file}: {e.strerror}") from None
    else:
        if sys.stdin is None or sys.stdin.closed:
            raise UsageError("no handoff text: give it on stdin or with --file F")
        if sys.stdin.isatty():
            print("type the handoff note; end with Ctrl-D", file=sys.stderr)
        text = sys.stdin.buffer.read(8 << 20).decode("utf-8", "replace")
    state = open_state(args)
    out = state.handoff(text, clear=args.clear)
    if args.json:
        emit_json("handoff", True, seq=out.record["seq"], chars=len(out.record["data"]["text"]), **problems_json(out))
        return 0
    report(out, args)
    name = state.rel(actors.pc_names(state.actor, out.record)[1])
    if args.clear:
        print(f"{name} cleared (record {out.record['seq']}): the next session reads no handoff note")
    else:
        print(f"{name} replaced ({len(out.record['data']['text']):,} characters, record {out.record['seq']})")
    return 0


def args_rotate(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Move the WAL's records to state/archive/ and start a new log whose first "
        "record carries the old last hash, the goal and every recorded line of 10_invariants.md."
    )
    common_options(p)


def cmd_rotate(args: argparse.Namespace) -> int:
    state = open_state(args)
    out = state.rotate()
    data = out.record["data"]
    if args.json:
        emit_json(
            "rotate",
            True,
            archive=data["archive"],
            records=data["records"],
            seq=out.record["seq"],
            **problems_json(out),
        )
        return 0
    report(out, args)
    print(
        f"archived {data['records']} record(s) to {state.rel(data['archive'])}; "
        f"the new WAL starts at record {out.record['seq']}, anchored to the old last hash"
    )
    return 0
