"""This clone's own files about keys, in its git folder (never committed): the pins (keys.json: each actor's key as
this clone first saw it, or was told to trust it) and the records this clone verified or signed (keys.verified, a
cache: a read verifies only what is new)."""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, layout
from rehydrate.store.keys import sign
from rehydrate.store.local import place as local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.state import State


TRUST = layout.KEY_PINS  # this clone's pins, in its git folder


VERIFIED = "keys.verified"  # the records this clone verified or signed (a cache)


MAX_VERIFIED = 16  # heads remembered as verified, per actor


def trust_path(state: State) -> str:
    return os.path.join(state.local, TRUST)


def read_json(path: str) -> dict[str, Any]:
    try:
        data = fsio.read_bytes(path, 1 << 20)
        found = safejson.loads(data) if data else {}
    except (RehydrateError, ValueError):
        found = {}
    return found if isinstance(found, dict) else {}


def load_trust(state: State) -> dict[str, Any]:
    """The pins: {actor: {"public", "id"}} as this clone first saw (or was told to trust) each key."""
    return {a: e for a, e in read_json(trust_path(state)).items() if pin_of(e) is not None}


def save_trust(state: State, trust: dict[str, Any]) -> None:
    """The pins, replaced atomically (temp file, fsync, rename): a crash leaves the old pins or the new."""
    path = trust_path(state)
    local.ensure(os.path.dirname(path))
    fsio.replace(path, safejson.dumps_canonical(trust) + b"\n", "keys.trust", new_mode=0o600, words=WORDS)


def verified_records(state: State) -> dict[str, list[tuple[str, int | None]]]:
    """The records this clone verified or signed, per actor, newest first: (h, byte offset). A cache: a torn or
    odd file reads as empty, and costs a verification again."""
    out: dict[str, list[tuple[str, int | None]]] = {}
    for actor, pairs in read_json(os.path.join(state.local, VERIFIED)).items():
        if isinstance(pairs, list):
            out[actor] = [
                (p[0], p[1] if isinstance(p[1], int) else None)
                for p in pairs
                if isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
            ]
    return out


def save_verified(state: State, found: dict[str, list[tuple[str, int | None]]]) -> None:
    path = os.path.join(state.local, VERIFIED)
    local.ensure(os.path.dirname(path))
    data = {a: [list(p) for p in pairs[:MAX_VERIFIED]] for a, pairs in found.items()}
    fsio.write_hint(path, safejson.dumps_canonical(data) + b"\n")


def pins(state: State) -> dict[str, sign.Public]:
    """{actor: the key this clone pinned for it}."""
    found = {a: pin_of(e) for a, e in load_trust(state).items()}
    return {a: k for a, k in found.items() if k is not None}


def pin_of(entry: object) -> sign.Public | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("public"), str):
        return None
    text = sign.key_text(entry["public"])
    return sign.Public(text, "this clone's trust file") if text is not None else None


def pin_entry(pub: sign.Public) -> dict[str, str]:
    return {"public": pub.b64, "id": pub.id}


def remember(state: State, actor: str, pub: sign.Public, verified: list[tuple[str, int | None]]) -> None:
    """Pin actor's key in this clone (written only when it changes), and remember the records just verified or
    signed."""
    trust = load_trust(state)
    if trust.get(actor) != pin_entry(pub):
        trust[actor] = pin_entry(pub)
        save_trust(state, trust)
    if verified:
        found = verified_records(state)
        found[actor] = [*verified[::-1], *[p for p in found.get(actor, []) if p not in verified]]
        save_verified(state, found)


def signed(state: State, records: list[tuple[str, int | None]]) -> None:
    """The records this actor just signed (h, byte offset), oldest first: remembered as verified in this clone."""
    signer = state.signer
    remember(state, state.actor, sign.Public.of(signer.public, "the key file"), records)


def trust_actor(state: State, actor: str) -> sign.Public | None:
    """`rehydrate key trust ACTOR`: pin the committed key as this clone's; with none committed, forget the pinned one
    (this clone no longer expects ACTOR's records to be signed). None when it forgot."""
    pub = sign.committed(state).get(actor)
    if pub is not None:
        remember(state, actor, pub, [])
        return pub
    trust = load_trust(state)
    if actor not in trust:
        raise UsageError(f"no public key for {actor} in {state.rel(sign.KEYS_DIR)}/, and none pinned in this clone")
    del trust[actor]
    save_trust(state, trust)
    return None
