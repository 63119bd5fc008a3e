"""The key files and the signature: this user's private key (outside every repository), the committed public keys
(state/keys/<actor>.pub), and what a signature covers.

The private key (Ed25519) is a file outside the repository: `$REHYDRATE_KEY_FILE`, else
`$XDG_CONFIG_HOME/rehydrate/key`, else `~/.config/rehydrate/key` (mode 0600), one line of base64 (its 32-byte seed)
after a comment. A public key file is one line, `rehydrate-ed25519 <base64> <actor>`. A signature is `sig = {"key":
<key id>, "ed25519": <base64>}` over `SIG_DOMAIN` + the canonical record less `h` and `sig`; the key id is the first
16 hex digits of the sha256 of the public key's base64 text. A key's text is compared as text and decoded only to
verify: a read that verifies nothing loads neither cryptography nor binascii.
"""

from __future__ import annotations

import os
import stat

from rehydrate import safejson
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, layout
from rehydrate.store.wal import digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


KEYS_DIR = layout.KEYS_DIR


SIG_DOMAIN = b"rehydrate-record-sig-v1\n"


ENDORSE_DOMAIN = b"rehydrate-key-endorse-v1\n"


PUB_PREFIX = "rehydrate-ed25519"


PRIVATE_HEADER = "# rehydrate signing key (ed25519 seed, base64): keep it out of every repository\n"


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
    return key_id_of(b64(public))


def key_id_of(text: str) -> str:
    return digest.sha256(text.encode("ascii"))[:16]


B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def key_text(text: str) -> str | None:
    """The base64 text of a 32-byte key as written (43 characters and "="), checked without decoding it (binascii
    is not loaded on a read that verifies nothing); None for anything else."""
    ok = len(text) == 44 and text[43] == "=" and all(c in B64 for c in text[:43]) and text[42] in "AEIMQUYcgkosw048"
    return text if ok else None


def b64(data: bytes) -> str:
    # binascii, not base64 (which loads re), and here: a read that verifies nothing loads no codec (the hook path)
    import binascii

    return binascii.b2a_base64(data, newline=False).decode("ascii")


def unb64(text: str, size: int) -> bytes | None:
    """Standard base64 of exactly size bytes, in its one canonical spelling, else None."""
    import binascii  # here, not at the top: only a verification decodes (the hook path compares keys as text)

    try:
        raw = binascii.a2b_base64(text.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None
    return raw if len(raw) == size and b64(raw) == text else None


def ed25519_classes() -> Any:
    """cryptography's Ed25519 key classes: its compiled binding when it offers them (a third of the import time of the
    public module, which loads typing, enum and re), else the public module (the same objects)."""
    try:  # imported here: only a signature made or verified loads cryptography (the hook path stays light)
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


class Signer:
    """A loaded private key: its public bytes, its id, and sign(record) -> the record's `sig` member."""

    def __init__(self, seed: bytes, path: str) -> None:
        self._key = ed25519_classes().from_private_bytes(seed)
        self.public = self._key.public_key().public_bytes_raw()
        self.id = key_id(self.public)
        self.path = path

    def sign(self, rec: Record) -> dict[str, str]:
        return {"ed25519": b64(self._key.sign(message(rec))), "key": self.id}

    def endorse(self, actor: str, new: Signer) -> dict[str, str]:
        """This (old) key's signature over the actor's new public key: the change, vouched for by the key it ends."""
        return {"ed25519": b64(self._key.sign(endorsement(actor, new.public))), "key": self.id}


def endorsement(actor: str, public: bytes) -> bytes:
    return ENDORSE_DOMAIN + actor.encode() + b"\n" + b64(public).encode()


def public_text(signer: Signer) -> str:
    return b64(signer.public)


def message(rec: Record) -> bytes:
    """What a signature covers: the record less `h` and `sig`, canonical."""
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
    seed = unb64(lines[0].strip(), 32) if len(lines) == 1 else None
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
        os.write(fd, (PRIVATE_HEADER + b64(seed) + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return Signer(seed, path)


class Public:
    """A public key by its base64 text (decoded only to verify a signature), its id and where it was read."""

    def __init__(self, b64: str, source: str) -> None:
        self.b64 = b64
        self.id = key_id_of(b64)
        self.source = source

    @classmethod
    def of(cls, raw: bytes, source: str) -> Public:
        return cls(b64(raw), source)

    @property
    def raw(self) -> bytes:
        found = unb64(self.b64, 32)
        if found is None:  # pragma: no cover - key_text let only a 32-byte key's text in
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
    text = key_text(parts[1])
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


def verify(rec: Record, pub: Public) -> str | None:
    """None when the record carries a valid signature of pub; else why not."""
    sig = rec.get("sig")
    if not isinstance(sig, dict):
        return "it carries no signature"
    if sig.get("key") != pub.id:
        return f"it is signed by another key ({str(sig.get('key'))[:16]})"
    raw = unb64(str(sig.get("ed25519")), 64)
    if raw is None:
        return "its signature is not a signature"
    try:
        ed25519_classes().from_public_bytes(pub.raw).verify(raw, message(rec))
    except Exception:  # cryptography's InvalidSignature (its module is not imported unless one is raised)
        return "its signature does not verify (the record was changed after it was signed)"
    return None
