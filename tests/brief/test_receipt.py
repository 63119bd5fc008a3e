"""The delivery receipt through the real `rehydrate hook` (brief/receipt.py): a brief given by SessionStart is looked
for in the transcript the harness then writes; the Stop hook records the verdict in the journal, the next brief's
ledger says it, `recover` and `status` show it without writing."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import hook_answer, rehydrate, run_hook
from rehydrate.store.state import State


def _start(repo: Path, transcript: Path, source: str = "startup", session: str = "s-1") -> str:
    event = {"hook_event_name": "SessionStart", "source": source, "session_id": session, "cwd": str(repo)}
    code, out, err = hook_answer("claude", {**event, "transcript_path": str(transcript)}, repo)
    assert code == 0 and out is not None, err
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


def _harness_writes(transcript: Path, context: str | None) -> None:
    """What Claude Code 2.1 writes after a SessionStart hook: the context as an attachment, then the model's turn."""
    with transcript.open("a") as f:
        if context is not None:
            rec = {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": [context]}}
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
        f.write(json.dumps({"type": "assistant", "message": {"content": "ok"}}, separators=(",", ":")) + "\n")


def _stop(repo: Path, transcript: Path) -> None:
    event = {"hook_event_name": "Stop", "session_id": "s-1", "cwd": str(repo), "transcript_path": str(transcript)}
    code, out, err = run_hook("claude", event, repo)
    assert (code, out) == (0, ""), err


def _journal(repo: Path) -> list[dict[str, object]]:
    return [
        json.loads(x)
        for x in (repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl").read_text().splitlines()
    ]


def _receipts(repo: Path) -> list[dict[str, object]]:
    return [r["data"] for r in _journal(repo) if r["op"] == "delivery"]  # type: ignore[misc]


def test_a_brief_that_arrived_whole_is_recorded_delivered_and_said_next_time(state: State, repo: Path) -> None:
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    given = _start(repo, transcript)
    brief = [r for r in _journal(repo) if r["op"] == "resume"][-1]["data"]["brief"]  # type: ignore[index]
    assert brief["token"] in given and brief["after"] == len(given) - given.index(brief["token"])  # type: ignore[index]
    _harness_writes(transcript, given)
    _stop(repo, transcript)
    (receipt,) = _receipts(repo)
    assert receipt["verdict"] == "delivered" and receipt["session_id"] == "s-1"
    _stop(repo, transcript)  # judged once
    assert len(_receipts(repo)) == 1
    again = _start(repo, transcript, "compact")
    assert "- recency: ok: the brief a hook gave at " in again and "reached the model whole (delivery receipt" in again


def test_a_transcript_not_there_yet_at_the_brief_is_judged_whole_once_written(state: State, repo: Path) -> None:
    """A new session's SessionStart can come before the harness writes its transcript: the brief is recorded with
    no size, `status` says the file is not there yet, and once it is, all of it came after the brief."""
    transcript = repo.parent / "later.jsonl"
    given = _start(repo, transcript)
    assert [r["data"]["transcript_size"] for r in _journal(repo) if r["op"] == "resume"] == [None]  # type: ignore[index]
    said = rehydrate("status", cwd=repo).out
    assert "its delivery is not judged yet (the transcript the hook's event named is not there yet)" in said, said
    _harness_writes(transcript, given)
    _stop(repo, transcript)
    assert [r["verdict"] for r in _receipts(repo)] == ["delivered"]


def test_a_cut_brief_degrades_the_next_ledger_and_says_to_read_it(state: State, repo: Path) -> None:
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    given = _start(repo, transcript)
    _harness_writes(transcript, given[:2000])  # a 2 KB preview
    _stop(repo, transcript)
    assert [r["verdict"] for r in _receipts(repo)] == ["truncated"]
    after = _start(repo, transcript, "compact")
    ledger = after[after.rindex("## Ledger") :]
    assert "recency: degraded: the brief a hook gave at" in ledger and "was cut: the transcript holds" in ledger
    assert "confidence: degraded (recency)" in ledger


def test_a_brief_never_injected_is_not_delivered(state: State, repo: Path) -> None:
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    _start(repo, transcript)
    _harness_writes(transcript, None)
    _stop(repo, transcript)
    assert [r["verdict"] for r in _receipts(repo)] == ["not delivered"]


def test_recover_and_status_judge_without_writing(state: State, repo: Path) -> None:
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    given = _start(repo, transcript)
    _harness_writes(transcript, given[:1500])
    before = len(_journal(repo))
    r = rehydrate("recover", cwd=repo)
    assert "was cut: the transcript holds" in r.out and r.code == 1, r.out
    s = rehydrate("status", cwd=repo)
    assert "last brief:  degraded: the brief a hook gave at" in s.out, s.out
    data = json.loads(rehydrate("status", "--json", cwd=repo).out)
    assert data["delivery"]["verdict"] == "truncated"
    assert len(_journal(repo)) == before  # nothing recorded: the next hook records it


def test_nothing_to_judge_yet_says_nothing_and_records_nothing(state: State, repo: Path) -> None:
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    _start(repo, transcript)
    _stop(repo, transcript)  # the harness wrote nothing after the hook yet
    assert _receipts(repo) == []
    assert "its delivery is not judged yet (no model turn yet in" in rehydrate("status", cwd=repo).out
    assert "delivery" not in rehydrate("recover", cwd=repo).out  # nothing in the ledger until it is judged


def test_a_receipt_does_not_take_the_brief_away_from_a_resumed_session(state: State, repo: Path) -> None:
    """A resumed conversation that still holds its brief gets the one-line pointer: a delivery receipt recorded since
    changed nothing in the state."""
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    given = _start(repo, transcript)
    _harness_writes(transcript, given)
    _stop(repo, transcript)
    assert [r["verdict"] for r in _receipts(repo)] == ["delivered"]
    again = _start(repo, transcript, "resume")
    assert "## Ledger" not in again and len(again) < 1000, again[:300]
