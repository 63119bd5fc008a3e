"""The Claude Code plugin and Agent Skill in plugin/: well-formed, and the same hooks `rehydrate install` writes."""

from __future__ import annotations

import json
from pathlib import Path

from rehydrate.harness import claude

ROOT = Path(__file__).parent.parent.parent


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
