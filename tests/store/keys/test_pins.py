"""store/keys/pins.py: this clone's pins of the actors' keys, and the records it verified, in its own folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store.keys.keyed import keyed

from rehydrate.errors import UsageError
from rehydrate.store.keys import pins, sign
from rehydrate.store.state import State


def test_a_registered_key_is_pinned_with_the_records_it_signed(
    state: State, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert pins.pins(state) == {} and pins.verified_records(state) == {}
    signer = keyed(state, tmp_path, monkeypatch)
    me = State.open(state.root)
    pinned = pins.pins(me)
    assert list(pinned) == ["agent"] and pinned["agent"].id == signer.id
    assert pins.load_trust(me) == {"agent": pins.pin_entry(sign.Public.of(signer.public, "x"))}
    assert Path(pins.trust_path(me)).stat().st_mode & 0o777 == 0o600
    key_record = [h for h, _ in pins.verified_records(me)["agent"]]
    assert len(key_record) == 1
    me.checkpoint(done="signed", next="again")
    assert len(pins.verified_records(State.open(state.root))["agent"]) == 2  # newest first, each remembered


def test_trust_pins_the_committed_key_or_forgets_the_pinned_one(
    state: State, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError, match="no public key for bob"):
        pins.trust_actor(state, "bob")
    signer = keyed(state, tmp_path, monkeypatch)
    me = State.open(state.root)
    pins.save_trust(me, {})
    got = pins.trust_actor(me, "agent")
    assert got is not None and got.id == signer.id and pins.pins(me)["agent"].id == signer.id
    Path(me.path(sign.pub_name("agent"))).unlink()
    assert pins.trust_actor(me, "agent") is None and pins.pins(me) == {}


def test_an_odd_trust_file_reads_as_no_pins(state: State) -> None:
    Path(pins.trust_path(state)).parent.mkdir(parents=True, exist_ok=True)
    for odd in ("[1]", "{torn", '{"agent": {"public": "not a key"}, "bob": 5}'):
        Path(pins.trust_path(state)).write_text(odd)
        assert pins.load_trust(state) == {} and pins.pins(state) == {}
    assert pins.pin_of({"public": sign.b64(bytes(32))}) is not None
