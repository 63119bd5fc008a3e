"""state (checks/state.py): each problem the recognize step names has its own next safe action."""

from __future__ import annotations

from rehydrate.checks.state import _action


def test_each_new_problem_code_has_its_own_next_action() -> None:
    generic = _action("something-else", "state/x")
    for code in ("merge-conflict", "rolled-back", "unsafe-path"):
        action = _action(code, "state/wal/agent.jsonl")
        assert action != generic and "state/wal/agent.jsonl" in action
    assert "git merge --abort" in _action("merge-conflict", "state/10_invariants.md")
