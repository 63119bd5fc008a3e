"""store/local/teamseen.py: a teammate's log cut back upstream is named until this actor's checkpoint acknowledges
it; a log that only grew is not."""

from __future__ import annotations

from pathlib import Path

from rehydrate.store.local import teamseen
from rehydrate.store.state import State


def test_a_teammates_log_cut_back_is_named_until_acknowledged(state: State) -> None:
    State.open(state.root, "bob").checkpoint(done="b1", next="b2")
    State.open(state.root, "bob").checkpoint(done="b2", next="b3")
    assert teamseen.check(State.open(state.root)) == []  # first sight: remembered
    assert "bob" in teamseen.load(State.open(state.root))  # (bob's own commands remember agent's log here too)
    State.open(state.root, "bob").checkpoint(done="b3", next="b4")
    assert teamseen.check(State.open(state.root)) == []  # it grew
    log = Path(state.root, "wal", "bob.jsonl")
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))
    found = teamseen.check(State.open(state.root))
    assert [(p.code, p.file) for p in found] == [("rolled-back", "state/wal/bob.jsonl")]
    assert found[0].message.startswith("bob's log was rolled back upstream: state/wal/bob.jsonl no longer holds record")
    assert [p.code for p in teamseen.check(State.open(state.root))] == ["rolled-back"]  # every command says it
    assert teamseen.acknowledge(State.open(state.root)) == ["bob"]
    assert teamseen.check(State.open(state.root)) == []
    assert teamseen.acknowledge(State.open(state.root)) == []
