"""The replaceable views (99_next.md, 20_handoff.md): rendered from the WAL, redone after a crash or a deletion, a
hand edit reported and kept beside, what status shows of them cleaned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import HOSTILE, no_crash, rehydrate, shown_clean, verify_codes
from rehydrate.store import layout, views
from rehydrate.store.state import State
from rehydrate.text import clean


def test_checkpoint_carries_the_goal_and_renders_multiline(state: State) -> None:
    state.checkpoint(done="a\nb", next="c", goal="Part 2\nwith detail")
    state.checkpoint(done="d", next="e")
    text = Path(state.path("99_next.md")).read_text()
    assert views.parse_next(text) == {"goal": "Part 2\nwith detail", "done": "d", "next": "e"}
    assert text.startswith("# Next (checkpoint 6, ")


def test_hand_edited_next_is_kept_not_overwritten(state: State) -> None:
    p = Path(state.path("99_next.md"))
    p.write_text("my own notes\n")
    out = state.verify()
    assert [x.code for x in out.problems] == ["view-edited"]
    cp = state.checkpoint(done="x", next="y")
    assert any("99_next.md.edited" in r for r in cp.repaired)
    assert Path(state.path("99_next.md.edited")).read_text() == "my own notes\n"
    assert state.verify().ok


def test_handoff_written_by_hand_is_reported_then_kept(state: State) -> None:
    Path(state.path("20_handoff.md")).write_text("typed by hand\n")
    assert [p.code for p in state.verify().problems] == ["view-unrecorded"]
    state.handoff("through the WAL")
    assert Path(state.path("20_handoff.md.edited")).read_text() == "typed by hand\n"
    assert Path(state.path("20_handoff.md")).read_text() == "through the WAL\n"
    assert state.verify().ok


def test_deleted_views_are_restored_from_the_wal(state: State) -> None:
    before = {n: Path(state.path(n)).read_bytes() for n in ("00_goal.md", "10_invariants.md", "99_next.md")}
    for n in before:
        Path(state.path(n)).unlink()
    out = state.verify()
    assert {p.code for p in out.problems} == {"view-lags"} and all(p.repairable for p in out.problems)
    state.verify(repair=True)
    assert {n: Path(state.path(n)).read_bytes() for n in before} == before
    assert state.verify().ok


def test_checkpoint_after_99_was_edited_keeps_the_current_goal(state: State) -> None:
    state.checkpoint(done="a", next="b", goal="Part 2")
    p = Path(state.path("99_next.md"))
    p.write_text(p.read_text() + "my note\n")
    state.checkpoint(done="c", next="d")
    assert "current goal: Part 2\n" in p.read_text()


def test_a_second_hand_edit_never_replaces_the_first_kept_copy(state: State) -> None:
    p = Path(state.path("99_next.md"))
    for n in (1, 2):
        p.write_text(f"edit {n}\n")
        state.checkpoint(done=f"after edit {n}", next="z")
    assert Path(state.path("99_next.md.edited")).read_text() == "edit 1\n"
    assert Path(state.path("99_next.md.edited.2")).read_text() == "edit 2\n"


def test_deleted_views_after_rotate_are_redone(state: State) -> None:
    state.handoff("read me")
    state.rotate()
    for name in ("99_next.md", "20_handoff.md"):
        before = Path(state.path(name)).read_bytes()
        Path(state.path(name)).unlink()
        assert verify_codes(state) == [("view-missing", None)]
        out = state.verify(repair=True)
        assert out.ok and any("it was missing" in r for r in out.repaired)
        assert Path(state.path(name)).read_bytes() == before


def test_status_cleans_what_it_shows_from_the_views(state: State) -> None:
    assert clean(HOSTILE, one_line=True) == "]0;pwned[2J gnp.exe31m"
    root = Path(state.root)
    nxt = root / "99_next.md"
    nxt.write_text(
        f"# Next (checkpoint 9{HOSTILE})\ncurrent goal: g{HOSTILE}\nlast completed: d{HOSTILE}\n"
        f"next allowed action: n{HOSTILE}\n"
    )
    goal = root / "00_goal.md"
    goal.write_text(goal.read_text().replace("Ship the parser", f"Ship{HOSTILE}"))
    extra = State.open(root).status().extra  # what the library hands to every face, not only to the CLI's
    for value in (extra["goal"], extra["checkpoint"], *extra["next"].values()):
        shown_clean(value)
        assert "pwned" in value
    r = rehydrate("status")
    no_crash(r)
    assert r.code == 1 and "pwned" in r.out, r
    shown_clean(r.out)
    j = rehydrate("status", "--json")
    report = json.loads(j.out)
    for value in (report["goal"], report["checkpoint"], *report["next"].values()):
        shown_clean(value)
        assert "\n" not in value or value is not report["checkpoint"]
    assert report["checkpoint"].startswith("checkpoint 9")


NAME_PARTS = st.text(alphabet="ab09_.-\n ²Aé/", max_size=70)


@settings(max_examples=500, deadline=None)
@given(
    NAME_PARTS, st.sampled_from(["", "00_", "7_", "12_", "123_", "1²_"]), st.sampled_from(["", ".md", ".MD", ".md\n"])
)
def test_names_are_told_apart_as_the_patterns_said_without_compiling_them(middle: str, head: str, tail: str) -> None:
    """An actor's name and another view's file name, checked with string tests (no regular expression compiled on
    the hook path): what the patterns matched in full, and nothing else (not even with a newline at the end)."""
    import re

    name = head + middle + tail
    assert layout.is_extra_view(name) == bool(re.fullmatch(r"[0-9]{2}_[A-Za-z0-9._-]+\.md", name)), name
    assert layout.is_actor(name) == bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name)), name
    assert layout.is_actor(middle) == bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", middle)), middle


@pytest.mark.parametrize("dirty", [None, 3, "a.py", {"a": 1}])
def test_the_last_record_line_takes_any_dirty_field(dirty: object) -> None:
    """A pulled checkpoint's git.dirty of another type (null, a number) counts as none: it once raised a TypeError
    that failed every brief."""
    rec = {"seq": 2, "op": "checkpoint", "actor": "agent", "ts": "2026-01-01T00:00:00Z", "data": {"next": "x"}}
    rec["git"] = {"head": "a" * 40, "branch": "main", "dirty": dirty}
    assert "HEAD aaaaaaa on main, 0 dirty" in views.summary(rec)  # type: ignore[arg-type]
