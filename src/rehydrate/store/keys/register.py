"""Registration: whether a committed key is the actor's own. Pinned on first sight only when the actor's own log
registered it (its `key` record, signed by it, and every record since signed by it too, read back through the archives
the log was rotated from), for this state (the registration names the state's `init` record; one written before
registrations did must bind this state's goal), and, for this clone's own actor, held in this user's key file."""

from __future__ import annotations

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import Problem, layout, records
from rehydrate.store.keys import pins, sign
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import scan as walscan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


MAX_ARCHIVES = 10_000  # rotations followed back from a log (a loop of planted names stops here)


def signer_for(state: State) -> sign.Signer | None:
    """The key this actor signs with: None when it has neither a committed public key nor one pinned in this clone
    (nothing is signed); KeyMissing when it has one and no matching private key is readable. A pinned key whose
    committed file is gone still binds: a deleted .pub must not let unsigned records in."""
    filed = fsio.lstat(state.path(sign.pub_name(state.actor))) is not None
    pinned = pins.pin_of(pins.load_trust(state).get(state.actor))
    pub = sign.committed(state).get(state.actor) if filed else pinned
    if pub is None and not filed:
        return None
    if pub is None:
        raise sign.KeyMissing(
            f"{state.rel(sign.pub_name(state.actor))} is not a public key", "run `rehydrate key init`"
        )
    where = sign.key_file()
    signer = sign.load_private(where)
    if pinned is None and (signer is None or sign.b64(signer.public) != pub.b64):
        reg = registration(state, state.actor, pub)
        if isinstance(reg, Problem) and reg.code == "key-unregistered":
            return None  # a key committed in this actor's name that its log never registered is not its key
    if signer is None or sign.b64(signer.public) != pub.b64:
        found = "holds another key" if signer is not None else "does not exist"
        raise sign.KeyMissing(
            f"{state.actor}'s records are signed (key {pub.id}, {state.rel(sign.pub_name(state.actor))}), and {where} "
            f"{found}: nothing was written",
            "point REHYDRATE_KEY_FILE at the key, or run `rehydrate key init --new` to register another "
            "(every clone that knew the old one names the change)",
        )
    return signer


def first_sight(state: State, actor: str, filed: sign.Public) -> Problem | None:
    """Why a committed key this clone has not pinned must not be pinned, or None. A key is the actor's only when its
    own log registered it: a `key` record of that key signed by it, and every record since signed by it too (read
    back through the archives the log was rotated from); the registration names this state (or, written before
    registrations named one, binds this state's goal). The actor of this clone pins a key only when this user's key
    file holds it: anyone who can push can register a key of theirs in another's log."""
    rel = state.log_rel(actor)
    found = registration(state, actor, filed)
    if isinstance(found, Problem):
        return found
    if found is None:
        return None  # damage on the way: the chain check names it, and nothing is pinned until it is mended
    elsewhere = other_state(state, found)
    if elsewhere is not None:
        return Problem("other-state", rel, None, f"{rel} belongs to another state: {elsewhere}")
    if actor == state.actor and not _held(filed):
        text = (
            f"{state.rel(sign.pub_name(actor))} is a key ({filed.id}) that {rel} registered (record seq "
            f"{found.get('seq')}), and {sign.key_file()} does not hold it: this clone does not take it for "
            f"{actor}'s own. "
            f"If {actor} made it elsewhere, point REHYDRATE_KEY_FILE at it; if not, someone else registered it: "
            "remove the key and the records signed by it (git log -p -- state/keys state/wal)"
        )
        return Problem("key-not-mine", state.rel(sign.pub_name(actor)), None, text)
    return None


def registered_here(state: State, actor: str, key: sign.Public, known: frozenset[str]) -> list[Problem]:
    """verify's look at a pinned key's registration: still in the actor's log, and for this state."""
    found = registration(state, actor, key, known)
    if isinstance(found, Problem):
        return [] if found.code == "forged" else [found]  # (a forged last record: _check_actor names it)
    elsewhere = other_state(state, found) if found is not None else None
    if elsewhere is None:
        return []
    rel = state.log_rel(actor)
    return [Problem("other-state", rel, None, f"{rel} belongs to another state: {elsewhere}")]


def _held(pub: sign.Public) -> bool:
    try:
        signer = sign.load_private()
    except RehydrateError:
        return False
    return signer is not None and sign.b64(signer.public) == pub.b64


def registration(
    state: State, actor: str, pub: sign.Public, known: frozenset[str] = frozenset()
) -> Record | Problem | None:
    """The `key` record that registered pub in actor's log, each record after it verified on the way back from the
    log's end (through each archive a rotate record names); else the problem: the last record not signed by pub
    (`forged`), or a record before it that is not, short of any registration of pub (`key-unregistered`). None when
    the log is damaged on the way, or an archive is gone (the chain check and verify name them)."""
    first = True
    where = state.log_rel(actor)
    try:
        for where, offset, raw in back(state, actor):
            rec = walback.decode(raw, offset)
            why = sign.verify(rec, pub) if rec["h"] not in known else None  # (known: verified here before)
            if why is not None and first:
                return forged(actor, where, rec, pub, why, True)
            if why is not None:
                return _unregistered(state, actor, pub, where, rec)
            first = False
            data = rec["data"]
            if records.op_of(rec) is records.KEY and data.get("id") == pub.id and data.get("public") == pub.b64:
                return rec
    except (wal.BadRecord, RehydrateError):
        return None
    except ArchiveGone:
        return None
    return _unregistered(state, actor, pub, where, None)


class ArchiveGone(Exception):
    """back() reached a rotate record whose archive is not there (verify names it: archive-missing)."""


def back(state: State, actor: str) -> Iterator[tuple[str, int, bytes]]:
    """The lines of actor's log, newest first, then those of each archive its first record (a rotate) names, and so
    on (at most MAX_ARCHIVES): (where, byte offset, line). An archive ends in the rotate record that archived it,
    given once. BadRecord for a line that does not decode where one must be read (the oldest, to follow its
    archive); ArchiveGone when an archive named is not there."""
    path, where, skip = state.log_path(actor), state.log_rel(actor), b""
    for _ in range(MAX_ARCHIVES):
        oldest = None
        for offset, raw in walback.Back(path, 1 << 62).lines():
            if skip and b'"h":"' + skip + b'"' in raw:
                skip = b""
                continue
            skip = b""
            yield where, offset, raw
            if offset == 0:
                oldest = walback.decode(raw, offset)
        name = oldest["data"].get("archive") if oldest is not None and records.op_of(oldest) is records.ROTATE else None
        if oldest is None or not isinstance(name, str) or walscan.archive_error(oldest) is not None:
            return
        if fsio.lstat(state.path(name)) is None:
            raise ArchiveGone(name)
        path, where, skip = state.path(name), state.rel(name), str(oldest["h"]).encode()


def binds_state(state: State, pub: sign.Public) -> bool:
    """Whether this actor's registration of pub names its state (`key init` registers it again where one written
    before registrations named their state is the newest: from then on a copy of the log elsewhere is told apart)."""
    found = registration(state, state.actor, pub)
    return not isinstance(found, dict) or isinstance(found["data"].get("state"), str)


def _unregistered(state: State, actor: str, pub: sign.Public, where: str, rec: Record | None) -> Problem:
    at = f"{where} holds a record (seq {rec.get('seq')}, {rec.get('op')}) not signed by it" if rec else "none is there"
    text = (
        f"{state.rel(sign.pub_name(actor))} is a key ({pub.id}) that {actor}'s log never registered: no `key` "
        "record of it, "
        f"signed by it, comes before the records it signed ({at}). Not pinned: {actor}'s records are not taken as "
        f"signed. Whoever committed it (git log -p -- {state.rel(sign.KEYS_DIR)}) may have signed records in {actor}'s "
        f"name; `rehydrate key init` as {actor} registers a key of {actor}'s own"
    )
    return Problem("key-unregistered", state.rel(sign.pub_name(actor)), None, text)


def starts(state: State) -> dict[str, tuple[str, str]]:
    """{h: (ts, goal hash)} of each `init` record this state starts from: each log's first record, followed back
    through the archives its rotate records name. One in a state made by `init`; a state that holds none (its first
    log gone) binds nothing."""
    out: dict[str, tuple[str, str]] = {}
    for actor in state.actor_names():
        path, seen = state.log_path(actor), 0
        try:
            rec: Record | None = wallines.first_record(path, state.log_rel(actor))
            while rec is not None and records.op_of(rec) is records.ROTATE and seen < MAX_ARCHIVES:
                name, seen = rec["data"].get("archive"), seen + 1
                if walscan.archive_error(rec) is not None or not isinstance(name, str):
                    break
                archive = state.path(name)
                rec = wallines.first_record(archive, state.rel(name)) if fsio.lstat(archive) is not None else None
        except (RehydrateError, OSError):
            continue
        if rec is not None and records.op_of(rec) is records.INIT:
            out[rec["h"]] = (str(rec["ts"]), str(rec["views"].get(layout.GOAL)))
    return out


def start_of(state: State) -> str | None:
    """The start a new registration names: the state's `init` record (the earliest, should a merge have brought
    two)."""
    found = starts(state)
    return min(found, key=lambda h: (found[h][0], h)) if found else None


def other_state(state: State, reg: Record) -> str | None:
    """Why a registration belongs to another state, or None. One that names its state must name one this state
    starts from; one written before registrations named their state must at least bind this state's goal (two
    projects with one goal text cannot be told apart by it: their logs are then taken as this state's)."""
    found = starts(state)
    if not found:
        return None
    named, seq = reg["data"].get("state"), reg.get("seq")
    actor = reg.get("actor")
    if isinstance(named, str):
        if named in found:
            return None
        return (
            f"{actor}'s key {reg['data'].get('id')} was registered (record seq {seq}) for the state that starts with "
            f"record {named[:12]}, and this one starts with {', '.join(h[:12] for h in sorted(found))}: its records "
            f"were signed for another project (a log copied from one where {actor} uses the same key)"
        )
    goal = reg["views"].get(layout.GOAL)
    if goal in {g for _, g in found.values()}:
        return None
    return (
        f"{actor}'s key {reg['data'].get('id')} was registered (record seq {seq}) under the goal {str(goal)[:12]}, "
        f"and this state's goal is {', '.join(sorted({g[:12] for _, g in found.values()}))}: its records were "
        f"signed for another project (a log copied from one where {actor} uses the same key)"
    )


def forged(actor: str, where: str, rec: Record, key: sign.Public, why: str, last: bool) -> Problem:
    which = "last record" if last else "record"
    return Problem(
        "forged",
        where,
        None,
        f"{actor}'s {which} (seq {rec.get('seq')}, {rec.get('op')}) is not signed by {actor}'s key {key.id}: {why}. "
        "Its log was written or changed without the key (a record added, edited and re-sealed, or the log replaced)",
    )
