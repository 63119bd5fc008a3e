"""`rehydrate key`: make and register the key an actor signs its records with, show the keys, trust a changed one
(store/keys/)."""

from __future__ import annotations

import os

from rehydrate.cli import common_options, emit_json, open_state, problems_json, report
from rehydrate.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

POSITIONALS = {"who": "ACTOR"}


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
    from rehydrate.store.keys import register, sign
    from rehydrate.store.local import place as local

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
    from rehydrate.store.keys import pins, sign

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
    from rehydrate.store.keys import pins, sign

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
