"""99_next.md and 20_handoff.md after git's union merge of two branches that each checkpointed and handed off (real
git): merge-shaped against the heads' renderings, they are `view-merged` (information), never rewritten by a read and
never kept as .edited; any other line in them is a hand edit, as before."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conftest import git, records
from rehydrate.store import layout, views
from rehydrate.store.session import Outcome, Snapshot
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

NEXT, HANDOFF = layout.NEXT, layout.HANDOFF


def _last(recs: list[dict[str, Any]], op: str) -> dict[str, Any]:
    return next(r for r in reversed(recs) if r["op"] == op)


def _merged(repo: Path, how: str = "merge") -> tuple[State, dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """main and feat each checkpoint and hand off, then `git merge feat` on main: the state, each head's last
    producer of 99 and 20 (main's first, read from each branch's log before the merge), and main's last record."""
    st, _ = State.init(repo / "state", "Ship the parser", None)
    st.checkpoint(done="the base", next="branch out")
    git(repo, "add", "-A", "state")
    git(repo, "commit", "-qm", "state")
    git(repo, "checkout", "-qb", "feat")
    State.open(st.root).checkpoint(done="feat: the lexer", next="feat: the parser")
    State.open(st.root).handoff("feat's handoff\n\n## Open\n- item A\n")
    git(repo, "add", "-A", "state")
    git(repo, "commit", "-qm", "feat")
    feat = records(st.root)
    git(repo, "checkout", "-q", "main")
    State.open(st.root).checkpoint(done="main: the docs", next="main: the release")
    State.open(st.root).handoff("main's handoff\n\n## Open\n- item A\n")
    git(repo, "add", "-A", "state")
    git(repo, "commit", "-qm", "main")
    main = records(st.root)
    if how == "merge":
        git(repo, "merge", "-q", "--no-edit", "feat")
    elif how == "rebase":
        git(repo, "checkout", "-q", "feat")
        git(repo, "rebase", "-q", "main")
    else:
        git(repo, "cherry-pick", "main..feat")
    assert not git(repo, "ls-files", "-u")  # union: no conflict
    heads = {
        NEXT: [_last(main, "checkpoint"), _last(feat, "checkpoint")],
        HANDOFF: [_last(main, "handoff"), _last(feat, "handoff")],
    }
    return st, heads, main[-1]


def _snapshot(last: dict[str, Any], heads: dict[str, list[dict[str, Any]]] | None) -> Snapshot:
    """What reconciliation hands the views' check after a merge: my head (main's), and (WP1) each head's producers."""
    snap = Snapshot(last, None, [], [])
    snap.trust_cache = False
    if heads is not None:
        setattr(snap, "head_views", heads)  # noqa: B010 (Snapshot.head_views is WP1's: set as it will be)
    return snap


def _render(name: str, recs: list[dict[str, Any]]) -> list[bytes]:
    return [views.render_view(name, r).encode() for r in recs]


@pytest.mark.parametrize("how", ["merge", "rebase", "cherry-pick"])
def test_union_merged_views_are_merge_shaped(repo: Path, how: str) -> None:
    st, heads, _ = _merged(repo, how)
    for name in (NEXT, HANDOFF):
        data = Path(st.path(name)).read_bytes()
        assert b"main" in data and b"feat" in data  # both sides' lines, interleaved by the union
        assert views.is_merge_shaped(data, _render(name, heads[name]))
        assert not views.is_merge_shaped(data, _render(name, heads[name][:1]))  # one side's rendering: not enough
        assert not views.is_merge_shaped(data + b"a line typed by hand\n", _render(name, heads[name]))
    assert not views.is_merge_shaped(b"\n\n", _render(NEXT, heads[NEXT]))  # nothing at all is not a merge


def test_a_merged_view_is_information_never_rewritten_never_kept(repo: Path) -> None:
    st, heads, last = _merged(repo)
    before = {name: Path(st.path(name)).read_bytes() for name in (NEXT, HANDOFF)}
    snap = _snapshot(last, heads)
    views.reconcile_views(st, snap, repair=True)  # a read repairs what it safely can: not these
    assert [(p.code, p.file) for p in snap.problems] == [
        ("view-merged", "state/99_next.md"),
        ("view-merged", "state/20_handoff.md"),
    ]
    assert all(p.info and not p.repairable for p in snap.problems)
    assert {name: Path(st.path(name)).read_bytes() for name in (NEXT, HANDOFF)} == before
    out = Outcome()
    for name in (NEXT, HANDOFF):
        views.keep_edit(st, name, snap, out)
    assert out.repaired == [] and not [n for n in os.listdir(st.root) if ".edited" in n]


def test_a_hand_edit_inside_a_merged_view_is_still_a_hand_edit(repo: Path) -> None:
    st, heads, last = _merged(repo)
    p = Path(st.path(NEXT))
    p.write_bytes(p.read_bytes() + b"my own note\n")
    snap = _snapshot(last, heads)
    views.reconcile_views(st, snap, repair=True)
    assert [p.code for p in snap.problems] == ["view-edited", "view-merged"]


def test_without_the_heads_a_merged_view_reads_as_edited(repo: Path) -> None:
    """Before WP1's heads (no snap.head_views), the views' check is today's: the merged file differs, a hand edit."""
    st, _, last = _merged(repo)
    snap = _snapshot(last, None)
    views.reconcile_views(st, snap, repair=True)
    assert [p.code for p in snap.problems] == ["view-edited", "view-edited"]


def test_a_single_head_rendering_is_unchanged(state: State) -> None:
    """One line of work: 99 is the checkpoint's rendering, byte for byte as before."""
    rec = records(state.root)[-1]
    assert views.render_view(NEXT, rec) == views.render_next_record(rec)
    assert Path(state.path(NEXT)).read_text() == views.render_next_record(rec)


# --- the lines of work merged, and the entries' authors, in the brief and the state check -------------------------


def _line(branch: str, seq: int, ts: str, done: str, nxt: str) -> dict[str, Any]:
    cp = {"seq": seq, "ts": ts, "done": done, "next": nxt}
    return {"head": "a" * 64, "seq": seq + 1, "branch": branch, "checkpoint": cp}


LINES = [
    _line("main", 8, "2026-12-01T06:10:00.000Z", "main: the docs", "main: release"),
    _line("feat\x1b[2J", 6, "2026-12-01T06:00:00.000Z", "feat: lexer", "feat: parser"),
]


def test_the_state_check_names_the_lines_of_work_merged(state: State) -> None:
    from rehydrate import checks
    from rehydrate.checks.state import StateCheck

    out = Outcome(record=records(state.root)[-1])
    out.merged = LINES
    found = StateCheck().run(checks.Context(state, out))
    messages = [f.message for f in found if f.status == "ok"]
    assert (
        'ok: 2 lines of work merged (main: next "main: release"; "feat[2J": next "feat: parser"): a checkpoint chooses'[
            4:
        ]
        in messages
    ), messages
    out.merged = None
    assert not [f for f in StateCheck().run(checks.Context(state, out)) if "lines of work" in f.message]
    # an information problem is an ok finding, and the state still verified
    out.problems = [views.Problem("view-merged", "state/99_next.md", None, "merged")]
    found = StateCheck().run(checks.Context(state, out))
    assert {f.status for f in found} == {"ok"} and any("verified" in f.message for f in found)


def test_the_brief_shows_each_line_of_work_under_the_next_step(state: State, monkeypatch: Any) -> None:
    from rehydrate import brief

    real = State.begin

    def begin(self: State, repair: bool = True) -> Snapshot:  # WP1 sets it on the snapshot of a merged log
        snap = real(self, repair)
        snap.merged = LINES
        return snap

    monkeypatch.setattr(State, "begin", begin)
    text = brief.resume(state).text
    nxt = text[text.index("## Next") :]
    assert "2 lines of work merged (a checkpoint chooses):" in nxt
    assert '> - main: checkpoint 8 (2026-12-01T06:10): done "main: the docs"; next "main: release"' in nxt
    assert '> - "feat[2J": checkpoint 6' in nxt and "\x1b" not in text  # untrusted: cleaned, and quoted
    assert "lines of work merged" in next(ln for ln in text.splitlines() if ln.startswith("- state: ok: 2 lines"))
    monkeypatch.undo()
    assert "lines of work merged" not in brief.resume(state).text


def _bob(state: State) -> State:
    """A second actor in the state (a legacy init of its own, as before `join`), with one decision of its own."""
    first = records(state.root)[0]
    (Path(state.root) / "wal" / "bob.jsonl").write_bytes(
        wal.encode(wal.seal({**{k: v for k, v in first.items() if k != "h"}, "actor": "bob"}))
    )
    bob = State(state.root, "bob")
    bob.invariant("Bob's decision", because="bob")
    return bob


def test_with_several_actors_the_brief_marks_each_entry_with_its_author(state: State, monkeypatch: Any) -> None:
    from rehydrate import brief
    from rehydrate.store.latches import latch as latches

    _bob(state)
    text = brief.resume(state).text
    assert "> [bob] - D-" in text and "Bob's decision" in text
    assert "> [agent] - D-" in text and "> [agent] - R-" in text
    # the authors are cached with the scan of 10: an unchanged state does not read every log again
    monkeypatch.setattr(latches, "recorded_lines", lambda *_: (_ for _ in ()).throw(AssertionError("read the logs")))
    assert "> [bob] - D-" in brief.resume(state).text


def test_one_actor_no_marks(state: State) -> None:
    from rehydrate import brief

    assert "> [agent]" not in brief.resume(state).text
