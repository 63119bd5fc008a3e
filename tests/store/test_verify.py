"""store/verify.py: the full check names what is wrong with the log, the latches and the views, whatever the cache
says; with repair, what a hand added to 10_invariants.md is adopted."""

from __future__ import annotations

from pathlib import Path

from rehydrate.fs import lock as fslock
from rehydrate.store.state import State
from rehydrate.store.verify import verify


def _verify(state: State, repair: bool = False) -> list[tuple[str, str]]:
    with fslock.locked(state.root):
        return [(p.code, p.file) for p in verify(state, repair).problems]


def test_a_whole_state_verifies_and_damage_is_named_in_its_file(state: State) -> None:
    assert _verify(State.open(state.root)) == []
    inv = Path(state.root, "10_invariants.md")
    inv.write_text(inv.read_text().replace("Write the WAL before any view", "Write the view first"))
    assert ("latch-changed", "state/10_invariants.md") in _verify(State.open(state.root))


def test_a_line_added_by_hand_is_named_then_adopted_with_repair(state: State) -> None:
    inv = Path(state.root, "10_invariants.md")
    inv.write_text(inv.read_text() + "- a line added by hand\n")
    assert _verify(State.open(state.root)) == [("unrecorded-line", "state/10_invariants.md")]
    assert _verify(State.open(state.root), repair=True) == []
    assert _verify(State.open(state.root)) == []
