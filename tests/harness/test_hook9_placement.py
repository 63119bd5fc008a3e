"""Issue 9 item 8: the compaction notice is worded for where it lands, and one compaction gets one brief.

Claude Code puts the SessionStart brief before the compaction summary, in the same message: the notice must not say
"the conversation above". After `/compact` then `--resume`, the resumed conversation already holds the brief the
compaction's SessionStart gave: the resume gets a one-line pointer, not a second brief. Real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from test_hook_claude import common, hook, records

from rehydrate import brief
from rehydrate.store.state import State

SESSION = "9f1c7d2e-0000-4000-8000-000000000001"


def context(repo: Path, name: str, **fields: object) -> str:
    code, out, err = hook(common(repo, name, **fields), repo)
    assert code == 0, err
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def compact(repo: Path, session: str = SESSION) -> str:
    """What Claude Code 2.1.332 runs for `/compact`, in its order: PreCompact, SessionStart compact, PostCompact."""
    assert hook(common(repo, "PreCompact", trigger="manual", custom_instructions="", session_id=session), repo)[0] == 0
    brief = context(repo, "SessionStart", source="compact", session_id=session)
    assert hook(common(repo, "PostCompact", trigger="manual", compact_summary="s", session_id=session), repo)[0] == 0
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
    last = records(state)[-2]  # the brief; PostCompact's record follows it
    assert last["op"] == "resume" and last["data"]["session_id"] == SESSION
    assert records(state)[-1]["op"] == "compacted"
    before = Path(state.wal_path).read_bytes()
    pointer = context(repo, "SessionStart", source="resume")
    assert not is_brief(pointer) and "\n" not in pointer and len(pointer) < 300
    assert f"WAL record {last['seq']}" in pointer and "rehydrate resume" in pointer
    assert Path(state.wal_path).read_bytes() == before  # a pointer is not a brief: nothing logged
    assert "\n" not in context(repo, "SessionStart", source="resume")  # and again on a second resume


def test_a_startup_brief_then_resume_gives_a_pointer(repo: Path, state: State) -> None:
    assert is_brief(context(repo, "SessionStart", source="startup"))
    assert "\n" not in context(repo, "SessionStart", source="resume")


def test_resume_gives_the_whole_brief_when_the_conversation_may_lack_it(repo: Path, state: State) -> None:
    assert is_brief(context(repo, "SessionStart", source="resume"))  # no brief given to this session yet
    assert is_brief(context(repo, "SessionStart", source="resume", session_id="another"))  # another session's
    # this session compacted after its brief (no SessionStart compact came): the brief went with the old context
    assert hook(common(repo, "PreCompact", trigger="auto"), repo)[0] == 0
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
