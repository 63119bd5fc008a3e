"""Qwen Code's hook (harness/qwen.py): Claude Code's hooks in Gemini CLI's settings file. Real subprocesses, given
the inputs Qwen Code 0.24.4 sent (tests/fixtures/hooks/qwen/, captured from the real CLI)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from conftest import hook_answer, hook_event, rehydrate
from rehydrate.store.state import State


def qwen(repo: Path, name: str, **changes: object) -> tuple[int, dict[str, Any] | None, str]:
    return hook_answer("qwen", hook_event(repo, "qwen", name, **changes), repo)


def last(state: State) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(Path(state.wal_path).read_text().splitlines()[-1])
    return record


def test_session_start_gives_the_brief_and_after_a_compaction_the_notice(repo: Path, state: State) -> None:
    code, out, err = qwen(repo, "SessionStart-startup")
    assert code == 0 and out is not None, err
    assert out["hookSpecificOutput"]["additionalContext"].startswith("# rehydrate brief")
    assert qwen(repo, "PreCompact-auto")[:2] == (0, None) and last(state)["op"] == "compaction"
    fixture = json.loads(hook_event(repo, "qwen", "PostCompact-auto"))
    assert qwen(repo, "PostCompact-auto")[:2] == (0, None)
    end = last(state)
    assert end["op"] == "compacted"
    expected = hashlib.sha256(fixture["compact_summary"].encode()).hexdigest()
    assert end["data"]["summary_sha256"] == expected and "the summary" not in json.dumps(end)
    out = qwen(repo, "SessionStart-compact")[1]
    assert out is not None and out["hookSpecificOutput"]["additionalContext"].startswith("A context compaction")


def test_a_guarded_call_gets_claude_code_s_decision(repo: Path, state: State) -> None:
    state.reject("Edit db/schema.sql directly", because="migrations", guard="db/*")
    schema = {"file_path": str(repo / "db" / "schema.sql"), "content": "drop table t;\n"}
    out = qwen(repo, "PreToolUse-write_file", tool_input=schema)[1]
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "ask"
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    out = qwen(repo, "PreToolUse-run_shell_command", tool_input={"command": "rm db/schema.sql"})[1]
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert qwen(repo, "PreToolUse-write_file")[:2] == (0, None)  # notes.txt: not guarded


def test_install_writes_millisecond_timeouts_and_uninstall_restores(repo: Path, state: State) -> None:
    assert rehydrate("install", "qwen", cwd=repo).code == 0
    hooks = json.loads((repo / ".qwen" / "settings.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "PreCompact", "PostCompact", "PreToolUse"}
    assert hooks["PreToolUse"][0]["matcher"] == "write_file|edit|run_shell_command"
    assert hooks["SessionStart"][0]["hooks"][0]["timeout"] == 30000 and "matcher" not in hooks["SessionStart"][0]
    assert (repo / "QWEN.md").read_text().count("rehydrate resume") == 1
    assert rehydrate("install", "--check", "qwen", cwd=repo).code == 0
    assert rehydrate("install", "qwen", "--uninstall", cwd=repo).code == 0
    assert not (repo / ".qwen").exists() and not (repo / "QWEN.md").exists()


def test_a_resumed_session_gets_the_brief_not_a_pointer(repo: Path, state: State) -> None:
    """Qwen builds its system prompt, where SessionStart's context goes, again at each resume: nothing of an earlier
    brief is left in it."""
    assert qwen(repo, "SessionStart-startup")[1] is not None
    out = qwen(repo, "SessionStart-startup", source="resume")[1]
    assert out is not None and out["hookSpecificOutput"]["additionalContext"].startswith("# rehydrate brief")
