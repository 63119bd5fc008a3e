"""Fitting the brief to its budget (brief/fit.py) does not compose the rejected approaches again for every knob it
turns. Counted, not timed (bench/brief_scale.py measures the time); the inputs are test_plan.py's."""

from __future__ import annotations

import pytest
from tests.brief.test_brief_budget import TOKEN, check_promises
from tests.brief.test_plan import Count, brief_input, entries

from rehydrate import brief
from rehydrate.brief import plan
from rehydrate.store import layout


@pytest.fixture(autouse=True)
def _pinned_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brief, "new_token", lambda: TOKEN, raising=False)


def test_fitting_3000_rejected_approaches_composes_them_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inp = brief_input(entries("R", 3000))
    shows = Count(plan._Entry.show)

    def show(self: plan._Entry, cap: int | None) -> tuple[str, bool]:
        return shows(self, cap)  # type: ignore[no-any-return]

    ids = Count(layout.entry_id)
    with monkeypatch.context() as m:
        m.setattr(plan._Entry, "show", show)
        m.setattr(layout, "entry_id", ids)
        text = brief.render(inp, brief.DEFAULT_BUDGET).text
    kept = brief.DEFAULT_BUDGET // 12  # the newest rejected approaches whose ids could fit (plan._invariants)
    assert ids.calls <= kept, ids.calls  # the others are found by one scan, never matched one by one
    # each rejected approach is shown once per cap the fitting tries (13 here, as it searches for the cap that fits),
    # not once per composition of the brief (63 here, as the old code did): a binary search takes at most log2(1200)
    # steps for each of its few searches of the cap
    assert shows.calls <= 16 * kept, shows.calls
    check_promises(inp, text, brief.DEFAULT_BUDGET)
