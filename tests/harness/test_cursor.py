"""Cursor's hook (harness/cursor.py): its documented inputs (no `cwd` at sessionStart: the workspace root), each event
answered in Cursor's shapes; install keeps the user's own hooks, --check says what rehydrate cannot see, uninstall
restores the files. Cursor's CLI is installed by a script and needs a sign-in, so these are the documented payloads
(tests/fixtures/hooks/cursor/, SOURCES.md), run through real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import hook_answer, hook_event, rehydrate, says_nothing
from rehydrate.store.state import State


def cursor(repo: Path, name: str, **changes: object) -> tuple[int, dict[str, Any] | None, str]:
    return hook_answer("cursor", hook_event(repo, "cursor", name, **changes), repo)


def ops(state: State) -> list[str]:
    return [json.loads(x)["op"] for x in Path(state.wal_path).read_text().splitlines()]


def test_session_start_finds_the_state_from_the_workspace_root_and_gives_the_brief(repo: Path, state: State) -> None:
    """sessionStart has no cwd (a user hook runs in ~/.cursor): the state is found from workspace_roots."""
    code, out, err = hook_answer("cursor", hook_event(repo, "cursor", "sessionStart"), Path.home())
    assert code == 0 and out is not None, err
    assert set(out) == {"additional_context"} and out["additional_context"].startswith("# rehydrate brief")


@pytest.mark.parametrize(
    ("fixture", "decisions"),
    [
        ("preToolUse-Write", {"ask": "allow", "deny": "deny", "warn": "allow"}),
        ("preToolUse-Shell", {"ask": "allow", "deny": "deny", "warn": "allow"}),
        ("beforeShellExecution", {"ask": "ask", "deny": "deny", "warn": "allow"}),
    ],
)
def test_a_guarded_call_gets_cursor_s_permission(
    repo: Path, state: State, fixture: str, decisions: dict[str, str]
) -> None:
    """Cursor's preToolUse takes allow or deny (an ask is a message, and the call goes ahead);
    beforeShellExecution asks."""
    state.reject("Edit db/schema.sql directly", because="every change needs a migration", guard="db/*")
    for guard, permission in decisions.items():
        Path(state.path("config.json")).write_text(json.dumps({"guard": guard}))
        code, out, err = cursor(repo, fixture)
        assert code == 0 and out is not None, err
        assert out["permission"] == permission, (guard, out)
        assert "Edit db/schema.sql directly" in out["agent_message"] and out["user_message"] == out["agent_message"]


def test_an_unguarded_call_gets_nothing(repo: Path, state: State) -> None:
    state.reject("Edit db/schema.sql directly", because="migrations", guard="db/*")
    assert cursor(repo, "preToolUse-Write", tool_input={"file_path": str(repo / "app.py")})[:2] == (0, None)
    assert cursor(repo, "beforeShellExecution", command="ls")[:2] == (0, None)


def test_pre_compact_is_recorded_and_answers_nothing(repo: Path, state: State) -> None:
    """Cursor's preCompact only observes, and sessionStart does not fire after a compaction: the compaction is
    recorded (the next brief says so), the always-applied rule sends the agent to `rehydrate resume`."""
    for trigger in ("auto", "manual"):
        assert cursor(repo, f"preCompact-{trigger}")[:2] == (0, None)
        assert ops(state)[-1] == "compaction"
    data = json.loads(Path(state.wal_path).read_text().splitlines()[-1])["data"]
    assert data["trigger"] == "manual" and data["session_id"] == "c7e2a9f4-1b3d-4e5f-8a6b-9c0d1e2f3a4b"


def test_stop_says_nothing(repo: Path, state: State) -> None:
    assert says_nothing("cursor", hook_event(repo, "cursor", "stop"), repo)


def test_install_keeps_the_user_s_hooks_and_uninstall_restores(repo: Path, state: State) -> None:
    hooks_file = repo / ".cursor" / "hooks.json"
    hooks_file.parent.mkdir()
    original = b'{\n  "version": 1,\n  "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}\n}\n'
    hooks_file.write_bytes(original)
    assert rehydrate("install", "cursor", cwd=repo).code == 0
    hooks = json.loads(hooks_file.read_text())
    assert hooks["version"] == 1 and hooks["hooks"]["afterFileEdit"] == [{"command": "./format.sh"}]
    assert set(hooks["hooks"]) == {
        "afterFileEdit",
        "sessionStart",
        "preCompact",
        "preToolUse",
        "beforeShellExecution",
        "stop",
    }
    assert hooks["hooks"]["preToolUse"][0]["matcher"] == "Write|Delete|Shell"
    assert all(
        e["command"].endswith("hook cursor") for k, v in hooks["hooks"].items() if k != "afterFileEdit" for e in v
    )
    assert "alwaysApply: true" in (repo / ".cursor" / "rules" / "rehydrate.mdc").read_text()
    r = rehydrate("install", "--check", "cursor", cwd=repo)
    assert r.code == 0 and "cannot see whether" in r.out, r.out
    assert rehydrate("install", "cursor", "--uninstall", cwd=repo).code == 0
    assert hooks_file.read_bytes() == original and not (repo / ".cursor" / "rules").exists()


def test_a_hooks_file_changed_since_the_install_loses_only_rehydrate_s_entries(repo: Path, state: State) -> None:
    assert rehydrate("install", "cursor", cwd=repo).code == 0
    assert (repo / ".cursor" / "hooks.json").exists()
    (repo / ".cursor" / "hooks.json").write_text(  # changed since: only rehydrate's entries are taken out
        json.dumps({**json.loads((repo / ".cursor" / "hooks.json").read_text()), "note": "mine"})
    )
    assert rehydrate("install", "cursor", "--uninstall", cwd=repo).code == 0
    assert json.loads((repo / ".cursor" / "hooks.json").read_text()) == {"version": 1, "note": "mine"}


def test_a_write_s_contents_are_guarded_by_contains(repo: Path, state: State) -> None:
    """Cursor's Write sends its text as `contents`: a rejected approach watched by what is written sees it."""
    state.reject("Call eval on input", because="it ran user code", guard="src/*", contains="eval(")
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    write = {"file_path": str(repo / "src" / "a.py"), "contents": "x = eval(line)\n"}
    out = cursor(repo, "preToolUse-Write", tool_input=write)[1]
    assert out is not None and out["permission"] == "deny"
    write["contents"] = "x = int(line)\n"
    assert cursor(repo, "preToolUse-Write", tool_input=write)[:2] == (0, None)
    decoy = {"path": str(repo / "notes.txt"), "file_path": str(repo / "src" / "b.py"), "contents": "eval(1)"}
    out = cursor(repo, "preToolUse-Write", tool_input=decoy)[1]  # its file_path is the one written
    assert out is not None and out["permission"] == "deny"


def test_a_failed_session_start_still_gets_the_reduced_brief(repo: Path, state: State) -> None:
    (repo / "state" / "wal" / "agent.jsonl").write_text("<<<<<<< HEAD\n=======\n>>>>>>> theirs\n")
    code, out, err = cursor(repo, "sessionStart")
    assert code == 0 and out is not None and "additional_context" in out, err
