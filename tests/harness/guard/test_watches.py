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
