"""The check of the logs (run by every reconciliation when state/keys/ or this clone's pins exist): each keyed
actor's last record must carry a valid signature of its key. A signature covers its record's `prev`, so through the
hash chain every record before it: a record added by hand, an early record edited and every later one re-sealed, a log
replaced by one forged `rotate` all end in a record whose signature is missing or does not verify (`forged`). Key
changes are named: `key-changed` until `rehydrate key trust ACTOR`, `key-rotated` when the old key signed the change,
`key-removed` when a committed key this clone knew is gone (the log is still checked with it)."""

from __future__ import annotations

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import Problem, records
from rehydrate.store.keys import pins, refused, register, sign
from rehydrate.store.local import teamseen
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import scan as walscan
from rehydrate.store.wal.since import HOOK_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def check(state: State, snap: Snapshot) -> list[Problem]:
    """Each keyed actor's log against its key; key changes named (module docstring). Mine: each head. Another's:
    its records read back from the end to one this clone verified where it verified it (or to the key's own record,
    or HOOK_BYTES), each verified; in `verify`, each of its heads."""
    files = sign.committed(state)
    trust = pins.load_trust(state)
    if not files and not trust:
        return []
    problems: list[Problem] = []
    found = pins.verified_records(state)
    pins_changed = found_changed = False
    for actor in sorted(set(files) | set(trust)):
        key, pinned = _key(state, actor, trust, files, problems)
        pins_changed = pins_changed or pinned
        if key is None:
            continue
        if (
            state.session.all_heads is not None and not pinned
        ):  # verify: the registration again (first sight checked it)
            problems.extend(register.registered_here(state, actor, key, frozenset(h for h, _ in found.get(actor, []))))
        done = found.get(actor, [])
        newly, problem = _check_actor(state, snap, actor, key, done)
        if problem is not None:
            problems.append(problem)
        if (
            state.session.all_heads is not None
        ):  # verify: the archives the log was rotated from, each bound to its rotate
            problems.extend(_archives(state, actor))
        if newly:
            found[actor] = [*newly, *[p for p in done if p not in newly]]
            found_changed = True
    if pins_changed:
        pins.save_trust(state, trust)
    if found_changed:
        pins.save_verified(state, found)
    return problems


def _key(
    state: State, actor: str, trust: dict[str, Any], files: dict[str, sign.Public | None], problems: list[Problem]
) -> tuple[sign.Public | None, bool]:
    """The key actor's log is checked with, and whether the pins changed: the committed key (pinned on first
    sight, and pinned anew when the pinned key endorsed it), else the pinned one; changes and removals named."""
    known, filed = pins.pin_of(trust.get(actor)), files.get(actor)
    rel = state.rel(sign.pub_name(actor))
    if actor in files and filed is None:
        problems.append(Problem("key-unreadable", rel, None, f"{rel} is not a public key"))
    if known is None and filed is None:
        return None, False
    if known is None and filed is not None:  # first sight: pinned only when the actor's own log registered it
        problem = refused.first_sight_once(state, actor, filed)
        if problem is not None:
            problems.append(problem)
            return None, False
        if actor != state.actor and _seen_unkeyed(state, actor):
            log = state.log_rel(actor)
            problems.append(Problem("key-registered", rel, None, _registered_text(actor, filed, log)))
        trust[actor] = pins.pin_entry(filed)
        return filed, True
    assert known is not None
    if filed is None:
        problems.append(_removed(actor, rel, known))
        return known, False
    if known.id == filed.id:
        return filed, False
    if _endorsed(state, actor, known, filed):  # the old key signed the change: pinned, and said once
        problems.append(Problem("key-rotated", rel, None, _rotated(actor, known, filed)))
        trust[actor] = pins.pin_entry(filed)
        return filed, True
    problems.append(_changed(actor, rel, known, filed))
    return filed, False


def _seen_unkeyed(state: State, actor: str) -> bool:
    """Whether this worktree read actor's log before its key came (store/local/teamseen.py remembers each
    teammate's)."""
    return actor in teamseen.load(state)


def _registered_text(actor: str, pub: sign.Public, rel: str) -> str:
    return (
        f"{actor} now signs with key {pub.id}, registered in {actor}'s log and pinned; this clone knew {actor} without "
        f"a key. Anyone who can push could have registered it in {actor}'s name: if {actor} did not run `rehydrate key "
        f"init`, {rel} holds records {actor} did not write (git log -p -- {rel})"
    )


def _endorsed(state: State, actor: str, known: sign.Public, filed: sign.Public) -> bool:
    """Whether the actor's log holds the `key` record of filed, signed by it and endorsed by the key this clone
    pinned (read back from the end, at most HOOK_BYTES)."""
    try:
        for _, raw in walback.Back(state.log_path(actor), HOOK_BYTES).lines():
            if b'"op":"key"' not in raw:
                continue
            rec = walback.decode(raw, 0)
            data = rec["data"]
            if records.op_of(rec) is not records.KEY or data.get("id") != filed.id:
                continue
            endorsed = data.get("endorsed")
            if sign.verify(rec, filed) is not None or not isinstance(endorsed, dict) or endorsed.get("key") != known.id:
                return False
            raw_sig = sign.unb64(str(endorsed.get("ed25519")), 64)
            if raw_sig is None:
                return False
            try:
                sign.ed25519_classes().from_public_bytes(known.raw).verify(raw_sig, sign.endorsement(actor, filed.raw))
            except Exception:  # InvalidSignature
                return False
            return True
    except (wal.BadRecord, RehydrateError):
        return False
    return False


def _rotated(actor: str, known: sign.Public, filed: sign.Public) -> str:
    return f"{actor} changed keys from {known.id} to {filed.id}, and {known.id} signed the change: {filed.id} pinned"


def _changed(actor: str, rel: str, known: sign.Public, filed: sign.Public) -> Problem:
    text = (
        f"{actor}'s public key is now {filed.id}; this clone knew {known.id}. {actor}'s records are checked with the "
        f"new key: if {actor} did not make a new key (`rehydrate key init --new` in {actor}'s clone), treat them as "
        f"forged; if the change was meant, `rehydrate key trust {actor}`"
    )
    return Problem("key-changed", rel, None, text)


def _removed(actor: str, rel: str, known: sign.Public) -> Problem:
    text = (
        f"{rel} is gone; this clone knew {actor}'s key {known.id}, and still checks {actor}'s log with it (a `key "
        f"init` stopped before it wrote the file: run it again as {actor}; {actor} stopped signing on purpose: "
        f"`rehydrate key trust {actor}` forgets it here)"
    )
    return Problem("key-removed", rel, None, text)


def _check_actor(
    state: State, snap: Snapshot, actor: str, key: sign.Public, done: list[tuple[str, int | None]]
) -> tuple[list[tuple[str, int | None]], Problem | None]:
    """(the records newly verified, newest first; the forged one found, if any)."""
    hashes = {h for h, _ in done}
    rel = state.log_rel(actor)
    heads: list[Record] | None = None
    if actor == state.actor:
        heads = list(snap.heads) if snap.heads else [snap.last]
    elif state.session.all_heads is not None and actor in state.session.all_heads:
        heads = state.session.all_heads[actor]
    if heads is not None:
        newly: list[tuple[str, int | None]] = []
        for head in heads:
            if head["h"] in hashes:
                continue
            why = sign.verify(head, key)
            if why is not None:
                return newly, register.forged(actor, rel, head, key, why, True)
            newly.append((head["h"], None))
        return newly, None
    return _walk(state, actor, key, done)


def _walk(
    state: State, actor: str, key: sign.Public, done: list[tuple[str, int | None]]
) -> tuple[list[tuple[str, int | None]], Problem | None]:
    """Another actor's log read back from its end: each record verified, to one this clone verified at the same
    place (a repeated line elsewhere is not that place), to the record that registered the key, or HOOK_BYTES."""
    path = state.log_path(actor)
    rel = state.log_rel(actor)
    if fsio.lstat(path) is None:
        if done:
            text = f"{rel} is gone; this clone verified {actor}'s signed records before (state/keys/ names {actor})"
            return [], Problem("log-missing", rel, None, text)
        return [], None
    places, hashes = set(done), {h for h, _ in done}
    newly: list[tuple[str, int | None]] = []
    first = True
    try:
        for offset, raw in walback.Back(path, HOOK_BYTES).lines():
            rec = walback.decode(raw, offset)
            if (rec["h"], offset) in places:
                break
            if rec["h"] not in hashes:
                why = sign.verify(rec, key)
                if why is not None:
                    return newly, register.forged(actor, rel, rec, key, why, first)
                newly.append((rec["h"], offset))
            first = False
            if records.op_of(rec) is records.KEY and records.data_of(rec).get("id") == key.id:
                break  # the key took over here: the records before it were not signed by it
    except (wal.BadRecord, RehydrateError):
        pass  # damage is the chain's to name (verify reads every log whole)
    return newly, None


def _archives(state: State, actor: str) -> list[Problem]:
    """A keyed log that starts with a rotate record: the archive it names must be whole (its chain intact) and end in
    that very record (the archive holds the rotate record as its last line). The rotate record's signature then
    vouches for the archive, and so on back through each archive that starts with a rotate. Read in `verify` only."""
    path, rel = state.log_path(actor), state.log_rel(actor)
    seen: set[str] = set()
    try:
        rec = wallines.first_record(path, rel) if fsio.lstat(path) is not None else None
    except RehydrateError:
        return []  # the chain check names a damaged first line
    while rec is not None and records.op_of(rec) is records.ROTATE and len(seen) < register.MAX_ARCHIVES:
        name = rec["data"].get("archive")
        if walscan.archive_error(rec) is not None or not isinstance(name, str) or name in seen:
            return []  # an unsafe or repeated name: the chain check names it (unsafe-path)
        seen.add(name)
        archive, where = state.path(name), state.rel(name)
        if fsio.lstat(archive) is None:
            text = f"{where}, the archive {rel}'s rotate record (seq {rec.get('seq')}) names, is gone"
            return [Problem("archive-missing", where, None, text)]
        damage = [p for p in walscan.scan_log(archive, where) if not p.info and p.code != "duplicate-record"]
        try:
            last = walback.read_tail(archive, 1).records
        except (wal.BadRecord, RehydrateError):
            last = []
        if damage or not last or last[-1][1]["h"] != rec["h"]:
            why = damage[0].message if damage else "it does not end in the rotate record that archived it"
            text = (
                f"{where} is not the log {actor}'s signed rotate record (seq {rec.get('seq')}) archived: {why}. "
                "It was changed after it was archived"
            )
            return [Problem("forged", where, None, text)]
        try:
            rec = wallines.first_record(archive, where)
        except RehydrateError:
            return []
    return []
