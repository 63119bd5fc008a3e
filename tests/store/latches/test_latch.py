"""The latches: 00_goal.md written once, 10_invariants.md bound line by line; hand edits, merges and adoption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HOSTILE, git, no_crash, records, rehydrate, shown_clean, verify_codes
from rehydrate import brief
from rehydrate.store.latches.order import check_lines
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal


def test_lines_added_by_hand_are_adopted_by_the_next_write(state: State) -> None:
    p = Path(state.path("10_invariants.md"))
    p.write_text(p.read_text() + "- a note typed by hand\n")
    out = state.verify()
    assert [(x.code, x.line) for x in out.problems] == [("unrecorded-line", 8)]
    state.checkpoint(done="x", next="y")
    recs = records(Path(state.root))
    assert recs[-2]["op"] == "invariant" and recs[-2]["data"] == {
        "adopted": True,
        "line": "- a note typed by hand",
        "line_sha256": wal.sha256(b"- a note typed by hand"),
    }
    assert state.verify().ok


def test_goal_rewrite_is_a_latch_violation_named_by_line(state: State) -> None:
    p = Path(state.path("00_goal.md"))
    p.write_text(p.read_text().replace("Ship the parser", "Ship something else"))
    (problem,) = state.verify().problems
    assert (problem.code, problem.file, problem.line) == ("latch-violation", "state/00_goal.md", 3)
    # never overwritten, not even by a write
    state.checkpoint(done="x", next="y")
    assert "Ship something else" in p.read_text()


def test_check_lines_names_each_kind_of_violation() -> None:
    rec = {"a": ["- D-aaaaaa x", "- D-bbbbbb y", "- D-cccccc z"]}
    assert check_lines(["- D-aaaaaa x", "- D-bbbbbb y", "- D-cccccc z"], rec) == ([], [])
    v, u = check_lines(["- D-aaaaaa x", "- D-bbbbbb CHANGED", "- D-cccccc z", "extra"], rec)
    assert [(c, n) for c, n, _ in v] == [("latch-changed", 2)] and u == [4]
    v, _ = check_lines(["- D-aaaaaa x", "- D-cccccc z"], rec)
    assert [(c, n) for c, n, _ in v] == [("latch-missing", 2)]
    v, _ = check_lines(["- D-bbbbbb y", "- D-aaaaaa x", "- D-cccccc z"], rec)
    assert [(c, n) for c, n, _ in v] == [("latch-reordered", 1)]
    # two actors' lines interleaved by a merge, each in its own order: fine
    two = {"a": ["- D-aaaaaa x", "- D-cccccc z"], "b": ["- D-bbbbbb y"]}
    assert check_lines(["- D-aaaaaa x", "- D-bbbbbb y", "- D-cccccc z"], two) == ([], [])


def test_editing_the_newest_decision_is_a_violation_not_a_crash(state: State) -> None:
    state.invariant("Use Pratt", because="b")
    p = Path(state.path("10_invariants.md"))
    p.write_text(p.read_text().replace("Use Pratt", "Use recursive descent"))
    assert verify_codes(state) == [("latch-changed", 8)]
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
    codes = verify_codes(state)
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
    assert [c for c, _ in verify_codes(state)] == ["line-endings"]
    state.verify(repair=True)
    p.write_bytes(text)
    assert state.verify().ok
    assert (Path(state.root) / ".gitattributes").read_text().endswith("* -text\n")


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


def test_verify_cleans_the_recorded_lines_it_quotes(state: State) -> None:
    """A hash-valid record from someone else's clone may carry anything; a latch message quotes its line clean."""
    log = Path(state.root) / "wal" / "agent.jsonl"
    last = json.loads(log.read_bytes().splitlines()[-1])
    line = f"- D-abcdef 2026-01-01 decision: x{HOSTILE} because: y"
    rec = wal.seal(
        {**last, "seq": last["seq"] + 1, "prev": last["h"], "op": "invariant", "data": {"line": line}, "git": None}
    )
    after = wal.seal({**rec, "seq": rec["seq"] + 1, "prev": rec["h"], "op": "compaction", "data": {}})
    with open(log, "ab") as f:
        f.write(wal.encode(rec) + wal.encode(after))
    (p,) = State.open(state.root).verify().problems
    assert p.code == "latch-missing" and "pwned" in p.message, p
    shown_clean(p.message)
    r = rehydrate("verify")
    no_crash(r)
    assert r.code == 1 and "[latch-missing]" in r.out and "pwned" in r.out, r
    shown_clean(r.out)


def test_a_line_that_takes_an_entry_out_is_bound_like_any_other(state: State) -> None:
    """A withdrawal or a superseding line, once recorded, cannot be turned to another entry by hand: the edit is a
    latch violation (and the brief's reading of what is out of force never follows an edited line silently)."""
    view = Path(state.path("10_invariants.md"))
    ids = [line[2:10] for line in view.read_text().split("\n") if line.startswith("- ")]
    decision, rejected = ids
    state.withdraw(decision, "recorded by mistake")
    state.invariant("Edit the schema through migrations only", "one way in", supersedes=rejected)
    assert verify_codes(State.open(state.root)) == []
    text = view.read_text()
    view.write_text(text.replace(f"withdrawn: {decision}", f"withdrawn: {rejected}"))
    assert verify_codes(State.open(state.root)) == [("latch-changed", 8)]
    view.write_text(text.replace(f"superseding {rejected}", f"superseding {decision}"))
    assert verify_codes(State.open(state.root)) == [("latch-changed", 9)]
