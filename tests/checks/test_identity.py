"""identity (checks/identity.py): a missing goal with no checkpoint naming a next step asks for the task."""

from __future__ import annotations

from rehydrate.checks import Context, Finding, ledger
from rehydrate.checks.identity import IdentityCheck
from rehydrate.store.state import State
from rehydrate.store.views import render_next
from rehydrate.store.wal.since import Since


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
