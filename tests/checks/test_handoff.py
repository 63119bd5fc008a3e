"""The handoff check: the note read in full, and whether it predates the last checkpoint's work."""

from __future__ import annotations

from pathlib import Path

from rehydrate.checks import Context, Finding, confidence
from rehydrate.checks.handoff import HandoffCheck
from rehydrate.store.state import State
from rehydrate.store.wal import since as since_mod

NOTE = "# Handoff\n\nThe parser is half done.\nThe binding powers are next.\n"


def _run(state: State, max_bytes: int = since_mod.HOOK_BYTES) -> Finding:
    with state.reading() as snap:
        since = since_mod.find(state, snap, max_bytes)
    [found] = HandoffCheck().run(Context(state, state.reconcile(), since=since))
    return found


def test_no_note_is_nothing_to_look_at_and_says_where_it_looked(state: State) -> None:
    found = _run(state)
    assert (found.status, found.message) == ("n/a", "no handoff note (state/20_handoff.md absent)")
    assert confidence([found]) == "recovered"


def test_a_note_written_after_the_checkpoint_is_read_in_full(state: State) -> None:
    state.handoff(NOTE)
    found = _run(state)
    size = len(Path(state.path("20_handoff.md")).read_bytes())
    assert found.status == "ok", found.message
    assert f"read in full ({size:,} bytes, 4 lines), written at record" in found.message
    assert found.message.endswith("after checkpoint 4")


def test_a_note_older_than_the_last_checkpoint_is_degraded_until_a_new_one_is_written(state: State) -> None:
    state.handoff(NOTE)
    state.checkpoint(done="the tokenizer", next="binding powers")
    found = _run(state)
    assert found.status == "degraded"
    assert "no handoff record since checkpoint 6 (the 0 WAL records since it)" in found.message
    assert found.next_action is not None and "checkpoint 6 disagree, the checkpoint wins" in found.next_action
    assert "write a new handoff when you stop" in found.next_action
    assert found.next_action.endswith('; then go on with checkpoint 6\'s next step: "binding powers"')
    state.checkpoint(done="binding powers", next="the evaluator")
    assert _run(state).status == "degraded"  # every later checkpoint too
    state.handoff(NOTE + "The evaluator is next.\n")
    assert _run(state).status == "ok"


def test_a_note_not_placed_against_the_checkpoint_is_skipped(state: State) -> None:
    state.handoff(NOTE)
    for i in range(20):
        state.record("note", {"text": f"note {i} " + "z" * 1000})
    found = _run(state, max_bytes=4000)
    assert found.status == "skipped" and "not placed against the last checkpoint" in found.message
    assert "read in full" in found.message
    [no_since] = HandoffCheck().run(Context(state, state.reconcile()))
    assert no_since.status == "skipped" and "the WAL was not read back" in no_since.message


def test_a_note_that_cannot_be_read_in_full_is_skipped(state: State) -> None:
    path = Path(state.path("20_handoff.md"))
    path.mkdir()
    found = _run(state)
    assert found.status == "skipped" and "could not be read in full" in found.message
    assert HandoffCheck().run(Context(None, None, error="no state")) == []
    path.rmdir()
    with path.open("wb") as f:  # past the 4 MiB read (sparse: no 5 MB written)
        f.truncate(5 << 20)
    found = _run(state)
    assert found.status == "skipped" and "is 5,242,880 bytes" in found.message, found.message
    assert state.root not in found.message  # the project's own name for it, never this machine's path
