"""store/keys/check.py: each keyed actor's log checked against its key; a committed key replaced or removed behind
this clone's pin is named."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store.keys.keyed import keyed

from rehydrate.store import Problem
from rehydrate.store.keys import check, sign
from rehydrate.store.state import State


def _check(root: str) -> list[Problem]:
    state = State.open(root)
    with state.reading() as snap:
        return check.check(state, snap)


def test_a_signed_log_holds_and_a_key_changed_or_removed_is_named(
    state: State, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _check(state.root) == []  # no key anywhere: nothing to check
    keyed(state, tmp_path, monkeypatch)
    State.open(state.root).checkpoint(done="signed", next="again")
    assert [p.code for p in _check(state.root)] == []
    pub = Path(state.root, sign.pub_name("agent"))
    kept = pub.read_bytes()
    other = sign.create_private(str(tmp_path / "other.key"))
    pub.write_text(sign.Public.of(other.public, "x").text("agent"))
    found = _check(state.root)
    assert [(p.code, p.file) for p in found] == [("key-changed", "state/keys/agent.pub")], found
    pub.unlink()
    assert [(p.code, p.file) for p in _check(state.root)] == [("key-removed", "state/keys/agent.pub")]
    pub.write_bytes(kept)
    assert _check(state.root) == []
