"""store/write/command.py: a write appends its record under the lock and redoes the views from it."""

from __future__ import annotations

from pathlib import Path

from rehydrate.store.state import State
from rehydrate.store.write.command import write


def test_a_checkpoint_appends_one_record_and_writes_its_view(state: State) -> None:
    before = Path(state.wal_path).read_bytes()
    out = write(state, "checkpoint", {"done": "parser", "next": "wire the CLI", "goal": None})
    assert out.record is not None and out.record["op"] == "checkpoint" and out.problems == []
    assert out.record["data"]["goal"] == "Ship the parser"  # the goal carried from the last checkpoint
    after = Path(state.wal_path).read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    assert "wire the CLI" in Path(state.root, "99_next.md").read_text()


def test_an_invariant_is_minted_its_id_and_line(state: State) -> None:
    out = write(state, "invariant", {"text": "Keep the parser pure", "because": "tests"})
    assert out.record is not None
    data = out.record["data"]
    assert data["id"].startswith("D-") and data["line"].startswith(f"- {data['id']} ")
    assert data["line"] in Path(state.root, "10_invariants.md").read_text().splitlines()
