"""The commands between actors: `rehydrate key` (make and register the key an actor signs its records with, show
the keys, trust a changed one: store/keys/), `rehydrate mail` (read, or `send`) and `rehydrate promise` (make one,
or `done ID`): store/mail/."""

from __future__ import annotations

import os
import sys
from argparse import SUPPRESS

from rehydrate.cli import ACTOR_HELP, DIR_HELP, common_options, emit_json, open_state, problems_json, report
from rehydrate.errors import UsageError
from rehydrate.store.keys import pins, register, sign
from rehydrate.store.local import place as local
from rehydrate.store.mail import inbox, known, messages, promises
from rehydrate.store.mail.inbox import Listing
from rehydrate.store.mail.senders import forged_text
from rehydrate.text import terminal_safe

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

POSITIONALS = {"who": "ACTOR", "text": "TEXT", "id": "ID"}
KIND_HELP = "redirect, blocker, actionable or fyi (default: fyi); an unread redirect or blocker degrades the ledger"


def args_key(p: argparse.ArgumentParser) -> None:
    p.description = (
        "`key init`: make this user's signing key (Ed25519) outside the repository ($REHYDRATE_KEY_FILE, else "
        "~/.config/rehydrate/key, mode 0600) if there is none, and register its public key for the actor: "
        "state/keys/ACTOR.pub and a signed `key` record. From then on every record the actor writes is signed, and "
        "every check names a log whose last record is not (forged). `key show`: the keys and what this clone "
        "trusts. `key trust ACTOR`: accept ACTOR's changed public key in this clone."
    )
    p.add_argument("action", choices=["init", "show", "trust"], help="init, show or trust")
    p.add_argument("who", nargs="?", metavar="ACTOR", help="for `trust`: the actor whose committed key to trust")
    p.add_argument("--new", action="store_true", help="for `init`: replace the key with a new one (named as a change)")
    common_options(p)


def cmd_key(args: argparse.Namespace) -> int:
    state = open_state(args)
    if args.action == "trust":
        return _trust(state, args)
    if args.action == "show":
        return _show(state, args)
    path = sign.key_file()
    found = local.repo(state.root)
    top = found.top if found is not None else os.path.dirname(state.root)
    if not os.path.relpath(path, top).startswith(".."):
        raise UsageError(
            f"the key file {path} is inside the repository ({top})",
            "keep it outside every repository: set REHYDRATE_KEY_FILE to a path outside it",
        )
    signer = sign.load_private(path)
    made = signer is None
    old = None  # the key being replaced, when it is at hand: it endorses its successor
    if args.new and signer is not None:
        os.replace(path, f"{path}.old-{signer.id}")
        made, old = True, signer
    if made:
        signer = sign.create_private(path)
    assert signer is not None
    current = sign.committed(state).get(state.actor)
    if current is not None and current.id == signer.id and not made and register.binds_state(state, current):
        if args.json:
            emit_json("key", True, action="init", actor=state.actor, key=signer.id, file=path, registered=False)
        else:
            print(f"{state.actor}'s key {signer.id} is registered already ({state.rel(sign.pub_name(state.actor))})")
        return 0
    out = state.register_key(signer, old)
    rec = out.record
    assert rec is not None
    if args.json:
        emit_json(
            "key",
            True,
            action="init",
            actor=state.actor,
            key=signer.id,
            file=path,
            registered=True,
            replaces=rec["data"]["replaces"],
            created=made,
            **problems_json(out),
        )
        return 0
    report(out, args)
    if made:
        print(f"made a signing key at {path} (keep it out of every repository; back it up)")
    replaced = f", replacing {rec['data']['replaces']}" if rec["data"]["replaces"] else ""
    print(
        f"registered key {signer.id} for {state.actor}{replaced}: {state.rel(sign.pub_name(state.actor))} "
        f"(commit it); record {rec['seq']}; {state.actor}'s records are signed from now on"
    )
    return 0


def _trust(state: Any, args: argparse.Namespace) -> int:
    if not args.who:
        raise UsageError("name the actor whose key to trust", "rehydrate key trust ACTOR", field="who")
    pub = pins.trust_actor(state, args.who)
    if args.json:
        emit_json("key", True, action="trust", actor=args.who, key=pub.id if pub else None)
    elif pub is None:
        print(f"forgot {args.who}'s key in this clone: {args.who}'s records are no longer expected to be signed")
    else:
        print(f"trusted {args.who}'s key {pub.id} ({state.rel(sign.pub_name(args.who))}) in this clone")
    return 0


def _show(state: object, args: argparse.Namespace) -> int:
    files = sign.committed(state)  # type: ignore[arg-type]
    trust = pins.load_trust(state)  # type: ignore[arg-type]
    rows = []
    for actor in sorted(set(files) | set(trust)):
        pub = files.get(actor)
        known = trust.get(actor, {}).get("id") if isinstance(trust.get(actor), dict) else None
        rows.append({"actor": actor, "committed": pub.id if pub else None, "trusted": known})
    mine = None
    try:
        signer = sign.load_private()
        mine = signer.id if signer is not None else None
    except Exception:  # an unreadable key file is shown as absent here; `key init` names it
        mine = None
    if args.json:
        emit_json("key", True, action="show", key_file=sign.key_file(), key=mine, actors=rows)
        return 0
    print(f"key file: {sign.key_file()} ({'key ' + mine if mine else 'none'})")
    for row in rows:
        note = "" if row["committed"] == row["trusted"] else " (differs: see `rehydrate key trust`)"
        print(f"{row['actor']}: committed {row['committed'] or 'none'}, trusted here {row['trusted'] or 'none'}{note}")
    if not rows:
        print("no actor signs its records (`rehydrate key init` registers a key)")
    return 0


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
    s.add_argument("--dir", metavar="DIR", default=SUPPRESS, help=DIR_HELP)
    s.add_argument("--actor", metavar="NAME", default=SUPPRESS, help=ACTOR_HELP)
    s.add_argument("--json", action="store_true", default=SUPPRESS, help="print one JSON object (with a version field)")


def cmd_mail(args: argparse.Namespace) -> int:
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
    assert isinstance(found, Listing)
    for why in found.skipped:
        print(f"rehydrate: warning: {terminal_safe(why)}", file=sys.stderr)
    for m, why in found.forged:
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
