"""Claude Code's hook (harness/claude.py): its documented SessionStart inputs; and the Claude Code plugin and Agent
Skill in plugin/: well-formed, and the same hooks `rehydrate install` writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HOOK_FIXTURES, hook_answer, hook_event
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
