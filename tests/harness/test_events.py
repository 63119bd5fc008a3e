"""Session start, compaction and Stop (harness/events.py), as Claude Code calls the hook: JSON on stdin, a real
subprocess, exit 0 whatever happens.

Where the compaction notice lands and how often a brief is given: Claude Code puts the SessionStart
brief before the compaction summary, in the same message, so the notice must not say "the conversation above"; after
`/compact` then `--resume`, the resumed conversation already holds the brief the compaction's SessionStart gave, so the
resume gets a one-line pointer, not a second brief.

The Stop reminder adds no model turn and never loops: Claude Code feeds a Stop hook's
`hookSpecificOutput.additionalContext` to the model as a new turn, then fires Stop again with `stop_hook_active: true`;
a plain `systemMessage` is shown and adds no turn.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import claude_event, records, run_hook
from rehydrate import brief
from rehydrate.store.local import journal
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import since

SESSION = "9f1c7d2e-0000-4000-8000-000000000001"  # claude_event's


def hook(event: dict[str, object] | str | bytes, cwd: Path) -> tuple[int, str, str]:
    return run_hook("claude", event, cwd)


# ------------------------------------------------------------------------------------------------ SessionStart


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_injects_the_brief(repo: Path, state: State, source: str) -> None:
    code, out, err = hook(claude_event(repo, "SessionStart", source=source), repo)
    assert code == 0, err
    answer = json.loads(out)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert len(context) <= 9000  # Claude Code cuts hook output at 10,000
    assert "Ship the parser" in context and "next safe action: write the parser" in context
    assert context.startswith("A context compaction just happened") == (source == "compact")
    assert journal.tail(state, 1)[0]["op"] == "resume"  # the read is logged in the journal, not the WAL
    assert records(state.root)[-1]["op"] == "checkpoint"


def test_session_start_from_a_subfolder_finds_the_state(repo: Path, state: State) -> None:
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    code, out, _ = hook(claude_event(sub, "SessionStart", source="startup"), sub)
    assert code == 0 and "Ship the parser" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


# ------------------------------------------------------------------------------------------------ compaction


def test_pre_compact_and_post_compact_are_recorded(repo: Path, state: State) -> None:
    code, out, _ = hook(claude_event(repo, "PreCompact", trigger="auto", custom_instructions=""), repo)
    assert (code, out) == (0, "")
    pre = records(state.root)[-1]
    capture = pre["data"].pop("capture")  # the transcript named does not exist: the capture's short error form
    assert capture == {"v": 2, "harness": "claude", "since": capture["since"], "error": "no such file"}
    assert pre["op"] == "compaction" and pre["data"] == {
        "phase": "pre",
        "trigger": "auto",
        "session_id": "9f1c7d2e-0000-4000-8000-000000000001",
        "transcript_path": "/home/user/.claude/projects/-home-user-project/9f1c7d2e.jsonl",
        "harness": "claude",
        "host": since.host(),
        "transcript_size": None,  # never written yet: a recovery ignores it, where a file gone since is skipped
    }
    summary = "The user asked for a parser. We decided on Pratt."
    code, out, _ = hook(claude_event(repo, "PostCompact", trigger="manual", compact_summary=summary), repo)
    assert records(state.root)[-1]["op"] == "compacted"  # the same compaction's end: one compaction, one `compaction`
    post = records(state.root)[-1]["data"]
    assert code == 0 and "phase" not in post and post["summary_chars"] == len(summary)
    assert post["summary_sha256"] == wal.sha256(summary.encode()) and summary not in json.dumps(post)
    assert state.verify().ok


def context(repo: Path, name: str, **fields: object) -> str:
    code, out, err = hook(claude_event(repo, name, **fields), repo)
    assert code == 0, err
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def compact(repo: Path, session: str = SESSION) -> str:
    """What Claude Code 2.1.332 runs for `/compact`, in its order: PreCompact, SessionStart compact, PostCompact."""
    assert (
        hook(claude_event(repo, "PreCompact", trigger="manual", custom_instructions="", session_id=session), repo)[0]
        == 0
    )
    brief = context(repo, "SessionStart", source="compact", session_id=session)
    assert (
        hook(claude_event(repo, "PostCompact", trigger="manual", compact_summary="s", session_id=session), repo)[0] == 0
    )
    return brief


def is_brief(text: str) -> bool:
    return "Ship the parser" in text and "next safe action: write the parser" in text


def test_the_notice_does_not_say_where_the_summary_is(repo: Path, state: State) -> None:
    text = compact(repo)
    first = text.split("\n", 1)[0]
    assert first.startswith("A context compaction just happened")
    assert "the summary of the conversation is lossy" in first
    assert "above" not in first and "below" in first  # the brief follows the notice; the summary may come either side
    assert is_brief(text)


def test_compact_then_resume_gives_the_brief_once(repo: Path, state: State) -> None:
    assert is_brief(compact(repo))
    last = journal.tail(state, 1)[0]  # the brief, in the journal; PostCompact's record follows it in the WAL
    assert last["op"] == "resume" and last["data"]["session_id"] == SESSION
    assert records(state.root)[-1]["op"] == "compacted" and last["ts"] < records(state.root)[-1]["ts"]
    before = Path(state.wal_path).read_bytes()
    pointer = context(repo, "SessionStart", source="resume")
    assert not is_brief(pointer) and "\n" not in pointer and len(pointer) < 300
    assert f"journal record {last['seq']}" in pointer and "rehydrate resume" in pointer
    assert Path(state.wal_path).read_bytes() == before  # a pointer is not a brief: nothing logged
    assert "\n" not in context(repo, "SessionStart", source="resume")  # and again on a second resume


def test_a_startup_brief_then_resume_gives_a_pointer(repo: Path, state: State) -> None:
    assert is_brief(context(repo, "SessionStart", source="startup"))
    assert "\n" not in context(repo, "SessionStart", source="resume")


def test_resume_gives_the_whole_brief_when_the_conversation_may_lack_it(repo: Path, state: State) -> None:
    assert is_brief(context(repo, "SessionStart", source="resume"))  # no brief given to this session yet
    assert is_brief(context(repo, "SessionStart", source="resume", session_id="another"))  # another session's
    # this session compacted after its brief (no SessionStart compact came): the brief went with the old context
    assert hook(claude_event(repo, "PreCompact", trigger="auto"), repo)[0] == 0
    assert is_brief(context(repo, "SessionStart", source="resume"))
    state.checkpoint(done="wrote the lexer", next="write the parser")  # written since the brief: it may be stale
    assert is_brief(context(repo, "SessionStart", source="resume"))
    assert "\n" not in context(repo, "SessionStart", source="resume")


def test_other_sessions_compactions_and_briefs_do_not_count(repo: Path, state: State) -> None:
    assert is_brief(compact(repo))
    compact(repo, session="another")  # a compaction and a brief in another session sharing the state
    brief.resume(state)  # and `rehydrate resume` by hand (no session)
    assert "\n" not in context(repo, "SessionStart", source="resume")


def test_a_compaction_without_a_session_id_counts_for_every_session(repo: Path, state: State) -> None:
    assert is_brief(context(repo, "SessionStart", source="startup"))
    state.record("compaction", {"phase": "pre"})
    assert is_brief(context(repo, "SessionStart", source="resume"))


# ------------------------------------------------------------------------------------------------ Stop


def _transcript(path: Path, calls: int, at: str) -> Path:
    lines = [{"type": "user", "timestamp": at, "message": {"role": "user", "content": "go"}}]
    for i in range(calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}
        lines.append({"type": "assistant", "timestamp": at, "message": {"role": "assistant", "content": [block]}})
    lines.append({"type": "assistant", "timestamp": at, "message": {"content": [{"type": "text", "text": "done"}]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"type": "assistant", "torn')
    return path


def test_stop_never_blocks(repo: Path, state: State, tmp_path: Path) -> None:
    """The Stop hook answers with its reminder when configured (a plain systemMessage: no model turn), says nothing
    while a stop hook keeps the agent going, and never answers with a decision that blocks the stop."""
    transcript = _transcript(tmp_path / "session.jsonl", 3, "2999-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2}')
    event = claude_event(repo, "Stop", stop_hook_active=False, transcript_path=str(transcript))
    code, out, err = hook(event, repo)
    answer = json.loads(out)
    assert (code, err) == (0, "") and set(answer) == {"systemMessage"}
    assert answer["systemMessage"].startswith("rehydrate: 3 tool calls since the last checkpoint (")
    assert "rehydrate checkpoint --done" in answer["systemMessage"]
    assert hook({**event, "stop_hook_active": True}, repo) == (0, "", "")  # already continuing: no loop
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2, "block_on_error": true}')
    Path(state.wal_path).write_bytes(b"not a WAL\n")  # an error in the Stop hook: it still never blocks by itself
    code, out, err = hook(claude_event(repo, "Stop", transcript_path=str(transcript)), repo)
    assert code in (0, 2) and '"decision"' not in out and '"block"' not in out


def test_stop_reminds_to_checkpoint_only_when_configured(repo: Path, state: State, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "session.jsonl", 5, "2999-01-01T00:00:00.000Z")
    event = claude_event(repo, "Stop", stop_hook_active=False, transcript_path=str(transcript))
    assert hook(event, repo) == (0, "", "")  # not configured: silent
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 5}')
    code, out, _ = hook(event, repo)
    answer = json.loads(out)
    assert code == 0 and "5 tool calls since the last checkpoint" in answer["systemMessage"]
    assert set(answer) == {"systemMessage"}  # never blocks, adds no model turn
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 6}')
    assert hook(event, repo) == (0, "", "")
    state.checkpoint(done="x", next="y")  # calls stamped before the last checkpoint do not count
    old = _transcript(tmp_path / "old.jsonl", 9, "2000-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 1}')
    assert hook(claude_event(repo, "Stop", transcript_path=str(old)), repo) == (0, "", "")


def test_the_reminder_is_a_plain_system_message(repo: Path, state: State, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "session.jsonl", 3, "2999-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2}')
    code, out, err = hook(claude_event(repo, "Stop", stop_hook_active=False, transcript_path=str(transcript)), repo)
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert list(answer) == ["systemMessage"]  # no additionalContext: nothing the model gets as a new turn
    assert answer["systemMessage"].startswith("rehydrate: 3 tool calls since the last checkpoint (")
    assert "rehydrate checkpoint --done" in answer["systemMessage"]
    assert "additionalContext" not in out and "hookSpecificOutput" not in out and "decision" not in out


def test_nothing_at_all_while_a_stop_hook_keeps_the_agent_going(repo: Path, state: State, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "session.jsonl", 3, "2999-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2}')
    before = Path(state.wal_path).read_bytes()
    event = claude_event(repo, "Stop", stop_hook_active=True, transcript_path=str(transcript))
    assert hook(event, repo) == (0, "", "")
    assert Path(state.wal_path).read_bytes() == before  # nothing logged either
    # the same call without the flag reminds: the silence above is the flag's doing
    assert json.loads(hook({**event, "stop_hook_active": False}, repo)[1])["systemMessage"]
