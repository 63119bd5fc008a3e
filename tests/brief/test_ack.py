"""`rehydrate ack` (brief/ack.py): the agent's restatement after a compaction, checked against the state at once,
recorded in the journal, and named by the next ledger when it does not match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import hook_answer, rehydrate
from rehydrate.brief import ack
from rehydrate.store.state import State


def _rejected(state: State) -> list[str]:
    return ack.rejected_ids((Path(state.root) / "10_invariants.md").read_text())


def test_the_comparison_wants_the_next_action_s_words_and_the_newest_rejected_ids() -> None:
    ids = ["R-000001", "R-000002", "R-000003", "R-000004"]
    good = ack.compare("write the parser's binding powers now", ids[1:], "write the parser for binding powers", ids)
    assert good == {"matches": True, "covered": 1.0, "missing": [], "unknown": []}
    half = ack.compare("the binding powers", ids[1:], "write the parser for binding powers", ids)
    assert half["matches"] is True and half["covered"] == 0.5
    off = ack.compare("refactor the lexer", ["R-000004", "R-00000f"], "write the parser for binding powers", ids)
    assert off == {"matches": False, "covered": 0.0, "missing": ["R-000002", "R-000003"], "unknown": ["R-00000f"]}


def test_a_matching_restatement_exits_0_and_is_recorded(state: State, repo: Path) -> None:
    (rid,) = _rejected(state)
    r = rehydrate("ack", "--next", "I will write the parser", "--rejected", rid, cwd=repo)
    assert r.code == 0 and "matches the state" in r.out, r
    journal = repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"
    rec = json.loads(journal.read_text().splitlines()[-1])
    assert rec["op"] == "ack" and rec["data"]["matches"] is True and rec["data"]["rejected"] == [rid]
    start = {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s", "cwd": str(repo)}
    _code, out, _ = hook_answer("claude", start, repo)
    assert (
        out is not None
        and "- recency: ok: the agent's restatement at" in out["hookSpecificOutput"]["additionalContext"]
    )


def test_a_wrong_restatement_is_named_to_the_agent_and_in_the_next_ledger(state: State, repo: Path) -> None:
    r = rehydrate("ack", "--next", "refactor the lexer", cwd=repo)
    assert r.code == 1, r
    assert "does NOT match" in r.out and "the newest rejected approaches not named: R-" in r.out
    assert "the state's next allowed action: write the parser" in r.out
    _code, out, _ = hook_answer(
        "claude", {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s", "cwd": str(repo)}, repo
    )
    assert out is not None
    ledger = out["hookSpecificOutput"]["additionalContext"].rsplit("## Ledger", 1)[1]
    assert "recency: degraded: the agent's restatement at" in ledger and "holds 0% of the state's" in ledger
    assert "refactor the lexer" not in ledger  # the restated text is not quoted in the ledger
    assert "confidence: degraded (recency)" in ledger
    assert "degraded: the agent's restatement" in rehydrate("recover", cwd=repo).out
    state.checkpoint(done="the parser", next="the evaluator")  # a new checkpoint: an older restatement is not said
    assert "restatement" not in rehydrate("recover", cwd=repo).out


def test_the_post_compaction_brief_asks_for_it(state: State, repo: Path) -> None:
    event = {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s", "cwd": str(repo)}
    _code, out, _ = hook_answer("claude", event, repo)
    assert out is not None and "run `rehydrate ack --next" in out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    "args", [["--next", " "], ["--next", "x", "--rejected", "R-zz"], ["--next", "x", "--rejected", "D-1"]]
)
def test_bad_input_is_a_usage_error(state: State, repo: Path, args: list[str]) -> None:
    r = rehydrate("ack", *args, cwd=repo)
    assert r.code == 2 and "Traceback" not in r.err, r


def test_the_json_shape(state: State, repo: Path) -> None:
    (rid,) = _rejected(state)
    data = json.loads(rehydrate("ack", "--next", "write the parser", "--rejected", rid, "--json", cwd=repo).out)
    assert data["command"] == "ack" and data["ok"] is True
    assert {"covered", "missing", "unknown", "state_next"} <= set(data)


def _reply_line(transcript: Path, line: str, record_type: str = "assistant") -> None:
    """A model's reply as Claude Code writes it (an assistant record), holding a line among others."""
    content = [{"type": "text", "text": f"I re-read the brief.\n{line}\nGoing on."}]
    rec = {"type": record_type, "message": {"role": record_type, "content": content}}
    with transcript.open("a") as f:
        f.write(json.dumps(rec, separators=(",", ":")) + "\n")


def _given(repo: Path, transcript: Path) -> str:
    event = {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s", "cwd": str(repo)}
    _code, out, err = hook_answer("claude", {**event, "transcript_path": str(transcript)}, repo)
    assert out is not None, err
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


def _stop(repo: Path, transcript: Path) -> None:
    from conftest import run_hook

    event = {"hook_event_name": "Stop", "session_id": "s", "cwd": str(repo), "transcript_path": str(transcript)}
    assert run_hook("claude", event, repo)[:2] == (0, "")


def _acks(repo: Path) -> list[dict[str, object]]:
    journal = repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"
    return [r["data"] for r in map(json.loads, journal.read_text().splitlines()) if r["op"] == "ack"]


def test_a_marked_line_in_the_reply_is_checked_once_and_named_by_the_next_ledger(state: State, repo: Path) -> None:
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    brief = _given(repo, transcript)
    assert "`rehydrate ack: next: <the next action>; rejected: <ids>`" in brief
    # the brief itself holds the words: only the model's own records count
    _reply_line(transcript, brief.split("\n", 1)[0], record_type="user")
    _stop(repo, transcript)
    assert _acks(repo) == []
    _reply_line(transcript, "**rehydrate ack: next: refactor the lexer; rejected: R-000000**")
    _stop(repo, transcript)
    _stop(repo, transcript)  # the same line: recorded once
    (data,) = _acks(repo)
    assert data["via"] == "reply" and data["matches"] is False and data["unknown"] == ["R-000000"]
    ledger = rehydrate("recover", cwd=repo).out
    assert "degraded: the agent's restatement at" in ledger and "refactor the lexer" not in ledger
    (rid,) = _rejected(state)
    _reply_line(transcript, f"rehydrate ack: next: write the parser now; rejected: {rid}")
    _stop(repo, transcript)
    assert [a["matches"] for a in _acks(repo)] == [False, True]
    assert "ok: the agent's restatement at" in rehydrate("recover", cwd=repo).out


def test_a_marked_line_in_a_transcript_written_after_the_brief_is_read(state: State, repo: Path) -> None:
    """The transcript was not there when the brief was given (recorded with no size): all of it came after."""
    transcript = repo.parent / "later.jsonl"
    _given(repo, transcript)
    _stop(repo, transcript)  # still not there: nothing to read, nothing recorded
    assert _acks(repo) == []
    _reply_line(transcript, "rehydrate ack: next: refactor the lexer")
    _stop(repo, transcript)
    assert [a["via"] for a in _acks(repo)] == ["reply"]


def test_the_marked_line_s_parts() -> None:
    assert ack.parse("x rehydrate ack: next: write it; rejected: R-00000a, R-00000b, nonsense") == (
        "write it",
        ["R-00000a", "R-00000b"],
    )
    assert ack.parse("rehydrate ack: write it") == ("write it", [])


def test_the_next_brief_reads_a_marked_line_while_it_holds_the_state_s_lock(state: State, repo: Path) -> None:
    """SessionStart checks the reply's marked line inside the brief's locked read: it must not wait on a lock of
    its own (it once did, for ever)."""
    from conftest import run_hook

    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    _given(repo, transcript)
    _reply_line(transcript, "rehydrate ack: next: refactor the lexer")
    event = {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s2", "cwd": str(repo)}
    code, out, err = run_hook("claude", event, repo, timeout=30)
    assert code == 0, err
    ledger = json.loads(out)["hookSpecificOutput"]["additionalContext"].rsplit("## Ledger", 1)[1]
    assert "recency: degraded: the agent's restatement at" in ledger
    assert [a["via"] for a in _acks(repo)] == ["reply"]


def test_a_marked_line_in_a_tool_s_input_or_thinking_is_not_a_restatement(state: State, repo: Path) -> None:
    """The agent documenting the syntax (a file it writes, a command, its thinking) restates nothing."""
    transcript = repo.parent / "t.jsonl"
    transcript.write_text("")
    _given(repo, transcript)
    content = [
        {"type": "thinking", "thinking": "rehydrate ack: next: <the next action>"},
        {
            "type": "tool_use",
            "name": "Write",
            "input": {"content": "rehydrate ack: next: <the next action>; rejected: <ids>"},
        },
    ]
    with transcript.open("a") as f:
        f.write(json.dumps({"type": "assistant", "message": {"role": "assistant", "content": content}}) + "\n")
    _stop(repo, transcript)
    assert _acks(repo) == []
