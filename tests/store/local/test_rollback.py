"""store/local/rollback.py: how a rollback and a branch switch are worded."""

from __future__ import annotations

from rehydrate.store.local.rollback import lost_message


def test_a_rollback_names_what_is_gone_and_its_last_next_action() -> None:
    lost = {"count": 3, "exact": True, "to": 9, "h": "abcdef123456", "end": 6, "next": "wire the CLI", "from": "main"}
    said = lost_message(lost)
    assert said.startswith("rolled back: 3 records this clone saw are gone (the newest: record 9·abcdef; ")
    assert "the log's head is record 6); their last checkpoint's next action: wire the CLI." in said
    assert lost_message({**lost, "count": 1, "exact": False, "next": None}).startswith(
        "rolled back: at least 1 record this clone saw"
    )
    assert "none of them was a checkpoint" in lost_message({**lost, "next": None})


def test_a_branch_switch_says_how_to_come_back() -> None:
    lost = {"kind": "switched", "count": 2, "exact": True, "from": "feature\nx", "branch": None, "next": "ship"}
    assert lost_message(lost) == (
        "the state now stands on a detached HEAD (was feature x): 2 records of feature x's line are not here; "
        'its last next action was "ship"; `git switch feature x` brings them back. Reported until the next '
        "checkpoint, which records it"
    )
