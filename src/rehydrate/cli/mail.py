"""`rehydrate mail` (read, or `send`) and `rehydrate promise` (make one, or `done ID`), between actors."""

from __future__ import annotations

import sys

from rehydrate.cli import common_options, emit_json, open_state, problems_json, report
from rehydrate.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

POSITIONALS = {"text": "TEXT", "id": "ID"}
KIND_HELP = "redirect, blocker, actionable or fyi (default: fyi); an unread redirect or blocker degrades the ledger"


def args_mail(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Without `send`: show the messages to you and to all that you have not read yet, most urgent first "
        "(redirect, blocker, actionable, fyi, then oldest first), and record in your log that you read them. "
        "`send --to ACTOR TEXT`: write a message, a file of its own under state/mail/ACTOR/ (or state/mail/all/)."
    )
    p.add_argument("--all", action="store_true", help="show the messages already read too")
    common_options(p)
    sub = p.add_subparsers(dest="action", metavar="send", help="send: write a message")
    s = sub.add_parser("send", help="write a message to an actor (or to all)", description="Write a message.")
    s.add_argument("text", metavar="TEXT", help="the message (cleaned of control characters; at most 16 KiB)")
    s.add_argument("--to", required=True, metavar="ACTOR", help="the actor it is for, or `all`")
    s.add_argument("--kind", default="fyi", choices=["actionable", "fyi", "blocker", "redirect"], help=KIND_HELP)
    # given after `send` as well as before it; absent, the values given before it stand (not overwritten)
    from argparse import SUPPRESS

    from rehydrate.cli import ACTOR_HELP, DIR_HELP

    s.add_argument("--dir", metavar="DIR", default=SUPPRESS, help=DIR_HELP)
    s.add_argument("--actor", metavar="NAME", default=SUPPRESS, help=ACTOR_HELP)
    s.add_argument("--json", action="store_true", default=SUPPRESS, help="print one JSON object (with a version field)")


def cmd_mail(args: argparse.Namespace) -> int:
    from rehydrate.store.mail import inbox, known, messages

    state = open_state(args)
    if args.action == "send":
        out = messages.send(state, args.to, args.kind, args.text)
        rec = out.record
        assert rec is not None
        data = rec["data"]
        if args.json:
            emit_json("mail", True, action="send", **data, seq=rec["seq"], **problems_json(out))
            return 0
        report(out, args)
        print(f"sent {data['id']} ({data['kind']}) to {data['to']}: {state.rel(data['path'])}")
        return 0
    read = known.read_set(state)
    found = inbox.listing(state, read, everything=args.all)
    unread = [m.id for m in found.messages if m.id not in read]
    receipt = messages.mark_read(state, unread) if unread else None
    seq = receipt.record["seq"] if receipt is not None and receipt.record is not None else None
    if args.json:
        emit_json(
            "mail",
            True,
            action="read",
            messages=[m.as_dict(m.id in read) for m in found.messages],
            skipped=found.skipped,
            forged=[{"path": m.rel, "id": m.id, "from": m.sender, "why": why} for m, why in found.forged],
            not_read=found.not_read,
            recorded=seq,
            **(problems_json(receipt) if receipt is not None else {"problems": [], "repaired": []}),
        )
        return 0
    if receipt is not None:
        report(receipt, args)
    _print(found, read, args.all)
    return 0


def _print(found: object, read: set[str], everything: bool) -> None:
    from rehydrate.store.mail.inbox import Listing
    from rehydrate.text import terminal_safe

    assert isinstance(found, Listing)
    for why in found.skipped:
        print(f"rehydrate: warning: {terminal_safe(why)}", file=sys.stderr)
    for m, why in found.forged:
        from rehydrate.store.mail.senders import forged_text

        print(f"rehydrate: warning: forged: {terminal_safe(m.rel + ': ' + forged_text(m, why))}", file=sys.stderr)
    if not found.messages:
        print("no messages" if everything else "no unread messages")
        return
    for m in found.messages:
        mark = " (read)" if m.id in read else ""
        print(terminal_safe(f"== {m.id} {m.kind} from {m.sender} to {m.to} at {m.ts}{mark} · {m.rel}"))
        print(terminal_safe(m.text))
        print()
    if found.not_read:
        print(f"and {found.not_read} older message(s) not shown: at most 64 are read at a time")


def args_promise(p: argparse.ArgumentParser) -> None:
    p.description = (
        "`promise TEXT`: record something you promised to do (an open promise is named by the outbox check). "
        "`promise done ID`: record that it is done."
    )
    p.add_argument("words", nargs="+", metavar="TEXT", help="the promise, or `done ID`")
    common_options(p)


def cmd_promise(args: argparse.Namespace) -> int:
    from rehydrate.store.mail import promises

    words: list[str] = args.words
    state = open_state(args)
    if words[0] == "done" and len(words) == 2 and words[1].startswith("P-"):
        out = promises.promise_done(state, words[1])
        verb = "done"
    else:
        if words[0] == "done" and len(words) == 2:
            raise UsageError(f"{words[1]!r} is not a promise's id (P- and 6 hex)", field="id")
        out = promises.promise(state, " ".join(words))
        verb = "open"
    rec = out.record
    assert rec is not None
    if args.json:
        emit_json("promise", True, id=rec["data"]["id"], state=verb, seq=rec["seq"], **problems_json(out))
        return 0
    report(out, args)
    print(f"promise {rec['data']['id']} {'done' if verb == 'done' else 'recorded'} (record {rec['seq']})")
    return 0
