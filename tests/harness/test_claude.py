"""Claude Code's hook (harness/claude.py): its documented SessionStart inputs; and the Claude Code plugin and Agent
Skill in plugin/: well-formed, and the same hooks `rehydrate install` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HOOK_FIXTURES, hook_answer, hook_event, says_nothing
from rehydrate.harness import claude
from rehydrate.store.state import State

ROOT = Path(__file__).parent.parent.parent


@pytest.mark.parametrize("name", sorted(p.stem for p in (HOOK_FIXTURES / "claude").glob("SessionStart-*.json")))
def test_claude_session_start_fixtures(repo: Path, state: State, name: str) -> None:
    code, out, err = hook_answer("claude", hook_event(repo, "claude", name), repo)
    assert code == 0 and out is not None, err
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "Ship the parser" in context and len(context) <= 9000
    assert context.startswith("A context compaction just happened") == name.endswith("compact")


def test_marketplace_lists_the_plugin() -> None:
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] and market["owner"]["name"]
    (entry,) = market["plugins"]
    assert entry["name"] == "rehydrate" and (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file()


def test_plugin_manifest_and_hooks() -> None:
    plugin = ROOT / "plugin"
    assert json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())["name"] == "rehydrate"
    assert sorted(p.name for p in (plugin / ".claude-plugin").iterdir()) == ["plugin.json"]  # only the manifest
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks == claude.hook_groups("rehydrate hook claude")


def test_skill_frontmatter() -> None:
    text = (ROOT / "plugin" / "skills" / "rehydrate" / "SKILL.md").read_text()
    head, _, body = text.removeprefix("---\n").partition("\n---\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    assert fields["name"] == "rehydrate" and len(fields["description"]) <= 1536
    for command in ("rehydrate resume", "rehydrate invariant", "rehydrate reject", "rehydrate checkpoint", "handoff"):
        assert command in body


SCHEMA_PATCH = "*** Begin Patch\n*** Update File: db/schema.sql\n@@\n+DROP TABLE users;\n*** End Patch\n"


def test_only_claude_code_s_own_tools_and_events_are_answered(repo: Path, state: State) -> None:
    """Each harness takes only its own tools and events: a tool name or an event of Codex or Gemini CLI sent to
    `rehydrate hook claude` gets no answer and writes no record (the installed matchers never send them)."""
    state.record("compaction", {"phase": "post", "session_id": "9f1c7d2e-0000-4000-8000-000000000001"})
    schema = {"file_path": str(repo / "db" / "schema.sql"), "content": "DROP TABLE users;\n"}
    code, answer, _ = hook_answer("claude", hook_event(repo, "claude", "PreToolUse-Write", tool_input=schema), repo)
    assert code == 0 and answer is not None  # its own tool, the same input: guarded
    for tool, tool_input in (
        ("write_file", schema),
        ("replace", schema),
        ("run_shell_command", {"command": "rm db/schema.sql"}),
        ("apply_patch", {"command": SCHEMA_PATCH}),
    ):
        event = hook_event(repo, "claude", "PreToolUse-Write", tool_name=tool, tool_input=tool_input)
        assert says_nothing("claude", event, repo), tool
    for name in ("BeforeTool", "BeforeAgent", "PreCompress"):
        event = hook_event(repo, "claude", "PreToolUse-Edit", hook_event_name=name, tool_input=schema, trigger="auto")
        assert says_nothing("claude", event, repo), name
