"""Gemini CLI's hook (harness/gemini.py): its write_file guarded, the brief in every request that carries a
compressed history (BeforeModel), the compaction recorded once.

Gemini CLI's PreCompress is not a compaction.

Gemini fires PreCompress inside its compression service before it decides whether to compress: on every model
request. One `-p` run with two tool calls wrote three `compaction` records and compressed nothing, and BeforeAgent then
told the model "a context compaction just happened" on every prompt. PreCompress is logged as a `precompress` note in
the worktree's journal: no compaction record, no notice, no brief. What confirms a compression is the request that
carries its summary (BeforeModel). Real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.harness.geminicalls import SESSION, carried, gemini, noted, ops

from conftest import HOOK_FIXTURES, hook_answer, hook_event, says_nothing
from rehydrate.store.state import State
from rehydrate.store.wal import since


@pytest.mark.parametrize("trigger", ["auto", "manual"])
def test_pre_compress_is_a_note_not_a_compaction(repo: Path, state: State, trigger: str) -> None:
    before = Path(state.wal_path).read_bytes()
    assert gemini(repo, f"PreCompress-{trigger}")[:2] == (0, None)
    assert Path(state.wal_path).read_bytes() == before  # nothing in the committed log for a model request
    note = noted(repo)[-1]
    assert note["op"] == "precompress"
    note = note["data"]
    assert note == {
        "trigger": trigger,
        "session_id": SESSION,
        "transcript_path": note["transcript_path"],
        "harness": "gemini",  # the transcript's reference, for recency at the next brief or in `recover`
        "host": since.host(),
        "transcript_size": None,
    }


def test_a_run_with_tool_calls_gets_no_compaction_and_no_notice(repo: Path, state: State) -> None:
    """What one `gemini -p` run with two tool calls fires: PreCompress and BeforeModel before each of its three model
    requests, none of them compressed."""
    assert gemini(repo, "SessionStart-startup")[1] is not None
    journal = noted(repo)
    for _ in range(3):
        assert gemini(repo, "PreCompress-auto")[:2] == (0, None)
        assert says_nothing("gemini", hook_event(repo, "gemini", "BeforeModel"), repo)
    assert "compaction" not in ops(state) and "precompress" not in ops(state)
    assert [r["op"] for r in noted(repo)[len(journal) :]] == ["precompress"] * 3  # BeforeModel wrote nothing
    assert state.verify().ok


def test_a_resumed_session_whose_brief_was_compressed_away_gets_the_brief(repo: Path, state: State) -> None:
    assert gemini(repo, "SessionStart-startup")[1] is not None
    out = gemini(repo, "SessionStart-resume")[1]
    assert out is not None and "was given the brief" in out["hookSpecificOutput"]["additionalContext"]  # a pointer
    assert gemini(repo, "BeforeModel-compressed")[1] is not None
    out = gemini(repo, "SessionStart-resume")[1]  # the chat file holds no summary and no brief a request carried
    assert out is not None and "# rehydrate brief" in out["hookSpecificOutput"]["additionalContext"]


def test_gemini_write_on_a_guarded_path(repo: Path, state: State) -> None:
    state.reject("Patch src/auth by hand", because="the auth code is generated", guard="src/auth*")
    code, out, _ = gemini(repo, "BeforeTool-write_file")
    assert code == 0 and out is not None and "Patch src/auth by hand" in out["systemMessage"]
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    out = gemini(repo, "BeforeTool-write_file")[1]
    assert out is not None and out["decision"] == "deny" and "generated" in out["reason"]


def test_only_gemini_cli_s_own_tools_and_events_are_answered(repo: Path, state: State) -> None:
    """Each harness takes only its own tools and events: a tool name or an event of Claude Code or Codex sent to
    `rehydrate hook gemini` gets no answer and writes no record (the installed matchers never send them)."""
    state.record("compaction", {"phase": "post", "session_id": SESSION})
    schema = {"file_path": str(repo / "db" / "schema.sql"), "content": "DROP TABLE users;\n"}
    own = hook_event(repo, "gemini", "BeforeTool-write_file", tool_input=schema)
    code, answer, _ = hook_answer("gemini", own, repo)
    assert code == 0 and answer is not None  # its own tool, the same input: guarded
    patch = {"command": "*** Begin Patch\n*** Update File: db/schema.sql\n@@\n+DROP TABLE users;\n*** End Patch\n"}
    for tool, tool_input in (
        ("Edit", schema),
        ("Write", schema),
        ("NotebookEdit", {"notebook_path": schema["file_path"]}),
        ("Bash", {"command": "rm db/schema.sql"}),
        ("apply_patch", patch),
    ):
        event = hook_event(repo, "gemini", "BeforeTool-write_file", tool_name=tool, tool_input=tool_input)
        assert says_nothing("gemini", event, repo), tool
    for name in ("PreToolUse", "PreCompact", "PostCompact", "Stop"):
        event = hook_event(repo, "gemini", "BeforeTool-write_file", hook_event_name=name, tool_input=schema)
        assert says_nothing("gemini", event, repo), name


def _stringified(event: dict[str, Any]) -> bytes:
    """The bytes Gemini CLI writes to a hook's stdin: JSON.stringify, no spaces, its keys in its order."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_request_is_read_only_as_far_as_its_first_messages() -> None:
    """BeforeModel's input is parsed up to the request's first LOOK messages: what follows is never read, so a
    request of megabytes costs what one of kilobytes does (bench/hooks.py measures it)."""
    from rehydrate.harness import gemini as module

    event = json.loads((HOOK_FIXTURES / "gemini" / "BeforeModel-compressed.json").read_text())
    tail = [{"role": "user", "content": "x" * 1000}] * 10
    event["llm_request"]["messages"] += tail
    for raw in (_stringified(event), json.dumps(event, indent=2).encode()):  # as Gemini sends it, and spaced
        got = module.shallow(raw)
        assert got is not None
        assert got["llm_request"] == {"messages": event["llm_request"]["messages"][: module.LOOK]}
        assert {k: got[k] for k in got if k != "llm_request"} == {k: event[k] for k in event if k != "llm_request"}
        at = raw.rindex(b'"x')
        broken = raw[:at] + b"'" + raw[at + 1 :]  # a message past the first LOOK that is not JSON: never parsed
        assert module.shallow(broken) == got
    assert module.shallow(b'{"hook_event_name": "BeforeTool", "llm_request": {}}') is None  # another event
    tricky = {**event, "cwd": 'a"llm_request'}  # the key inside a value before the request: the input is parsed whole
    assert module.shallow(_stringified(tricky)) is None


def test_a_five_megabyte_request_gets_its_answer(repo: Path, state: State) -> None:
    event = json.loads(hook_event(repo, "gemini", "BeforeModel-compressed"))
    event["llm_request"]["messages"] += [{"role": "user", "content": "y" * 50_000}] * 100
    code, out, err = hook_answer("gemini", _stringified(event), repo)
    assert code == 0, err
    assert "# rehydrate brief" in carried(out)[0]["content"]


def test_installing_again_moves_an_older_install_from_before_agent_to_before_model(repo: Path, state: State) -> None:
    """An install by an earlier version put the brief after a compression at BeforeAgent: installing again takes
    rehydrate's groups out of every event and puts the current ones in, the user's own hooks kept."""
    from conftest import rehydrate

    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    mine = {"hooks": [{"type": "command", "command": "echo mine", "timeout": 1000}]}
    ours = {"hooks": [{"type": "command", "command": "rehydrate hook gemini", "timeout": 30000}]}
    settings.write_text(json.dumps({"hooks": {"BeforeAgent": [mine, ours]}}))
    assert rehydrate("install", "gemini", cwd=repo).code == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["BeforeAgent"] == [mine] and "BeforeModel" in hooks


def test_a_summary_longer_than_the_first_window_is_still_found(repo: Path, state: State) -> None:
    """The request is decoded a window at a time (gemini.STEP), widened while its first messages run past it, up to
    gemini.WINDOW: a summary of 300,000 characters is found."""
    from rehydrate.harness import gemini as module

    event = json.loads(hook_event(repo, "gemini", "BeforeModel-compressed"))
    event["llm_request"]["messages"][0]["content"] += "s" * 300_000
    assert module.STEP < 300_000 < module.WINDOW
    got = module.shallow(_stringified(event))
    assert got is not None and module.summary_at(got["llm_request"]["messages"]) == 0
    messages = carried(hook_answer("gemini", _stringified(event), repo)[1])
    assert "A context compaction just happened" in messages[0]["content"]


def test_only_a_before_model_input_is_capped_and_a_cut_first_message_is_left_alone(repo: Path, state: State) -> None:
    """read_cap caps an input only when its own event is BeforeModel (a tool's input that holds those words is read
    whole); a request whose first message runs past the window (a prompt of megabytes, the session's brief at its
    start) is not taken for one without a brief."""
    from rehydrate.harness import gemini as module

    tool = json.loads(hook_event(repo, "gemini", "BeforeTool-write_file"))
    tool["tool_input"] = {"content": '"BeforeModel" "llm_request": ' + "x" * 200_000, "file_path": "a.txt"}
    assert module.read_cap(_stringified(tool)[:65536]) is None
    event = json.loads(hook_event(repo, "gemini", "BeforeModel"))
    event["llm_request"]["messages"][0]["content"] += "p" * (2 * module.WINDOW)
    got = module.shallow(_stringified(event))
    assert got is not None and got["llm_request"].get("cut") is True
    assert says_nothing("gemini", _stringified(event), repo)
