"""A state whose actor `agent` signs its records: shared by the tests of store/keys/."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate.store.keys import sign
from rehydrate.store.state import State


def keyed(state: State, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> sign.Signer:
    """Register a new key for the state's actor (its private half in tmp_path, named by REHYDRATE_KEY_FILE)."""
    key_file = tmp_path / "agent.key"
    monkeypatch.setenv("REHYDRATE_KEY_FILE", str(key_file))
    signer = sign.create_private(str(key_file))
    State.open(state.root).register_key(signer)
    return signer
