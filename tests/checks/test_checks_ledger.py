"""The ledger's verdict: `recovered` only when every check that applies is ok; a skipped look degrades."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate import brief, checks
from rehydrate.checks import Context, Finding, ledger
from rehydrate.checks.cursors import CursorsCheck
from rehydrate.checks.identity import IdentityCheck
from rehydrate.checks.state import _action
from rehydrate.store.state import State
from rehydrate.store.views import render_next
from rehydrate.store.wal.since import Since


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


def test_no_pipeline_registered_is_nothing_to_look_at_and_says_where_it_looked(repo: Path, state: State) -> None:
    found = CursorsCheck().run(Context(state, state.reconcile()))
    assert [(f.status, f.message) for f in found] == [("n/a", "no pipeline registered (state/pipelines.json absent)")]
    assert checks.confidence(found) == "recovered"
    assert CursorsCheck().run(Context(None, None, error="no state")) == []  # identity reports a state that did not load


def test_a_missing_goal_without_a_checkpoints_next_asks_for_the_task(state: State) -> None:
    def identity(views: dict[str, str | None]) -> Finding:
        [found] = IdentityCheck().run(Context(state, state.reconcile(), views=views))
        return found

    asked = identity({"00_goal.md": "# Goal\n\n"})
    assert (asked.status, asked.ask) == ("degraded", ledger.ASK_TASK)
    summed = ledger.summarize([asked], checkpoint_next=None, goal_present=False)
    assert (summed.next, summed.ask) == (None, ledger.ASK_TASK)
    nxt = render_next(4, "2026-11-29T22:04:26.123Z", None, "", "", "binding powers")
    with_next = identity({"00_goal.md": "", "99_next.md": nxt})
    assert (with_next.status, with_next.ask) == ("degraded", None)
    since = Since()
    since.next = "binding powers"
    [from_wal] = IdentityCheck().run(Context(state, state.reconcile(), views={}, since=since))
    assert from_wal.ask is None
    assert identity({"00_goal.md": "# Goal\nShip the parser\n"}).ask is None
