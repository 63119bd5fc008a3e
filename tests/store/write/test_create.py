"""store/write/create.py: `init` creates the state folder, its log's first record and its views; the goal is
write-once."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines
from rehydrate.store.write.create import create


def test_init_writes_the_first_record_and_the_views_from_it(repo: Path) -> None:
    state, out = create(State, str(repo / "state"), "Ship the parser", "all tests pass", None)
    assert out.record is not None and out.record["op"] == "init" and out.record["seq"] == 1
    assert state.actor == "agent" and Path(state.wal_path) == repo / "state" / "wal" / "agent.jsonl"
    assert [rec["op"] for rec in wallines.records(state.wal_path)] == ["init"]
    for name in ("00_goal.md", "10_invariants.md", "99_next.md", ".gitattributes", ".gitignore"):
        assert (repo / "state" / name).is_file(), name
    assert "Ship the parser" in (repo / "state" / "00_goal.md").read_text()


def test_an_empty_goal_is_refused_and_a_goal_never_replaced(repo: Path) -> None:
    with pytest.raises(UsageError, match="the goal is empty"):
        create(State, str(repo / "state"), " \n", None, None)
    assert not (repo / "state").exists()
    create(State, str(repo / "state"), "Ship the parser", None, None)
    goal = (repo / "state" / "00_goal.md").read_bytes()
    with pytest.raises(RehydrateError, match=r"state/00_goal\.md exists: the goal is write-once"):
        create(State, str(repo / "state"), "Another goal", None, None)
    assert (repo / "state" / "00_goal.md").read_bytes() == goal
