"""Signed records: a key the agent does not hold in the repository, and the check that every keyed actor's log ends
in a record its key signed.

- The private key (Ed25519) is a file outside the repository: `$REHYDRATE_KEY_FILE`, else
  `$XDG_CONFIG_HOME/rehydrate/key`, else `~/.config/rehydrate/key` (mode 0600). One key serves every actor and
  repository of its user; `rehydrate key init` makes it and registers its public key for an actor: the file
  `state/keys/<actor>.pub` (committed with the state) and a `key` record, signed by it.
- An actor with a committed public key signs every record it writes: `sig = {"key": <key id>, "ed25519": <base64>}`
  over `SIG_DOMAIN` + the canonical record less `h` and `sig` (the record's `h` then covers `sig` too). The key id is
  the first 16 hex digits of the public key's sha256. Without its key readable, such an actor writes nothing
  (KeyMissing): an unsigned record would read as forged.
- The check (`check`, run by every reconciliation when `state/keys/` or this clone's trust file exists): a signature
  covers its record's `prev`, so through the hash chain every record before it: each keyed actor's last record must
  carry a valid signature of its key, and then the whole log up to it is as the key holder wrote it. A record added
  by hand, an early record edited and every later one re-sealed, a log replaced by one forged `rotate`: the last
  record's signature is missing or does not verify (`forged`). The heads already verified are remembered in this
  clone's trust file (`<git-dir>/rehydrate/<key>/keys.json`, never committed), so a read verifies only what is new
  (the crypto library is imported only then).
- Pinned on first sight, and only when the actor's own log registered the key: its `key` record, signed by it, with
  every record since signed by it too (read back through the archives the log was rotated from), for this state (a
  registration names the state's `init` record; one written before registrations did must bind this state's goal),
  and, for this clone's own actor, held in this user's key file. Otherwise nothing is pinned and the key is named:
  `key-unregistered`, `other-state`, `key-not-mine`. A key pinned for a teammate this clone knew without one is said
  once (`key-registered`). The trust file keeps each actor's key as this clone pinned it. A committed key that
  differs is named (`key-changed`) until `rehydrate key trust ACTOR`; a committed key removed while this clone knew it
  is named too (`key-removed`), and the actor's log is still checked against the key it knew.
- A message in a keyed actor's name counts only when her log holds her signed `mail` record of it (store/mail.py).

What this cannot prove: that a key holder told the truth (a writer with the key can sign a lie), nor that a
registration is the actor's own where no clone of the actor's is looking (whoever can push can register a key in the
name of an actor who has none). The chain proves order, the signature authorship; neither proves truth.
"""

from __future__ import annotations

import os
import stat

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

KEYS_DIR = layout.KEYS_DIR
TRUST = layout.KEY_PINS  # this clone's pins, in its git folder
VERIFIED = "keys.verified"  # the records this clone verified or signed (a cache)
REFUSED = "keys.refused"  # the keys this clone refused to pin, and why, while nothing they rest on changed (a cache)
SIG_DOMAIN = b"rehydrate-record-sig-v1\n"
ENDORSE_DOMAIN = b"rehydrate-key-endorse-v1\n"
PUB_PREFIX = "rehydrate-ed25519"
PRIVATE_HEADER = "# rehydrate signing key (ed25519 seed, base64): keep it out of every repository\n"
MAX_VERIFIED = 16  # heads remembered as verified, per actor


class KeyMissing(RehydrateError):
    """An actor whose records are signed, and no matching key readable here."""


def key_file() -> str:
    """Where this user's private key lives (it need not exist)."""
    given = os.environ.get("REHYDRATE_KEY_FILE")
    if given:
        return os.path.abspath(os.path.expanduser(given))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "rehydrate", "key")


def key_id(public: bytes) -> str:
    """A public key's id: the first 16 hex digits of the sha256 of its base64 text (key_id_of)."""
    return key_id_of(_b64(public))


def key_id_of(text: str) -> str:
    from rehydrate.store.wal import digest  # the builtin sha256, not hashlib's OpenSSL (the hook path stays light)

    return digest.sha256(text.encode("ascii"))[:16]


_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _key_text(text: str) -> str | None:
    """The base64 text of a 32-byte key as written (43 characters and "="), checked without decoding it (binascii
    is not loaded on a read that verifies nothing); None for anything else."""
    ok = len(text) == 44 and text[43] == "=" and all(c in _B64 for c in text[:43]) and text[42] in "AEIMQUYcgkosw048"
    return text if ok else None


def _b64(data: bytes) -> str:
    import binascii  # not base64, which loads re

    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _unb64(text: str, size: int) -> bytes | None:
    """Standard base64 of exactly size bytes, in its one canonical spelling, else None."""
    import binascii

    try:
        raw = binascii.a2b_base64(text.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None
    return raw if len(raw) == size and _b64(raw) == text else None


def _ed25519() -> Any:
    """cryptography's Ed25519 key classes: its compiled binding when it offers them (a third of the import time of the
    public module, which loads typing, enum and re), else the public module (the same objects)."""
    try:
        from cryptography.hazmat.bindings._rust import openssl

        found = openssl.ed25519
        if hasattr(found, "from_private_bytes") and hasattr(found, "from_public_bytes"):
            return found
    except (ImportError, AttributeError):  # pragma: no cover - another version of cryptography
        pass
    from cryptography.hazmat.primitives.asymmetric import ed25519

    class Public:
        from_public_bytes = ed25519.Ed25519PublicKey.from_public_bytes
        from_private_bytes = ed25519.Ed25519PrivateKey.from_private_bytes

    return Public


# ------------------------------------------------------------------------------------------------ the private key


class Signer:
    """A loaded private key: its public bytes, its id, and sign(record) -> the record's `sig` member."""

    def __init__(self, seed: bytes, path: str) -> None:
        self._key = _ed25519().from_private_bytes(seed)
        self.public = self._key.public_key().public_bytes_raw()
        self.id = key_id(self.public)
        self.path = path

    def sign(self, rec: Record) -> dict[str, str]:
        return {"ed25519": _b64(self._key.sign(message(rec))), "key": self.id}

    def endorse(self, actor: str, new: Signer) -> dict[str, str]:
        """This (old) key's signature over the actor's new public key: the change, vouched for by the key it ends."""
        return {"ed25519": _b64(self._key.sign(endorsement(actor, new.public))), "key": self.id}


def endorsement(actor: str, public: bytes) -> bytes:
    return ENDORSE_DOMAIN + actor.encode() + b"\n" + _b64(public).encode()


def public_text(signer: Signer) -> str:
    return _b64(signer.public)


def message(rec: Record) -> bytes:
    """What a signature covers: the record less `h` and `sig`, canonical."""
    from rehydrate import safejson

    return SIG_DOMAIN + safejson.dumps_canonical({k: v for k, v in rec.items() if k not in ("h", "sig")})


def load_private(path: str | None = None) -> Signer | None:
    """The private key at path (default key_file()), None when there is none; RehydrateError when it is unreadable
    or not a key."""
    path = path or key_file()
    try:
        data = fsio.read_bytes(path, 4096)
    except RehydrateError as e:
        raise RehydrateError(f"the signing key {path} cannot be read: {e.message}") from None
    if data is None:
        return None
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip() and not ln.startswith("#")]
    seed = _unb64(lines[0].strip(), 32) if len(lines) == 1 else None
    if seed is None:
        raise RehydrateError(f"{path} is not a rehydrate signing key", "move it away and run `rehydrate key init`")
    return Signer(seed, path)


def create_private(path: str) -> Signer:
    """A new key at path (its folder made 0700, the file 0600, never over an existing file)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    seed = os.urandom(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        raise UsageError(f"{path} exists already", "it is kept: `rehydrate key init` uses it") from None
    try:
        os.write(fd, (PRIVATE_HEADER + _b64(seed) + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return Signer(seed, path)


# ------------------------------------------------------------------------------------------------ public keys


class Public:
    """A public key by its base64 text (decoded only to verify a signature), its id and where it was read."""

    def __init__(self, b64: str, source: str) -> None:
        self.b64 = b64
        self.id = key_id_of(b64)
        self.source = source

    @classmethod
    def of(cls, raw: bytes, source: str) -> Public:
        return cls(_b64(raw), source)

    @property
    def raw(self) -> bytes:
        found = _unb64(self.b64, 32)
        if found is None:  # pragma: no cover - _key_text let only a 32-byte key's text in
            raise ValueError("not a key")
        return found

    def text(self, actor: str) -> str:
        return f"{PUB_PREFIX} {self.b64} {actor}\n"


def pub_name(actor: str) -> str:
    return f"{KEYS_DIR}/{actor}.pub"


def parse_pub(data: bytes, source: str) -> Public | None:
    parts = data.decode("utf-8", "replace").split()
    if len(parts) < 2 or parts[0] != PUB_PREFIX:
        return None
    text = _key_text(parts[1])
    return Public(text, source) if text is not None else None


def committed(state: State) -> dict[str, Public | None]:
    """{actor: its committed public key} from state/keys/*.pub (None: a file that is not a key)."""
    folder = state.path(KEYS_DIR)
    st = fsio.lstat(folder)
    if st is None or not stat.S_ISDIR(st.st_mode):  # a symlink to a folder elsewhere is not read
        return {}
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    out: dict[str, Public | None] = {}
    for name in sorted(names):
        actor = name[:-4] if name.endswith(".pub") else ""
        if not layout.is_actor(actor):
            continue
        try:
            data = fsio.read_bytes(os.path.join(folder, name), 4096, WORDS)
        except RehydrateError:
            data = None
        out[actor] = parse_pub(data, state.rel(KEYS_DIR, name)) if data is not None else None
    return out


def signer_for(state: State) -> Signer | None:
    """The key this actor signs with: None when it has neither a committed public key nor one pinned in this clone
    (nothing is signed); KeyMissing when it has one and no matching private key is readable. A pinned key whose
    committed file is gone still binds: a deleted .pub must not let unsigned records in."""
    filed = fsio.lstat(state.path(pub_name(state.actor))) is not None
    pinned = _known(load_trust(state).get(state.actor))
    pub = committed(state).get(state.actor) if filed else pinned
    if pub is None and not filed:
        return None
    if pub is None:
        raise KeyMissing(f"{state.rel(pub_name(state.actor))} is not a public key", "run `rehydrate key init`")
    where = key_file()
    signer = load_private(where)
    if pinned is None and (signer is None or _b64(signer.public) != pub.b64):
        reg = registration(state, state.actor, pub)
        if isinstance(reg, Problem) and reg.code == "key-unregistered":
            return None  # a key committed in this actor's name that its log never registered is not its key
    if signer is None or _b64(signer.public) != pub.b64:
        found = "holds another key" if signer is not None else "does not exist"
        raise KeyMissing(
            f"{state.actor}'s records are signed (key {pub.id}, {state.rel(pub_name(state.actor))}), and {where} "
            f"{found}: nothing was written",
            "point REHYDRATE_KEY_FILE at the key, or run `rehydrate key init --new` to register another "
            "(every clone that knew the old one names the change)",
        )
    return signer


def verify(rec: Record, pub: Public) -> str | None:
    """None when the record carries a valid signature of pub; else why not."""
    sig = rec.get("sig")
    if not isinstance(sig, dict):
        return "it carries no signature"
    if sig.get("key") != pub.id:
        return f"it is signed by another key ({str(sig.get('key'))[:16]})"
    raw = _unb64(str(sig.get("ed25519")), 64)
    if raw is None:
        return "its signature is not a signature"
    try:
        _ed25519().from_public_bytes(pub.raw).verify(raw, message(rec))
    except Exception:  # cryptography's InvalidSignature (its module is not imported unless one is raised)
        return "its signature does not verify (the record was changed after it was signed)"
    return None


# ------------------------------------------------------------------------------------------------ this clone's files


def trust_path(state: State) -> str:
    return os.path.join(state.local, TRUST)


def _load(path: str) -> dict[str, Any]:
    from rehydrate import safejson

    try:
        data = fsio.read_bytes(path, 1 << 20)
        found = safejson.loads(data) if data else {}
    except (RehydrateError, ValueError):
        found = {}
    return found if isinstance(found, dict) else {}


def load_trust(state: State) -> dict[str, Any]:
    """The pins: {actor: {"public", "id"}} as this clone first saw (or was told to trust) each key."""
    return {a: e for a, e in _load(trust_path(state)).items() if _known(e) is not None}


def save_trust(state: State, trust: dict[str, Any]) -> None:
    """The pins, replaced atomically (temp file, fsync, rename): a crash leaves the old pins or the new."""
    from rehydrate import safejson
    from rehydrate.store.local import place as local

    path = trust_path(state)
    local.ensure(os.path.dirname(path))
    fsio.replace(path, safejson.dumps_canonical(trust) + b"\n", "keys.trust", new_mode=0o600, words=WORDS)


def _load_verified(state: State) -> dict[str, list[tuple[str, int | None]]]:
    """The records this clone verified or signed, per actor, newest first: (h, byte offset). A cache: a torn or
    odd file reads as empty, and costs a verification again."""
    out: dict[str, list[tuple[str, int | None]]] = {}
    for actor, pairs in _load(os.path.join(state.local, VERIFIED)).items():
        if isinstance(pairs, list):
            out[actor] = [
                (p[0], p[1] if isinstance(p[1], int) else None)
                for p in pairs
                if isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
            ]
    return out


def _save_verified(state: State, found: dict[str, list[tuple[str, int | None]]]) -> None:
    from rehydrate import safejson
    from rehydrate.store.local import place as local

    path = os.path.join(state.local, VERIFIED)
    local.ensure(os.path.dirname(path))
    data = {a: [list(p) for p in pairs[:MAX_VERIFIED]] for a, pairs in found.items()}
    fsio.write_hint(path, safejson.dumps_canonical(data) + b"\n")


def pins(state: State) -> dict[str, Public]:
    """{actor: the key this clone pinned for it}."""
    found = {a: _known(e) for a, e in load_trust(state).items()}
    return {a: k for a, k in found.items() if k is not None}


def verified_records(state: State) -> dict[str, list[tuple[str, int | None]]]:
    """The records this clone verified or signed, per actor, newest first (a cache)."""
    return _load_verified(state)


def _known(entry: object) -> Public | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("public"), str):
        return None
    text = _key_text(entry["public"])
    return Public(text, "this clone's trust file") if text is not None else None


def _pin(pub: Public) -> dict[str, str]:
    return {"public": pub.b64, "id": pub.id}


def remember(state: State, actor: str, pub: Public, verified: list[tuple[str, int | None]]) -> None:
    """Pin actor's key in this clone (written only when it changes), and remember the records just verified or
    signed."""
    trust = load_trust(state)
    if trust.get(actor) != _pin(pub):
        trust[actor] = _pin(pub)
        save_trust(state, trust)
    if verified:
        found = _load_verified(state)
        found[actor] = [*verified[::-1], *[p for p in found.get(actor, []) if p not in verified]]
        _save_verified(state, found)


# ------------------------------------------------------------------------------------------------ the check


def check(state: State, snap: Snapshot) -> list[Problem]:
    """Each keyed actor's log against its key; key changes named (module docstring). Mine: each head. Another's:
    its records read back from the end to one this clone verified where it verified it (or to the key's own record,
    or HOOK_BYTES), each verified; in `verify`, each of its heads."""
    files = committed(state)
    trust = load_trust(state)
    if not files and not trust:
        return []
    problems: list[Problem] = []
    found = _load_verified(state)
    pins_changed = found_changed = False
    for actor in sorted(set(files) | set(trust)):
        key, pinned = _key(state, actor, trust, files, problems)
        pins_changed = pins_changed or pinned
        if key is None:
            continue
        if state.session.all_heads is not None and not pinned:  # verify: the registration again (first sight did)
            problems.extend(_registered_here(state, actor, key, frozenset(h for h, _ in found.get(actor, []))))
        done = found.get(actor, [])
        newly, problem = _check_actor(state, snap, actor, key, done)
        if problem is not None:
            problems.append(problem)
        if state.session.all_heads is not None:  # verify: the archives the log was rotated from, each bound to it
            problems.extend(_archives(state, actor))
        if newly:
            found[actor] = [*newly, *[p for p in done if p not in newly]]
            found_changed = True
    if pins_changed:
        save_trust(state, trust)
    if found_changed:
        _save_verified(state, found)
    return problems


def _key(
    state: State, actor: str, trust: dict[str, Any], files: dict[str, Public | None], problems: list[Problem]
) -> tuple[Public | None, bool]:
    """The key actor's log is checked with, and whether the pins changed: the committed key (pinned on first
    sight, and pinned anew when the pinned key endorsed it), else the pinned one; changes and removals named."""
    known, filed = _known(trust.get(actor)), files.get(actor)
    rel = state.rel(pub_name(actor))
    if actor in files and filed is None:
        problems.append(Problem("key-unreadable", rel, None, f"{rel} is not a public key"))
    if known is None and filed is None:
        return None, False
    if known is None and filed is not None:  # first sight: pinned only when the actor's own log registered it
        problem = _first_sight_once(state, actor, filed)
        if problem is not None:
            problems.append(problem)
            return None, False
        if actor != state.actor and _seen_unkeyed(state, actor):
            log = state.rel("wal", f"{actor}.jsonl")
            problems.append(Problem("key-registered", rel, None, _registered_text(actor, filed, log)))
        trust[actor] = _pin(filed)
        return filed, True
    assert known is not None
    if filed is None:
        problems.append(_removed(actor, rel, known))
        return known, False
    if known.id == filed.id:
        return filed, False
    if _endorsed(state, actor, known, filed):  # the old key signed the change: pinned, and said once
        problems.append(Problem("key-rotated", rel, None, _rotated(actor, known, filed)))
        trust[actor] = _pin(filed)
        return filed, True
    problems.append(_changed(actor, rel, known, filed))
    return filed, False


def _first_sight_once(state: State, actor: str, filed: Public) -> Problem | None:
    """first_sight, its refusal remembered (keys.refused, a cache) while what it rests on is as it was: the key, the
    actor's log, wal/ (the state's starts: git creates a file anew when it changes one) and this user's key file. A
    refused key is not pinned, so without this every command would walk the actor's log again."""
    from rehydrate import safejson

    path, depends = os.path.join(state.local, REFUSED), _depends(state, actor, filed)
    cache = _load(path)
    entry = cache.get(actor)
    if isinstance(entry, list) and len(entry) == 4 and entry[0] == depends and all(isinstance(x, str) for x in entry):
        return Problem(entry[1], entry[2], None, entry[3])
    problem = first_sight(state, actor, filed)
    if problem is None and actor not in cache:
        return None
    if problem is None:
        del cache[actor]
    else:
        cache[actor] = [depends, problem.code, problem.file, problem.message]
    from rehydrate.store.local import place as local

    local.ensure(os.path.dirname(path))
    fsio.write_hint(path, safejson.dumps_canonical(cache) + b"\n")
    return problem


def _depends(state: State, actor: str, filed: Public) -> str:
    parts = [filed.id]
    for path in (state.path(f"wal/{actor}.jsonl"), state.wal_dir, key_file()):
        st = fsio.lstat(path)
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}" if st is not None else "-")
    return "|".join(parts)


def first_sight(state: State, actor: str, filed: Public) -> Problem | None:
    """Why a committed key this clone has not pinned must not be pinned, or None. A key is the actor's only when its
    own log registered it: a `key` record of that key signed by it, and every record since signed by it too (read
    back through the archives the log was rotated from); the registration names this state (or, written before
    registrations named one, binds this state's goal). The actor of this clone pins a key only when this user's key
    file holds it: anyone who can push can register a key of theirs in another's log."""
    rel = state.rel("wal", f"{actor}.jsonl")
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
            f"{state.rel(pub_name(actor))} is a key ({filed.id}) that {rel} registered (record seq "
            f"{found.get('seq')}), and {key_file()} does not hold it: this clone does not take it for {actor}'s own. "
            f"If {actor} made it elsewhere, point REHYDRATE_KEY_FILE at it; if not, someone else registered it: "
            "remove the key and the records signed by it (git log -p -- state/keys state/wal)"
        )
        return Problem("key-not-mine", state.rel(pub_name(actor)), None, text)
    return None


def _registered_here(state: State, actor: str, key: Public, known: frozenset[str]) -> list[Problem]:
    """verify's look at a pinned key's registration: still in the actor's log, and for this state."""
    found = registration(state, actor, key, known)
    if isinstance(found, Problem):
        return [] if found.code == "forged" else [found]  # (a forged last record: _check_actor names it)
    elsewhere = other_state(state, found) if found is not None else None
    if elsewhere is None:
        return []
    rel = state.rel("wal", f"{actor}.jsonl")
    return [Problem("other-state", rel, None, f"{rel} belongs to another state: {elsewhere}")]


def _seen_unkeyed(state: State, actor: str) -> bool:
    """Whether this worktree read actor's log before its key came (store/local/teamseen.py remembers each
    teammate's)."""
    from rehydrate.store.local import teamseen

    return actor in teamseen.load(state)


def _registered_text(actor: str, pub: Public, rel: str) -> str:
    return (
        f"{actor} now signs with key {pub.id}, registered in {actor}'s log and pinned; this clone knew {actor} without "
        f"a key. Anyone who can push could have registered it in {actor}'s name: if {actor} did not run `rehydrate key "
        f"init`, {rel} holds records {actor} did not write (git log -p -- {rel})"
    )


def _held(pub: Public) -> bool:
    try:
        signer = load_private()
    except RehydrateError:
        return False
    return signer is not None and _b64(signer.public) == pub.b64


def registration(state: State, actor: str, pub: Public, known: frozenset[str] = frozenset()) -> Record | Problem | None:
    """The `key` record that registered pub in actor's log, each record after it verified on the way back from the
    log's end (through each archive a rotate record names); else the problem: the last record not signed by pub
    (`forged`), or a record before it that is not, short of any registration of pub (`key-unregistered`). None when
    the log is damaged on the way, or an archive is gone (the chain check and verify name them)."""
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal import record as wal

    first = True
    where = state.rel("wal", f"{actor}.jsonl")
    try:
        for where, offset, raw in back(state, actor):
            rec = walback.decode(raw, offset)
            why = verify(rec, pub) if rec["h"] not in known else None  # (known: verified here before)
            if why is not None and first:
                return _forged(actor, where, rec, pub, why, True)
            if why is not None:
                return _unregistered(state, actor, pub, where, rec)
            first = False
            data = rec["data"]
            if rec["op"] == "key" and data.get("id") == pub.id and data.get("public") == pub.b64:
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
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal import record as wal

    path, where, skip = state.path(f"wal/{actor}.jsonl"), state.rel("wal", f"{actor}.jsonl"), b""
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
        name = oldest["data"].get("archive") if oldest is not None and oldest["op"] == "rotate" else None
        if oldest is None or not isinstance(name, str) or wal.archive_error(oldest) is not None:
            return
        if fsio.lstat(state.path(name)) is None:
            raise ArchiveGone(name)
        path, where, skip = state.path(name), state.rel(name), str(oldest["h"]).encode()


def binds_state(state: State, pub: Public) -> bool:
    """Whether this actor's registration of pub names its state (`key init` registers it again where one written
    before registrations named their state is the newest: from then on a copy of the log elsewhere is told apart)."""
    found = registration(state, state.actor, pub)
    return not isinstance(found, dict) or isinstance(found["data"].get("state"), str)


def _unregistered(state: State, actor: str, pub: Public, where: str, rec: Record | None) -> Problem:
    at = f"{where} holds a record (seq {rec.get('seq')}, {rec.get('op')}) not signed by it" if rec else "none is there"
    text = (
        f"{state.rel(pub_name(actor))} is a key ({pub.id}) that {actor}'s log never registered: no `key` record of it, "
        f"signed by it, comes before the records it signed ({at}). Not pinned: {actor}'s records are not taken as "
        f"signed. Whoever committed it (git log -p -- {state.rel(KEYS_DIR)}) may have signed records in {actor}'s "
        f"name; `rehydrate key init` as {actor} registers a key of {actor}'s own"
    )
    return Problem("key-unregistered", state.rel(pub_name(actor)), None, text)


def starts(state: State) -> dict[str, tuple[str, str]]:
    """{h: (ts, goal hash)} of each `init` record this state starts from: each log's first record, followed back
    through the archives its rotate records name. One in a state made by `init`; a state that holds none (its first
    log gone) binds nothing."""
    from rehydrate.store.wal import record as wal

    out: dict[str, tuple[str, str]] = {}
    for actor in state.actor_names():
        path, seen = state.path(f"wal/{actor}.jsonl"), 0
        try:
            rec: Record | None = wal.first_record(path, state.rel("wal", f"{actor}.jsonl"))
            while rec is not None and rec["op"] == "rotate" and seen < MAX_ARCHIVES:
                name, seen = rec["data"].get("archive"), seen + 1
                if wal.archive_error(rec) is not None or not isinstance(name, str):
                    break
                archive = state.path(name)
                rec = wal.first_record(archive, state.rel(name)) if fsio.lstat(archive) is not None else None
        except (RehydrateError, OSError):
            continue
        if rec is not None and rec["op"] == "init":
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


def _endorsed(state: State, actor: str, known: Public, filed: Public) -> bool:
    """Whether the actor's log holds the `key` record of filed, signed by it and endorsed by the key this clone
    pinned (read back from the end, at most HOOK_BYTES)."""
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal import record as wal
    from rehydrate.store.wal.since import HOOK_BYTES

    try:
        for _, raw in walback.Back(state.path(f"wal/{actor}.jsonl"), HOOK_BYTES).lines():
            if b'"op":"key"' not in raw:
                continue
            rec = walback.decode(raw, 0)
            data = rec["data"]
            if rec["op"] != "key" or data.get("id") != filed.id:
                continue
            endorsed = data.get("endorsed")
            if verify(rec, filed) is not None or not isinstance(endorsed, dict) or endorsed.get("key") != known.id:
                return False
            raw_sig = _unb64(str(endorsed.get("ed25519")), 64)
            if raw_sig is None:
                return False
            try:
                _ed25519().from_public_bytes(known.raw).verify(raw_sig, endorsement(actor, filed.raw))
            except Exception:  # InvalidSignature
                return False
            return True
    except (wal.BadRecord, RehydrateError):
        return False
    return False


def _rotated(actor: str, known: Public, filed: Public) -> str:
    return f"{actor} changed keys from {known.id} to {filed.id}, and {known.id} signed the change: {filed.id} pinned"


def _changed(actor: str, rel: str, known: Public, filed: Public) -> Problem:
    text = (
        f"{actor}'s public key is now {filed.id}; this clone knew {known.id}. {actor}'s records are checked with the "
        f"new key: if {actor} did not make a new key (`rehydrate key init --new` in {actor}'s clone), treat them as "
        f"forged; if the change was meant, `rehydrate key trust {actor}`"
    )
    return Problem("key-changed", rel, None, text)


def _removed(actor: str, rel: str, known: Public) -> Problem:
    text = (
        f"{rel} is gone; this clone knew {actor}'s key {known.id}, and still checks {actor}'s log with it (a `key "
        f"init` stopped before it wrote the file: run it again as {actor}; {actor} stopped signing on purpose: "
        f"`rehydrate key trust {actor}` forgets it here)"
    )
    return Problem("key-removed", rel, None, text)


def _forged(actor: str, where: str, rec: Record, key: Public, why: str, last: bool) -> Problem:
    which = "last record" if last else "record"
    return Problem(
        "forged",
        where,
        None,
        f"{actor}'s {which} (seq {rec.get('seq')}, {rec.get('op')}) is not signed by {actor}'s key {key.id}: {why}. "
        "Its log was written or changed without the key (a record added, edited and re-sealed, or the log replaced)",
    )


def _check_actor(
    state: State, snap: Snapshot, actor: str, key: Public, done: list[tuple[str, int | None]]
) -> tuple[list[tuple[str, int | None]], Problem | None]:
    """(the records newly verified, newest first; the forged one found, if any)."""
    hashes = {h for h, _ in done}
    rel = state.rel("wal", f"{actor}.jsonl")
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
            why = verify(head, key)
            if why is not None:
                return newly, _forged(actor, rel, head, key, why, True)
            newly.append((head["h"], None))
        return newly, None
    return _walk(state, actor, key, done)


def _walk(
    state: State, actor: str, key: Public, done: list[tuple[str, int | None]]
) -> tuple[list[tuple[str, int | None]], Problem | None]:
    """Another actor's log read back from its end: each record verified, to one this clone verified at the same
    place (a repeated line elsewhere is not that place), to the record that registered the key, or HOOK_BYTES."""
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal import record as wal
    from rehydrate.store.wal.since import HOOK_BYTES

    path = state.path(f"wal/{actor}.jsonl")
    rel = state.rel("wal", f"{actor}.jsonl")
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
                why = verify(rec, key)
                if why is not None:
                    return newly, _forged(actor, rel, rec, key, why, first)
                newly.append((rec["h"], offset))
            first = False
            if rec["op"] == "key" and isinstance(rec["data"], dict) and rec["data"].get("id") == key.id:
                break  # the key took over here: the records before it were not signed by it
    except (wal.BadRecord, RehydrateError):
        pass  # damage is the chain's to name (verify reads every log whole)
    return newly, None


MAX_ARCHIVES = 10_000  # rotations followed back from a log (a loop of planted names stops here)


def _archives(state: State, actor: str) -> list[Problem]:
    """A keyed log that starts with a rotate record: the archive it names must be whole (its chain intact) and end in
    that very record (the archive holds the rotate record as its last line). The rotate record's signature then
    vouches for the archive, and so on back through each archive that starts with a rotate. Read in `verify` only."""
    from rehydrate.store.wal import record as wal

    path, rel = state.path(f"wal/{actor}.jsonl"), state.rel("wal", f"{actor}.jsonl")
    seen: set[str] = set()
    try:
        rec = wal.first_record(path, rel) if fsio.lstat(path) is not None else None
    except RehydrateError:
        return []  # the chain check names a damaged first line
    while rec is not None and rec["op"] == "rotate" and len(seen) < MAX_ARCHIVES:
        name = rec["data"].get("archive")
        if wal.archive_error(rec) is not None or not isinstance(name, str) or name in seen:
            return []  # an unsafe or repeated name: the chain check names it (unsafe-path)
        seen.add(name)
        archive, where = state.path(name), state.rel(name)
        if fsio.lstat(archive) is None:
            text = f"{where}, the archive {rel}'s rotate record (seq {rec.get('seq')}) names, is gone"
            return [Problem("archive-missing", where, None, text)]
        damage = [p for p in wal.scan_log(archive, where) if not p.info and p.code != "duplicate-record"]
        try:
            last = wal.read_tail(archive, 1).records
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
            rec = wal.first_record(archive, where)
        except RehydrateError:
            return []
    return []


def signed(state: State, records: list[tuple[str, int | None]]) -> None:
    """The records this actor just signed (h, byte offset), oldest first: remembered as verified in this clone."""
    signer = state.signer
    remember(state, state.actor, Public.of(signer.public, "the key file"), records)


def trust_actor(state: State, actor: str) -> Public | None:
    """`rehydrate key trust ACTOR`: pin the committed key as this clone's; with none committed, forget the pinned one
    (this clone no longer expects ACTOR's records to be signed). None when it forgot."""
    pub = committed(state).get(actor)
    if pub is not None:
        remember(state, actor, pub, [])
        return pub
    trust = load_trust(state)
    if actor not in trust:
        raise UsageError(f"no public key for {actor} in {state.rel(KEYS_DIR)}/, and none pinned in this clone")
    del trust[actor]
    save_trust(state, trust)
    return None
