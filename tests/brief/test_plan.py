"""The brief's material (brief/plan.py) costs what it shows: the decisions are read from the end, only as far as a
brief could show them, and of many rejected approaches only those a brief could name one by one are cleaned.

Counted, not timed: the number of lines looked at one by one, and of rejected approaches composed, per render.
(bench/brief_scale.py measures the time.)
"""

from __future__ import annotations

import pytest
from tests.brief.test_brief_budget import TOKEN, check_promises, parse, patch_clean

from rehydrate import brief
from rehydrate.brief import plan
from rehydrate.store import layout
from rehydrate.text import clean


@pytest.fixture(autouse=True)
def _pinned_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brief, "new_token", lambda: TOKEN, raising=False)


def brief_input(lines: list[str]) -> brief.BriefInput:
    return brief.BriefInput(
        folder="state", actor="agent", goal="g", invariants=layout.INVARIANTS_HEADER + "\n".join(lines) + "\n",
        handoff=None, extras=[], next="n", last_record=None, findings=[], confidence="recovered",
        next_action="x",
    )  # fmt: skip


def entries(kind: str, n: int) -> list[str]:
    word = "keep the cache keyed by path and mtime"
    return [layout.entry_line(kind, f"{kind}-{i:06x}", "2026-11-30", f"{word} {i}", "slow", None) for i in range(n)]


class Count:
    def __init__(self, real):  # type: ignore[no-untyped-def]
        self.real, self.calls = real, 0

    def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.real(*args, **kwargs)


def test_25000_decisions_are_read_from_the_end_and_counted_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 25_000
    inp = brief_input([*entries("D", n)[:-1], "", "# a heading", "- R-abcdef rejected: retry it because: no"])
    inp.invariants = (inp.invariants or "") + "\n".join(entries("D", 3)) + "\r\n\n"
    ids = Count(layout.entry_id)
    with monkeypatch.context() as m:
        m.setattr(layout, "entry_id", ids)
        text = brief.render(inp, brief.DEFAULT_BUDGET).text
    shown = parse(text)["quotes"]["state/10_invariants.md, decisions"][0]  # type: ignore[index]
    # each decision shown is looked at once, and a few more lines: not the 25,000 (the old code matched each)
    assert len(shown) < 100 and ids.calls <= 3 * len(shown) + 20, (ids.calls, len(shown))
    assert f"{n - 1 + 3 - len(shown)} older decision(s) in state/10_invariants.md" in text
    assert "R-abcdef" in text
    check_promises(inp, text, brief.DEFAULT_BUDGET)


def test_50000_rejected_approaches_are_each_named_and_only_the_newest_cleaned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by one scan of the bytes; only those a brief could name one by one are cleaned and composed; the rest
    are named by an id range with the file's line numbers: never dropped, never matched one by one."""
    inp = brief_input(entries("R", 50_000))
    chars = Count(clean)
    ids = Count(layout.entry_id)
    shows = Count(plan._Entry.show)

    def show(self: plan._Entry, cap: int | None) -> tuple[str, bool]:
        return shows(self, cap)  # type: ignore[no-any-return]

    with monkeypatch.context() as m:
        patch_clean(m, chars)
        m.setattr(layout, "entry_id", ids)
        m.setattr(plan._Entry, "show", show)
        text = brief.render(inp, brief.DEFAULT_BUDGET).text
    kept = brief.DEFAULT_BUDGET // 12
    assert 0 < chars.calls <= kept + 50 and ids.calls <= kept, (chars.calls, ids.calls)
    assert shows.calls <= 16 * kept, shows.calls
    check_promises(inp, text, brief.DEFAULT_BUDGET)  # every id named, or covered by a named range
    assert "R-000000 to R-" in text


def test_what_is_out_of_force_is_named_not_shown_whatever_else_the_file_holds() -> None:
    """Bare `- ` lines, a withdrawal of a decision, a superseded rejected approach: the brief quotes only what is in
    force, names what is not by id, and counts no decision for a withdrawal."""
    d, r = entries("D", 3), entries("R", 2)
    sup = layout.entry_line("D", "D-0000aa", "2026-11-30", "the new way", "measured", None, None, "R-000000")
    gone = layout.entry_line("W", "W-0000bb", "2026-11-30", "D-000001", "a mistake", None)
    inp = brief_input([*d, "- ", "-", *r, sup, gone, "- "])
    text = brief.render(inp, brief.DEFAULT_BUDGET).text
    quotes = parse(text)["quotes"]
    shown = [*quotes["state/10_invariants.md, decisions"][0], *quotes["state/10_invariants.md, rejected"][0]]  # type: ignore[index]
    assert not any("D-000001" in x or "R-000000 " in x or "W-0000bb" in x for x in shown), shown
    assert any("D-0000aa" in x for x in shown) and any("R-000001" in x for x in shown)
    assert (
        "Not shown, superseded or withdrawn (no longer in force): R-000000, D-000001 (state/10_invariants.md)" in text
    )
    check_promises(inp, text, brief.DEFAULT_BUDGET)
