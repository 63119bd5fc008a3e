"""A key this clone refuses to pin (store/keys/refused.py) is not walked again by every command: the refusal is
remembered while the key, the actor's log, wal/ and this user's key file are as they were; a change to any of them
and the log is read again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rehydrate.store.keys import pins, sign
from rehydrate.store.state import State


def _project(root: Path, key_file: Path) -> State:
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    State.init(str(root / "state"), "Ship the parser", None)
    State.open(str(root / "state"), "bob").checkpoint(done="a", next="b")
    bob = State.open(str(root / "state"), "bob")
    signer = sign.load_private(str(key_file)) or sign.create_private(str(key_file))
    bob.register_key(signer)
    State.open(str(root / "state"), "bob").checkpoint(done="b", next="c")
    return State.open(str(root / "state"), "agent")


def _codes(state: State) -> list[str]:
    with state.reading() as snap:
        return [p.code for p in snap.problems]


def test_a_refused_key_is_not_walked_again_until_the_log_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "bob.key"
    monkeypatch.setenv("REHYDRATE_KEY_FILE", str(key_file))
    _project(tmp_path / "x", key_file)
    me = _project(tmp_path / "y", key_file)
    x_log, y_log = tmp_path / "x/state/wal/bob.jsonl", tmp_path / "y/state/wal/bob.jsonl"
    shutil.copyfile(x_log, y_log)  # bob's log from project X over his log in Y
    Path(pins.trust_path(me)).unlink()  # as a fresh clone of Y finds it: no key pinned yet
    calls: list[str] = []
    real = sign.verify

    def counting(rec: dict, pub: sign.Public) -> str | None:
        calls.append(rec["h"])
        return real(rec, pub)

    monkeypatch.setattr(sign, "verify", counting)
    assert "other-state" in _codes(me)
    walked = len(calls)
    assert walked > 0
    assert "other-state" in _codes(State.open(str(tmp_path / "y/state"), "agent"))  # a new command, the same verdict
    assert len(calls) == walked  # not walked again
    with y_log.open("ab") as f:  # the log changed: read again
        f.write(b"")
    y_log.touch()
    assert "other-state" in _codes(State.open(str(tmp_path / "y/state"), "agent"))
    assert len(calls) > walked
