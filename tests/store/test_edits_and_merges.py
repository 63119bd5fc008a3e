"""Hand edits, git merges and odd disks: what a demanding user does to the state, and what must follow."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from conftest import git, rehydrate
from rehydrate import brief
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.store import fsio, wal
from rehydrate.store.state import State


def _codes(st: State) -> list[tuple[str, int | None]]:
    return [(p.code, p.line) for p in st.verify().problems]


def test_editing_the_newest_decision_is_a_violation_not_a_crash(state: State) -> None:
    state.invariant("Use Pratt", because="b")
    p = Path(state.path("10_invariants.md"))
    p.write_text(p.read_text().replace("Use Pratt", "Use recursive descent"))
    assert _codes(state) == [("latch-changed", 8)]
    r = brief.resume(state)
    assert r.confidence == "degraded (state)"
    assert p.read_text().count("Use Pratt") == 0 and p.read_text().count("recursive descent") == 1  # not re-appended


def test_deleting_the_newest_line_is_restored_from_the_wal(state: State) -> None:
    state.invariant("Keep me", because="b")
    p = Path(state.path("10_invariants.md"))
    before = p.read_text()
    p.write_text("".join(before.splitlines(keepends=True)[:-1]))
    state.verify(repair=True)
    assert p.read_text() == before and state.verify().ok


def test_a_line_added_by_hand_in_the_middle_is_adopted_where_it_stands(state: State) -> None:
    p = Path(state.path("10_invariants.md"))
    lines = p.read_text().splitlines(keepends=True)
    lines.insert(6, "- a note typed between two entries\n")
    p.write_text("".join(lines))
    state.checkpoint(done="x", next="y")
    assert state.verify().ok
    state.invariant("after", because="b")
    assert state.verify().ok
    state.rotate()  # the adopted line stays bound where it stands after an archive too
    assert state.verify().ok


def test_merge_conflict_markers_are_named_and_never_adopted(state: State) -> None:
    p = Path(state.path("10_invariants.md"))
    text = p.read_text()
    p.write_text(text + "<<<<<<< HEAD\n- mine\n=======\n- theirs\n>>>>>>> other\n")
    codes = _codes(state)
    assert [c for c in codes if c[0] == "merge-conflict"] == [
        ("merge-conflict", 8),
        ("merge-conflict", 10),
        ("merge-conflict", 12),
    ]
    state.checkpoint(done="x", next="y")  # a write during the conflict records nothing from it
    recs = [json.loads(x) for x in (Path(state.root) / "wal" / "agent.jsonl").read_text().splitlines()]
    assert not any(r["data"].get("adopted") for r in recs)
    p.write_text(text + "- mine\n- theirs\n")  # resolved: both sides kept
    state.checkpoint(done="resolved", next="go on")
    assert state.verify().ok


def test_crlf_conversion_is_one_problem_and_records_nothing(state: State) -> None:
    p = Path(state.path("10_invariants.md"))
    text = p.read_bytes()
    p.write_bytes(text.replace(b"\n", b"\r\n"))
    assert [c for c, _ in _codes(state)] == ["line-endings"]
    state.verify(repair=True)
    p.write_bytes(text)
    assert state.verify().ok
    assert (Path(state.root) / ".gitattributes").read_text().endswith("* -text\n")


def test_checkpoint_after_99_was_edited_keeps_the_current_goal(state: State) -> None:
    state.checkpoint(done="a", next="b", goal="Part 2")
    p = Path(state.path("99_next.md"))
    p.write_text(p.read_text() + "my note\n")
    state.checkpoint(done="c", next="d")
    assert "current goal: Part 2\n" in p.read_text()


def test_a_lost_final_newline_is_put_back_not_cut(state: State) -> None:
    log = Path(state.root) / "wal" / "agent.jsonl"
    whole = log.read_bytes()
    log.write_bytes(whole[:-1])
    assert _codes(state) == [("missing-newline", 4)]
    out = state.verify(repair=True)
    assert any("final newline" in r for r in out.repaired)
    assert log.read_bytes() == whole and not (log.parent / "agent.jsonl.broken").exists()


def test_deleted_views_after_rotate_are_redone(state: State) -> None:
    state.handoff("read me")
    state.rotate()
    for name in ("99_next.md", "20_handoff.md"):
        before = Path(state.path(name)).read_bytes()
        Path(state.path(name)).unlink()
        assert _codes(state) == [("view-missing", None)]
        out = state.verify(repair=True)
        assert out.ok and any("it was missing" in r for r in out.repaired)
        assert Path(state.path(name)).read_bytes() == before


def test_record_refuses_ops_that_write_views(state: State) -> None:
    for op in ("checkpoint", "rotate", "invariant", "Bad Op"):
        with pytest.raises(UsageError):
            state.record(op, {"x": 1})
    assert state.record("compaction", {"trigger": "auto"}).record["op"] == "compaction"
    assert state.verify().ok


def test_a_hash_valid_record_of_the_wrong_shape_is_damage_not_a_bug(repo: Path, state: State) -> None:
    log = Path(state.root) / "wal" / "agent.jsonl"
    last = json.loads(log.read_text().splitlines()[-1])
    bad = wal.seal({**last, "seq": last["seq"] + 1, "prev": last["h"], "op": "reject", "data": {"text": "no line"}})
    with open(log, "ab") as f:
        f.write(wal.encode(bad))
    r = rehydrate("verify")
    assert r.code == 1 and "data.line" in r.out and "Traceback" not in r.err, r
    for argv in (["status"], ["resume"]):  # cut off like a torn last line, kept in .broken, and said
        r = rehydrate(*argv)
        assert "Traceback" not in r.err and "internal error" not in r.err, (argv, r)
        assert r.code in (0, 1, 3), (argv, r)
    assert b'"no line"' in (log.parent / "agent.jsonl.broken").read_bytes()


def test_disk_errors_are_messages_not_bugs(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    class Full(fsio.Sys):
        def write(self, fd: int, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsio, "sys", Full())
    with pytest.raises(RehydrateError, match="No space left"):
        state.checkpoint(done="x", next="y")
    monkeypatch.setattr(fsio, "sys", fsio.Sys())
    state.verify(repair=True)
    assert state.verify().ok


def test_rotate_copies_where_hard_links_are_not_allowed(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    class NoLinks(fsio.Sys):
        def link(self, src: str, dst: str) -> None:
            raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(fsio, "sys", NoLinks())
    out = state.rotate()
    assert (Path(state.root) / out.record["data"]["archive"]).read_bytes().endswith(wal.encode(out.record))
    assert state.verify().ok


def test_a_second_hand_edit_never_replaces_the_first_kept_copy(state: State) -> None:
    p = Path(state.path("99_next.md"))
    for n in (1, 2):
        p.write_text(f"edit {n}\n")
        state.checkpoint(done=f"after edit {n}", next="z")
    assert Path(state.path("99_next.md.edited")).read_text() == "edit 1\n"
    assert Path(state.path("99_next.md.edited.2")).read_text() == "edit 2\n"


def test_the_same_decision_twice_is_two_lines(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wal, "now", lambda: "2026-11-29T22:04:26.123Z")
    state.invariant("Same", because="same")
    state.invariant("Same", because="same")
    assert Path(state.path("10_invariants.md")).read_text().count("decision: Same because: same\n") == 2
    assert state.verify().ok


def test_a_merged_branch_with_a_hand_line_verifies(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state")
    git(repo, "checkout", "-qb", "side")
    with open(repo / "state" / "10_invariants.md", "a") as f:
        f.write("- a teammate's note\n")
    git(repo, "commit", "-qam", "note")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "side")
    assert rehydrate("checkpoint", "--done", "merged", "--next", "go on").code == 0
    assert rehydrate("verify").code == 0
