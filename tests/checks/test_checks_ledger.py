"""The ledger's verdict: `recovered` only when every check that applies is ok; a skipped look degrades."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate import brief, checks
from rehydrate.checks import Context, Finding
from rehydrate.checks.state import _action
from rehydrate.store.state import State


def test_a_skipped_check_degrades_the_confidence() -> None:
    ok = Finding("state", "ok", "fine")
    assert checks.confidence([ok]) == "recovered"
    assert checks.confidence([ok, Finding("cursors", "skipped", "could not look")]) == "degraded (cursors)"
    assert checks.confidence([Finding("a", "failed", "x"), Finding("b", "degraded", "y")]) == "degraded (a, b)"


def test_a_pipeline_the_brief_could_not_look_at_degrades_the_brief(repo: Path, state: State) -> None:
    (repo / "state" / "pipelines.json").write_text(
        '{"pass B": {"output": "/etc/out.jsonl", "progress": "/etc/progress.json", "key": "index"}}'
    )
    result = brief.resume(state)
    assert result.confidence == "degraded (cursors)", result.text


def test_each_new_problem_code_has_its_own_next_action() -> None:
    generic = _action("something-else", "state/x")
    for code in ("merge-conflict", "rolled-back", "unsafe-path"):
        action = _action(code, "state/wal/agent.jsonl")
        assert action != generic and "state/wal/agent.jsonl" in action
    assert "git merge --abort" in _action("merge-conflict", "state/10_invariants.md")


def test_a_checks_context_reads_the_state_and_cannot_write_it(state: State) -> None:
    context = Context(state, state.reconcile(), views={"00_goal.md": "# Goal"})
    assert (context.state.root, context.state.actor) == (state.root, state.actor)  # type: ignore[union-attr]
    assert not hasattr(context.state, "checkpoint")
    with pytest.raises(AttributeError):
        context.state.root = "elsewhere"  # type: ignore[union-attr, misc]
