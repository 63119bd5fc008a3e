"""The hook after a task-tool call (harness/tasks.py), through the real `rehydrate hook` in a subprocess: each
harness's task list mirrored into the state as it changes, and shown by the next session's brief."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import hook_answer, hook_event, records, run_hook, says_nothing
from rehydrate.harness import claude, codex, gemini
from rehydrate.store.state import State

SESSION = "3f6c1a2e-8b4d-4e7a-9c15-2d7e0b9a4f61"  # the Claude Code fixtures' session


def _items(repo: Path) -> list[str]:
    return [ln for ln in (repo / "state" / "30_tasks.md").read_text().splitlines() if ln.startswith("- [")]


def _post(repo: Path, name: str, **changes: object) -> None:
    code, out, err = run_hook("claude", hook_event(repo, "claude", f"PostToolUse-{name}", **changes), repo)
    assert (code, out) == (0, ""), err


def test_claude_task_tools_are_folded_into_the_list(state: State, repo: Path) -> None:
    _post(repo, "TaskCreate")
    assert _items(repo) == ["- [pending] #1 Write the parser"]
    assert "  Parse the config grammar into an AST" in (repo / "state" / "30_tasks.md").read_text()
    _post(repo, "TaskCreate", tool_input={"subject": "Wire the CLI"}, tool_response={"task": {"id": "2"}})
    _post(repo, "TaskUpdate")
    assert _items(repo) == ["- [in_progress] #1 Write the parser", "- [pending] #2 Wire the CLI"]
    _post(repo, "TaskUpdate", tool_input={"taskId": "2", "status": "deleted"}, tool_response={"success": True})
    assert _items(repo) == ["- [in_progress] #1 Write the parser"]
    rec = records(state.root)[-1]
    assert rec["op"] == "tasks" and rec["data"]["session"] == SESSION
    assert rec["data"]["source"] == "Claude Code's task tools"


def test_a_task_list_replaces_the_list_and_a_read_that_changes_nothing_records_nothing(
    state: State, repo: Path
) -> None:
    _post(repo, "TaskList")
    assert _items(repo) == ["- [in_progress] #1 Write the parser", "- [pending] #2 Wire the CLI (blocked by #1)"]
    count = len(records(state.root))
    _post(repo, "TaskList")
    assert len(records(state.root)) == count


def test_claude_code_s_own_store_gives_the_list_whole(
    state: State, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where Claude Code keeps its task list on disk, the hook takes it from there: the tasks the hook never saw
    made (before the hooks were installed) are in it too."""
    store = tmp_path / "claude-home" / "tasks" / SESSION
    store.mkdir(parents=True)
    for ident, subject, status in (("1", "Made before", "completed"), ("2", "Write the parser", "in_progress")):
        (store / f"{ident}.json").write_text(json.dumps({"id": ident, "subject": subject, "status": status}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    _post(repo, "TaskUpdate")
    assert _items(repo) == ["- [in_progress] #2 Write the parser", "- [completed] #1 Made before"]


def test_a_new_session_starts_a_new_list(state: State, repo: Path) -> None:
    """Claude Code counts task ids from 1 in each session: a call from another session is not folded into the last
    session's list."""
    _post(repo, "TaskList")
    _post(repo, "TaskCreate", session_id="another-session", tool_response={"task": {"id": "1"}})
    assert _items(repo) == ["- [pending] #1 Write the parser"]
    assert records(state.root)[-1]["data"]["session"] == "another-session"


def test_todowrite_update_plan_and_write_todos_carry_the_whole_list(state: State, repo: Path) -> None:
    expected = ["- [in_progress] Write the parser", "- [pending] Wire the CLI"]
    for harness, name in (
        ("claude", "PostToolUse-TodoWrite"),
        ("codex", "PostToolUse-update_plan"),
        ("gemini", "AfterTool-write_todos"),
    ):
        (repo / "state" / "30_tasks.md").unlink(missing_ok=True)
        code, out, err = run_hook(harness, hook_event(repo, harness, name, session_id=harness), repo)
        assert (code, out) == (0, ""), err
        assert _items(repo) == expected, harness
    sources = [r["data"]["source"] for r in records(state.root) if r["op"] == "tasks"]
    assert sources == ["Claude Code's TodoWrite", "Codex CLI's update_plan", "Gemini CLI's write_todos"]


def test_other_tools_and_no_state_say_nothing_and_write_nothing(state: State, repo: Path, tmp_path: Path) -> None:
    other = hook_event(repo, "claude", "PostToolUse-TaskCreate", tool_name="Read", tool_input={"file_path": "x"})
    assert says_nothing("claude", other, repo)
    bare = tmp_path / "bare"
    bare.mkdir()
    assert says_nothing("claude", hook_event(bare, "claude", "PostToolUse-TaskCreate"), bare)
    assert not (bare / "state").exists()


@pytest.mark.parametrize(
    "changes",
    [
        {"tool_input": "not an object"},
        {"tool_response": ["not", "an", "object"]},
        {"tool_input": {"todos": "nope"}, "tool_name": "TodoWrite"},
        {"tool_input": {"taskId": True}, "tool_name": "TaskUpdate"},
    ],
)
def test_a_malformed_call_records_nothing_and_never_fails(state: State, repo: Path, changes: dict[str, object]) -> None:
    count = len(records(state.root))
    code, out, err = run_hook("claude", hook_event(repo, "claude", "PostToolUse-TaskCreate", **changes), repo)
    assert code == 0 and out == "" and "Traceback" not in err
    assert len(records(state.root)) in (count, count + 1)  # a TaskCreate with no usable input still makes a task
    assert not (repo / "state" / "30_tasks.md").exists() or _items(repo)


def test_the_list_survives_a_compaction_a_clear_and_a_new_session(state: State, repo: Path) -> None:
    _post(repo, "TaskList")
    for source in ("compact", "clear", "startup"):
        event = hook_event(repo, "claude", f"SessionStart-{source}", session_id=f"new-{source}")
        code, out, err = hook_answer("claude", event, repo)
        assert code == 0 and out is not None, err
        context = out["hookSpecificOutput"]["additionalContext"]
        section = context.split("## Task list\n", 1)[1].split("\n## ", 1)[0]
        assert "> - [in_progress] #1 Write the parser" in section and "> - [pending] #2 Wire the CLI" in section


def test_install_asks_for_the_task_tools_and_the_writing_tools_only() -> None:
    """The matchers: the task tools, and the tools that write (for the guard's check by effect); no other tool (a
    read, a search) pays for the hook."""
    assert claude.hook_groups("x")["PostToolUse"][0]["matcher"] == (
        "Edit|Write|MultiEdit|NotebookEdit|Bash|TaskCreate|TaskUpdate|TaskList|TaskGet|TodoWrite|mcp__.*"
    )
    assert codex.hook_groups("x")["PostToolUse"][0]["matcher"] == "Bash|apply_patch|update_plan"
    assert gemini.hook_groups("x")["AfterTool"][0]["matcher"] == "write_file|replace|run_shell_command|write_todos"


def test_a_subagent_s_list_is_not_the_session_s(state: State, repo: Path) -> None:
    """Inside a subagent Claude Code adds agent_id to the event: its own TodoWrite does not replace the list."""
    _post(repo, "TaskList")
    before = _items(repo)
    _post(repo, "TodoWrite", agent_id="agent-7", agent_type="Explore")
    assert _items(repo) == before
