"""The harness registry: one list of harnesses, one module each, and the facts each module holds once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rehydrate import harness
from rehydrate.harness import hook


def test_edit_tools_are_the_union_of_each_harness_s_own() -> None:
    own = [t for name in harness.HOOKS for t in harness.get(name).EDIT_TOOLS]
    assert sorted(harness.EDIT_TOOLS) == sorted(set(own)) and len(own) == len(set(own))


@pytest.mark.parametrize("name", harness.HOOKS)
def test_a_hook_harness_names_its_events_answers_and_install_targets(name: str) -> None:
    module = harness.get(name)
    assert module.TOOL_EVENT in module.EVENTS and module.EVENTS[module.TOOL_EVENT] == "guard"
    assert set(module.EVENTS.values()) <= set(hook.HANDLERS)
    assert set(module.hook_groups("rehydrate hook " + name)) <= set(module.EVENTS)
    deny = json.dumps(module.decision(module.TOOL_EVENT, "deny", "no"))
    assert "deny" in deny and callable(module.targets) and callable(module.trust_checks)


def test_every_target_has_a_module_and_an_unknown_one_is_refused() -> None:
    assert all(callable(harness.get(name).targets) for name in harness.TARGETS)
    with pytest.raises(KeyError):
        harness.get("os")
    answer = hook.run("nope", b"{}")
    assert answer.code == 0 and "no such harness" in answer.stderr


@pytest.mark.parametrize("name", harness.HOOKS)
def test_the_hook_imports_only_the_calling_harness_s_module(name: str, tmp_path: Path) -> None:
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(tmp_path), "tool_input": {}}
    code = (
        "import sys, json; from rehydrate.harness import hook; "
        f"hook.run({name!r}, json.dumps({event!r}).encode()); "
        "print(sorted(m for m in sys.modules if m.startswith('rehydrate.harness.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    loaded = {m.rsplit(".", 1)[1] for m in json.loads(out.stdout.replace("'", '"'))}
    assert name in loaded and not loaded & (set(harness.TARGETS) - {name})
    assert not loaded & {"install", "settings", "trust", "program", "files", "rules"}
