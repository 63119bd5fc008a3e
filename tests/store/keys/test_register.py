"""store/keys/register.py: an actor signs with the key its own log registered, never with another, and a key
committed in its name that its log never registered is not its key."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store.keys.keyed import keyed

from rehydrate.store.keys import register, sign
from rehydrate.store.state import State


def test_an_actor_signs_with_its_registered_key_and_only_with_it(
    state: State, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert register.signer_for(State.open(state.root)) is None  # no key: nothing is signed
    signer = keyed(state, tmp_path, monkeypatch)
    me = State.open(state.root)
    found = register.signer_for(me)
    assert found is not None and found.id == signer.id
    reg = register.registration(me, "agent", sign.Public.of(signer.public, "x"))
    assert isinstance(reg, dict) and reg["op"] == "key" and reg["data"]["state"] == register.start_of(me)
    monkeypatch.setenv("REHYDRATE_KEY_FILE", str(tmp_path / "another.key"))
    sign.create_private(str(tmp_path / "another.key"))
    with pytest.raises(sign.KeyMissing, match="holds another key: nothing was written"):
        register.signer_for(State.open(state.root))


def test_a_key_that_did_not_sign_the_actors_log_is_not_its_key(state: State, tmp_path: Path) -> None:
    planted = sign.create_private(str(tmp_path / "planted.key"))
    pub = sign.Public.of(planted.public, "keys/agent.pub")
    got = register.registration(State.open(state.root), "agent", pub)
    assert not isinstance(got, dict) and got is not None and got.code == "forged"
    got = register.first_sight(State.open(state.root), "agent", pub)
    assert got is not None and got.code == "forged"
    assert got.message.startswith(
        f"agent's last record (seq 4, checkpoint) is not signed by agent's key {pub.id}: it carries no signature."
    )
