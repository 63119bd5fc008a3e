"""The guard reads the rejected approaches whatever the size of 10_invariants.md (the README expects 200,000 lines),
and when it cannot read them it fails closed: a guarded write never goes through because the view is big or broken."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import claude_event, record_lines, run_hook
from rehydrate.harness.guard import watches
from rehydrate.store import layout
from rehydrate.store.state import State


def _decision(i: int) -> str:
    return f"- D-{i:06x} 2026-12-01 decision: keep the parser's table {i} {'x' * 15000} because: it is measured"


def _edit(repo: Path) -> dict[str, object]:
    tool_input = {"file_path": str(repo / "db" / "schema.sql"), "old_string": "a", "new_string": "b"}
    return claude_event(repo, "PreToolUse", tool_name="Edit", tool_input=tool_input)


def _decision_of(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["permissionDecision"]) if out else ""


def test_a_view_past_4_mib_still_guards(repo: Path, state: State) -> None:
    """300 long recorded decisions take 10_invariants.md past 4 MiB: the rejected approach recorded before them
    still guards db/schema.sql (its record now beyond the lookback: the line's watch counts)."""
    record_lines(state, [_decision(i) for i in range(300)])
    assert os.path.getsize(state.path(layout.INVARIANTS)) > 4 << 20
    assert [(g, c) for g, c, _ in watches.rejected(state.root)] == [("db/schema.sql", None)]
    code, out, err = run_hook("claude", _edit(repo), repo)
    assert code == 0 and _decision_of(out) == "ask", (out, err)
    assert "Edit db/schema.sql directly" in out


def test_a_guarded_line_after_the_big_decisions_is_found(repo: Path, state: State) -> None:
    record_lines(state, [_decision(i) for i in range(300)])
    state.reject("Touch the lockfile by hand", because="the tool owns it", guard="uv.lock")
    assert ("uv.lock", None) in [(g, c) for g, c, _ in watches.rejected(state.root)]
    event = claude_event(repo, "PreToolUse", tool_name="Write", tool_input={"file_path": "uv.lock", "content": "x"})
    code, out, _ = run_hook("claude", event, repo)
    assert code == 0 and _decision_of(out) == "ask" and "Touch the lockfile by hand" in out


def test_a_view_that_cannot_be_read_fails_closed(repo: Path, state: State) -> None:
    """10_invariants.md replaced by a folder (or a FIFO, or unreadable): the guard cannot know what is rejected, so
    a write gets the configured decision, and the reason says why."""
    path = Path(state.path(layout.INVARIANTS))
    path.unlink()
    path.mkdir()
    code, out, err = run_hook("claude", _edit(repo), repo)
    assert code == 0 and _decision_of(out) == "ask", (out, err)
    assert "cannot read" in out and layout.INVARIANTS in out
    event = claude_event(repo, "PreToolUse", tool_name="Read", tool_input={"file_path": "db/schema.sql"})
    assert run_hook("claude", event, repo)[1] == ""  # a tool that writes nothing is not asked about


def test_an_unchanged_view_is_not_scanned_again(repo: Path, state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watches are kept in the check by effect's snapshot with the view's fingerprint: while 10_invariants.md is
    as it was, a call reads the snapshot, not the view (200,000 lines would cost a scan on every tool call)."""
    from rehydrate.harness import hook

    event = json.dumps(_edit(repo)).encode()
    assert _decision_of(hook.run("claude", event).stdout) == "ask"  # scanned, snapshot taken
    scans: list[str] = []
    real = watches.rejected

    def counted(root: str) -> list[watches.Watch]:
        scans.append(root)
        return real(root)

    monkeypatch.setattr(watches, "rejected", counted)
    assert _decision_of(hook.run("claude", event).stdout) == "ask" and scans == []
    state.invariant("Keep the lexer hand-written", because="it is measured")  # the view changes: scanned again
    assert _decision_of(hook.run("claude", event).stdout) == "ask" and len(scans) == 1


def _rejected_id(state: State, text: str) -> str:
    line = next(ln for ln in Path(state.path(layout.INVARIANTS)).read_text().split("\n") if text in ln)
    ident = layout.entry_id(line)
    assert ident is not None
    return ident


def _lockfile(repo: Path) -> dict[str, object]:
    return claude_event(repo, "PreToolUse", tool_name="Write", tool_input={"file_path": "uv.lock", "content": "x"})


def test_an_approach_taken_out_of_force_no_longer_guards(repo: Path, state: State) -> None:
    """Superseded by a recorded decision, the schema's rejected approach stops asking, through the real hook and its
    cached snapshot. The guard follows what the brief shows: a withdrawal added by hand (as a teammate's write would
    arrive) lifts the lockfile's at once; a recorded decision edited by hand into a lift does not (its record says
    otherwise: the record wins, as it does for a watch)."""
    assert _decision_of(run_hook("claude", _edit(repo), repo)[1]) == "ask"
    schema = _rejected_id(state, "Edit db/schema.sql directly")
    state.invariant("Edit db/schema.sql for seed data", because="seeds are not migrations", supersedes=schema)
    code, out, err = run_hook("claude", _edit(repo), repo)
    assert code == 0 and out == "", (out, err)
    assert [g for g, _, _ in watches.rejected(state.root)] == []

    state.reject("Touch the lockfile by hand", because="the tool owns it", guard="uv.lock")
    state.reject("Vendor the wheel", because="too big", guard="*.whl")
    lock, wheel = _rejected_id(state, "Touch the lockfile by hand"), _rejected_id(state, "Vendor the wheel")
    view = Path(state.path(layout.INVARIANTS))
    decision = _rejected_id(state, "Write the WAL before any view")
    text = view.read_text()
    assert _decision_of(run_hook("claude", _lockfile(repo), repo)[1]) == "ask"
    edited = next(ln for ln in text.split("\n") if ln.startswith(f"- {decision} "))
    forged = f"- {decision} 2026-12-02 decision, superseding {wheel}: anything because: edited"
    view.write_text(text.replace(edited, forged) + f"- W-0a0b0c 2026-12-02 withdrawn: {lock} because: by hand\n")
    assert [g for g, _, _ in watches.rejected(state.root)] == ["*.whl"]
    assert run_hook("claude", _lockfile(repo), repo)[1] == ""
    wheel_event = claude_event(repo, "PreToolUse", tool_name="Write", tool_input={"file_path": "a.whl", "content": "x"})
    assert _decision_of(run_hook("claude", wheel_event, repo)[1]) == "ask"


def test_a_lift_recorded_before_a_rotate_still_lifts(repo: Path, state: State) -> None:
    """After a rotate, the lifting entry's record is in the archive: the rotate record's lines carry it."""
    schema = _rejected_id(state, "Edit db/schema.sql directly")
    state.withdraw(schema, "recorded by mistake")
    State.open(state.root).rotate()
    assert [g for g, _, _ in watches.rejected(state.root)] == []
    assert run_hook("claude", _edit(repo), repo)[1] == ""
