"""GitHub Copilot CLI's hook (harness/copilot.py): its camelCase inputs, which name no event (the command does), read
as the handlers read them; each event answered in Copilot's shapes; install, --check and uninstall. Real
subprocesses, given the inputs Copilot CLI 1.0.102 sent (tests/fixtures/hooks/copilot/, SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import hook_answer, hook_event, rehydrate, says_nothing
from rehydrate.store.state import State

SESSION = "87e11a42-36e0-48e5-876f-3e61e9d43b3f"  # the fixtures' session


def copilot(repo: Path, name: str, **changes: object) -> tuple[int, dict[str, Any] | None, str]:
    """`rehydrate hook copilot <event>` in repo, given the fixture `name` (its event: the name up to its `-`)."""
    return hook_answer(f"copilot {name.split('-', maxsplit=1)[0]}", hook_event(repo, "copilot", name, **changes), repo)


def ops(state: State) -> list[str]:
    return [json.loads(x)["op"] for x in Path(state.wal_path).read_text().splitlines()]


@pytest.mark.parametrize("source", ["new", "resume"])
def test_session_start_gives_the_brief_as_top_level_additional_context(repo: Path, state: State, source: str) -> None:
    """Copilot rebuilds sessionStart's context at every start and resume and keeps none of it: the brief each time,
    never a pointer to an earlier one."""
    for _ in range(2):
        code, out, err = copilot(repo, f"sessionStart-{source}")
        assert code == 0 and out is not None, err
        assert set(out) == {"additionalContext"} and out["additionalContext"].startswith("# rehydrate brief")


@pytest.mark.parametrize(
    ("fixture", "tool_args"),
    [
        ("preToolUse-edit", {"path": "db/schema.sql", "old_str": "a", "new_str": "b"}),
        ("preToolUse-edit", {"path": "db/schema.sql", "file_text": "drop table t;\n"}),
        ("preToolUse-bash", {"command": "rm db/schema.sql", "description": "remove"}),
    ],
)
@pytest.mark.parametrize("guard", ["ask", "deny", "warn"])
def test_a_guarded_call_gets_copilot_s_decision(
    repo: Path, state: State, fixture: str, tool_args: dict[str, Any], guard: str
) -> None:
    state.reject("Edit db/schema.sql directly", because="every change needs a migration", guard="db/*")
    Path(state.path("config.json")).write_text(json.dumps({"guard": guard}))
    tool = "create" if "file_text" in tool_args else fixture.split("-")[1]
    code, out, err = copilot(repo, fixture, toolName=tool, toolArgs=tool_args)
    assert code == 0 and out is not None, err
    if guard == "warn":  # context for the model after the tool's result; the call runs
        assert set(out) == {"additionalContext"} and "Edit db/schema.sql directly" in out["additionalContext"]
    else:
        assert out["permissionDecision"] == guard and "Edit db/schema.sql directly" in out["permissionDecisionReason"]


def test_tool_args_given_as_a_json_string_are_read_too(repo: Path, state: State) -> None:
    state.reject("Edit db/schema.sql directly", because="migrations", guard="db/*")
    args = json.dumps({"path": "db/schema.sql", "old_str": "a", "new_str": "b"})
    out = copilot(repo, "preToolUse-edit", toolArgs=args)[1]
    assert out is not None and out["permissionDecision"] == "ask"


def test_an_unguarded_call_and_a_read_get_nothing(repo: Path, state: State) -> None:
    state.reject("Edit db/schema.sql directly", because="migrations", guard="db/*")
    assert copilot(repo, "preToolUse-edit", toolArgs={"path": "app.py", "old_str": "a", "new_str": "b"})[:2] == (
        0,
        None,
    )
    assert copilot(repo, "preToolUse-bash")[:2] == (0, None)


def test_after_a_compaction_the_next_prompt_or_tool_result_carries_the_brief_once(repo: Path, state: State) -> None:
    """preCompact records the compaction (its answer is ignored by Copilot); Copilot then drops sessionStart's
    context and sends no event after the compaction: the next userPromptSubmitted or postToolUse gives the brief with
    the notice, once."""
    assert copilot(repo, "sessionStart-new")[1] is not None
    assert copilot(repo, "postToolUse")[:2] == (0, None)  # no compaction yet
    assert copilot(repo, "preCompact-auto")[:2] == (0, None)
    assert ops(state)[-1] == "compaction"
    code, out, err = copilot(repo, "postToolUse")
    assert code == 0 and out is not None, err
    assert out["additionalContext"].startswith("A context compaction just happened")
    assert copilot(repo, "userPromptSubmitted")[:2] == (0, None)  # once
    assert copilot(repo, "preCompact-manual")[:2] == (0, None)
    out = copilot(repo, "userPromptSubmitted")[1]
    assert out is not None and "# rehydrate brief" in out["additionalContext"]
    # another session's compaction leaves this one as it was
    assert copilot(repo, "preCompact-auto", sessionId="another")[:2] == (0, None)
    assert copilot(repo, "postToolUse")[:2] == (0, None)


def test_agent_stop_never_blocks_unless_the_reminder_is_asked_for(repo: Path, state: State, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    lines = [
        {"type": "tool.execution_complete", "timestamp": f"2099-01-01T00:00:0{i}.000Z", "data": {}} for i in range(3)
    ]
    events.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert copilot(repo, "agentStop", transcriptPath=str(events))[:2] == (0, None)
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2}')
    out = copilot(repo, "agentStop", transcriptPath=str(events))[1]
    assert out is not None and out["decision"] == "block" and "3 tool calls" in out["reason"]
    assert copilot(repo, "agentStop", transcriptPath=str(events), stop_hook_active=True)[:2] == (0, None)


def test_an_event_name_is_required_and_only_copilot_takes_one(repo: Path, state: State) -> None:
    """Without the event its command names, a Copilot input is nothing the hook answers; the other harnesses take no
    event name (their inputs name the event)."""
    assert says_nothing("copilot", hook_event(repo, "copilot", "sessionStart-new"), repo)
    code, out, err = hook_answer("claude SessionStart", hook_event(repo, "claude", "SessionStart-startup"), repo)
    assert (code, out) == (0, None) and "takes no event name" in err
    assert says_nothing("copilot notAnEvent", hook_event(repo, "copilot", "sessionStart-new"), repo)


def test_an_unreadable_input_still_gets_its_event_s_answer(repo: Path, state: State) -> None:
    state.reject("Edit db/schema.sql directly", because="migrations", guard="db/*")
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    cut = hook_event(repo, "copilot", "preToolUse-edit")[:-40]  # the input torn before its end
    code, out, err = hook_answer("copilot preToolUse", cut, repo)
    assert code == 0 and out is not None and out["permissionDecision"] == "deny"
    assert "could not read the hook's input" in err


def test_install_check_and_uninstall(repo: Path, state: State, tmp_path: Path) -> None:
    home = tmp_path / "copilot-home"
    env = {"COPILOT_HOME": str(home)}
    instructions = repo / ".github" / "copilot-instructions.md"
    instructions.parent.mkdir()
    instructions.write_bytes(b"# Ours\n")
    assert rehydrate("install", "copilot", cwd=repo, env=env).code == 0
    hooks = json.loads((repo / ".github" / "hooks" / "rehydrate.json").read_text())
    assert hooks["version"] == 1
    assert set(hooks["hooks"]) == {
        "sessionStart",
        "userPromptSubmitted",
        "preToolUse",
        "postToolUse",
        "preCompact",
        "agentStop",
    }
    for event, entries in hooks["hooks"].items():
        assert [e["type"] for e in entries] == ["command"]
        assert entries[0]["bash"].endswith(f"hook copilot {event}") and entries[0]["powershell"].endswith(event)
    r = rehydrate("install", "--check", "copilot", cwd=repo, env=env)
    assert r.code == 1 and "Copilot has not trusted" in r.out and "trustedFolders" in r.out
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"trustedFolders": [str(repo)]}))
    r = rehydrate("install", "--check", "copilot", cwd=repo, env=env)
    assert r.code == 0, r.out
    assert rehydrate("install", "copilot", "--uninstall", cwd=repo, env=env).code == 0
    assert instructions.read_bytes() == b"# Ours\n" and not (repo / ".github" / "hooks").exists()
