"""store/keys/sign.py: a private key made, loaded and used to sign a record; a public key parsed from its file; a
signature verified, and each way it fails named."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.store.keys import sign


def test_a_signed_record_verifies_and_any_change_is_named(tmp_path: Path) -> None:
    signer = sign.create_private(str(tmp_path / "cfg" / "key"))
    assert (tmp_path / "cfg" / "key").stat().st_mode & 0o777 == 0o600
    with pytest.raises(UsageError, match="exists already"):
        sign.create_private(str(tmp_path / "cfg" / "key"))
    loaded = sign.load_private(str(tmp_path / "cfg" / "key"))
    assert loaded is not None and loaded.public == signer.public and loaded.id == sign.key_id(signer.public)
    pub = sign.parse_pub(sign.Public.of(signer.public, "x").text("agent").encode(), "keys/agent.pub")
    assert pub is not None and pub.id == signer.id and pub.source == "keys/agent.pub"
    rec = {"seq": 1, "op": "init", "data": {"goal": "Ship"}, "h": "ignored"}
    rec["sig"] = signer.sign(rec)
    assert sign.verify(rec, pub) is None
    assert sign.verify({**rec, "h": "another"}, pub) is None  # `h` is not signed
    assert sign.verify({**rec, "seq": 2}, pub) == (
        "its signature does not verify (the record was changed after it was signed)"
    )
    assert sign.verify({k: v for k, v in rec.items() if k != "sig"}, pub) == "it carries no signature"
    other = sign.create_private(str(tmp_path / "other"))
    assert sign.verify({**rec, "sig": other.sign(rec)}, pub) == f"it is signed by another key ({other.id})"
    assert sign.verify({**rec, "sig": {**rec["sig"], "ed25519": "AAAA"}}, pub) == "its signature is not a signature"


def test_keys_are_read_only_in_their_one_canonical_spelling(tmp_path: Path) -> None:
    text = sign.b64(bytes(range(32)))
    assert sign.key_text(text) == text and sign.unb64(text, 32) == bytes(range(32))
    assert sign.key_text(text[:-1]) is None and sign.unb64(text, 31) is None
    assert sign.parse_pub(b"ssh-ed25519 " + text.encode(), "x") is None
    (tmp_path / "key").write_text("not a key\n")
    with pytest.raises(RehydrateError, match="is not a rehydrate signing key"):
        sign.load_private(str(tmp_path / "key"))
    assert sign.load_private(str(tmp_path / "missing")) is None
