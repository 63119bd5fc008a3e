"""Several actors in one state folder: a second actor joins with its first write (no refusal, no false latch
problem), writes only its own log and program counter, and shares the goal and 10_invariants.md."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # not a git repository: git costs nothing
    State.init(tmp_path / "state", "Build the parser", "the tests pass", actor="alice")
    State.open(tmp_path / "state", "alice").invariant("Use a WAL", because="crashes")
    return tmp_path / "state"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith(".") and ".local" not in p.parts
    }


def test_a_second_actor_is_not_refused_and_its_first_write_joins(root: Path) -> None:
    bob = State.open(root, "bob")  # no refusal any more
    out = bob.checkpoint("read the code", "write the lexer")
    assert out.ok, out.problems
    recs = list(wallines.records(str(root / "wal" / "bob.jsonl")))
    assert [r["op"] for r in recs] == ["join", "checkpoint"]
    join = recs[0]
    assert join["prev"] is None and join["seq"] == 1 and join["actor"] == "bob"
    goal_sha = wal.sha256((root / "00_goal.md").read_bytes())
    assert join["data"] == {"goal": goal_sha} and join["views"] == {"00_goal.md": goal_sha}
    assert recs[1]["prev"] == join["h"]
    # the checkpoint's goal is the shared goal's text, never the join's hash
    assert recs[1]["data"]["goal"] == "Build the parser"


def test_each_actor_writes_only_its_own_log_and_program_counter(root: Path) -> None:
    alice_next = (root / "99_next.md").read_bytes()
    alice_log = (root / "wal" / "alice.jsonl").read_bytes()
    bob = State.open(root, "bob")
    bob.checkpoint("read the code", "write the lexer")
    bob.handoff("bob's note")
    assert (root / "99_next.md").read_bytes() == alice_next
    assert not (root / "20_handoff.md").exists()
    assert (root / "wal" / "alice.jsonl").read_bytes() == alice_log
    assert "next allowed action: write the lexer" in (root / "next" / "bob.md").read_text()
    assert (root / "handoff" / "bob.md").read_text() == "bob's note\n"
    last = list(wallines.records(str(root / "wal" / "bob.jsonl")))[-1]
    assert set(last["views"]) >= {"next/bob.md", "handoff/bob.md"}
    assert "99_next.md" not in last["views"] and "20_handoff.md" not in last["views"]
    # alice's checkpoint leaves bob's program counter alone
    bob_next = (root / "next" / "bob.md").read_bytes()
    State.open(root, "alice").checkpoint("wrote the WAL", "write the tests")
    assert (root / "next" / "bob.md").read_bytes() == bob_next
    # status shows each actor its own program counter
    assert State.open(root, "bob").status().extra["next"]["next"] == "write the lexer"
    assert State.open(root, "alice").status().extra["next"]["next"] == "write the tests"


def test_both_share_10_and_verify_clean_without_a_false_latch_missing(root: Path) -> None:
    bob = State.open(root, "bob")
    bob.invariant("Keep the AST immutable", because="the checker shares subtrees")
    State.open(root, "alice").reject("Regex lexer", because="too slow")
    bob.checkpoint("lexer", "parser")
    text = (root / "10_invariants.md").read_text()
    assert "Use a WAL" in text and "Keep the AST immutable" in text and "Regex lexer" in text
    for actor in ("alice", "bob"):
        out = State.open(root, actor).verify()
        assert out.ok, (actor, [(p.code, p.message) for p in out.problems])
        assert State.open(root, actor).reconcile().ok


def test_a_read_before_the_first_write_says_the_first_write_joins(root: Path) -> None:
    before = _files(root)
    with pytest.raises(StateMissing) as e:
        State.open(root, "bob").status()
    assert "no history yet" in e.value.message and "first write joins" in (e.value.hint or "")
    assert _files(root) == before  # a read never joins
    assert not (root / "wal" / "bob.jsonl").exists()


def test_a_crash_after_the_join_leaves_a_valid_state(root: Path) -> None:
    """The join is its own append: a log holding only the join record reads and verifies clean."""
    from rehydrate.store import actors

    bob = State.open(root, "bob")
    actors.join(bob)
    out = State.open(root, "bob").verify()
    assert out.ok, [(p.code, p.message) for p in out.problems]
    State.open(root, "bob").checkpoint("a", "b")
    assert [r["op"] for r in wallines.records(str(root / "wal" / "bob.jsonl"))] == ["join", "checkpoint"]


def test_init_when_the_goal_exists_refuses_with_a_hint_naming_the_actor(root: Path) -> None:
    with pytest.raises(RehydrateError) as e:
        State.init(root, "Another goal", actor="bob")
    assert "--actor" in (e.value.hint or "") and "REHYDRATE_ACTOR" in (e.value.hint or "")
    assert not (root / "wal" / "bob.jsonl").exists()


def test_a_joined_actors_deleted_program_counter_is_redone_from_its_log(root: Path) -> None:
    bob = State.open(root, "bob")
    bob.checkpoint("lexer", "parser")
    kept = (root / "next" / "bob.md").read_bytes()
    os.remove(root / "next" / "bob.md")
    out = State.open(root, "bob").reconcile()
    assert (root / "next" / "bob.md").read_bytes() == kept
    assert any("next/bob.md" in r for r in out.repaired), out.repaired


def test_a_hand_edit_of_a_joined_actors_program_counter_is_named(root: Path) -> None:
    State.open(root, "bob").checkpoint("lexer", "parser")
    (root / "next" / "bob.md").write_text("# Next (edited)\n")
    out = State.open(root, "bob").reconcile()
    assert [(p.code, p.file) for p in out.problems] == [("view-edited", "state/next/bob.md")]
    assert State.open(root, "alice").reconcile().ok  # alice's counter is not bob's


def test_the_brief_for_a_joined_actor_shows_its_own_program_counter(root: Path) -> None:
    from rehydrate import brief

    State.open(root, "alice").checkpoint("wrote the WAL", "alice's next step")
    bob = State.open(root, "bob")
    bob.checkpoint("read the code", "bob's next step")
    bob.handoff("bob's note")
    text = brief.resume(State.open(root, "bob")).text
    assert "quote: state/next/bob.md]" in text and "bob's next step" in text
    assert "quote: state/handoff/bob.md]" in text and "bob's note" in text
    assert "alice's next step" not in text and "99_next.md]" not in text
    assert "next safe action: bob's next step" in text
    text = brief.resume(State.open(root, "alice")).text
    assert "quote: state/99_next.md]" in text and "alice's next step" in text and "bob's next step" not in text


def test_a_joined_actor_before_its_first_checkpoint_is_not_degraded(root: Path) -> None:
    """The join is the actor's first step (as init is the first actor's): the checks look back to it."""
    from rehydrate import brief

    State.open(root, "bob").invariant("Keep the AST immutable", because="shared subtrees")
    r = brief.resume(State.open(root, "bob"))
    assert r.confidence == "recovered", [(f.check, f.status, f.message) for f in r.findings]
