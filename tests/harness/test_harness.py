"""The harness registry: one list of harnesses, one module each, and the facts each module holds once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rehydrate import harness
from rehydrate.audit.symptoms import EDIT_TOOLS as AUDIT_EDIT_TOOLS
from rehydrate.harness import hook
from rehydrate.transcripts import claude as transcripts_claude
from rehydrate.transcripts import codex as transcripts_codex


def test_edit_tools_are_each_harness_s_own_and_the_same_as_the_transcript_format_s() -> None:
    """Each harness names its own edit tools (no tool is two harnesses'); Claude Code's and Codex's, and their home
    folders, are their transcript format's (transcripts.claude, transcripts.codex: the hook holds a copy of the
    names, so that a tool call loads no transcript module, and only the two hold them); the audit's are the union
    of the formats it reads."""
    # the harnesses whose transcripts are read (a fork may share its parent's tools: Qwen Code Gemini CLI's
    # write_file; Cursor names its own Write)
    own = [t for name in ("claude", "codex", "gemini") for t in harness.get(name).EDIT_TOOLS]
    assert len(own) == len(set(own)) and {"Edit", "apply_patch", "write_file"} <= set(own)
    for name in harness.HOOKS:
        tools = harness.get(name).EDIT_TOOLS
        assert len(tools) == len(set(tools)), name
    for name, fmt in (("claude", transcripts_claude), ("codex", transcripts_codex)):
        assert harness.get(name).EDIT_TOOLS == fmt.EDIT_TOOLS
        assert harness.get(name).home() == fmt.home()
    src = Path(harness.__file__).parent.parent
    for fact, place in (
        ('"CLAUDE_CONFIG_DIR"', "claude/__init__.py"),
        ('"CODEX_HOME"', "codex.py"),
        ('"MultiEdit"', "claude/__init__.py"),
    ):
        holders = [p.relative_to(src).as_posix() for p in sorted(src.rglob("*.py")) if fact in p.read_text()]
        copy = ["harness/claude.py"] if fact == '"MultiEdit"' else []
        assert holders == [*copy, f"transcripts/{place}"], (fact, holders)
    assert harness.get("claude").TASK_TOOLS == transcripts_claude.TASK_TOOLS
    assert sorted(AUDIT_EDIT_TOOLS) == sorted({*transcripts_claude.EDIT_TOOLS, *transcripts_codex.EDIT_TOOLS})
    assert not set(AUDIT_EDIT_TOOLS) & set(harness.get("gemini").EDIT_TOOLS)  # no Gemini transcripts are read


def test_the_audit_and_the_transcripts_import_nothing_of_the_harnesses() -> None:
    """The faces call the audit, the audit reads the transcripts: no arrow points up to harness/."""
    code = (
        "import sys, rehydrate.audit, rehydrate.transcripts.claude, rehydrate.transcripts.codex\n"
        "rehydrate.audit.discover([], True, None)\n"
        "print(sorted(m for m in sys.modules if m.startswith('rehydrate.harness')))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout


@pytest.mark.parametrize("name", harness.HOOKS)
def test_the_installed_matcher_is_built_from_the_harness_s_tool_lists(name: str) -> None:
    """The matcher install writes for the tool event names exactly the tools the guard takes (one fact, one place):
    Claude Code's `Edit|Write|MultiEdit|NotebookEdit|Bash`, Codex's `Bash|apply_patch`, Gemini CLI's
    `write_file|replace|run_shell_command`, GitHub Copilot CLI's `create|edit|bash|powershell`."""
    module = harness.get(name)
    groups = module.hook_groups("rehydrate hook " + name)[module.TOOL_EVENT]
    tools = {*module.EDIT_TOOLS, *module.SHELL_TOOLS, *module.PATCH_TOOLS}
    assert [set(g["matcher"].split("|")) for g in groups] == [tools]
    expected = {
        "claude": "Edit|Write|MultiEdit|NotebookEdit|Bash",
        "codex": "Bash|apply_patch",
        "gemini": "write_file|replace|run_shell_command",
        "copilot": "create|edit|bash|powershell",
        "cursor": "Write|Delete|Shell",
        "qwen": "write_file|edit|run_shell_command",
    }
    assert set(groups[0]["matcher"].split("|")) == set(expected[name].split("|"))


@pytest.mark.parametrize("name", harness.HOOKS)
def test_a_tool_added_to_a_harness_s_list_is_in_its_installed_matcher(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = harness.get(name)
    monkeypatch.setattr(module, "SHELL_TOOLS", (*module.SHELL_TOOLS, "another_shell"))
    matcher = module.hook_groups("rehydrate hook " + name)[module.TOOL_EVENT][0]["matcher"]
    assert "another_shell" in matcher.split("|"), matcher


@pytest.mark.parametrize("name", harness.HOOKS)
def test_a_hook_harness_names_its_events_answers_and_install_targets(name: str) -> None:
    module = harness.get(name)
    assert module.TOOL_EVENT in module.EVENTS and module.EVENTS[module.TOOL_EVENT] == "guard"
    assert set(module.EVENTS.values()) <= set(hook.HANDLERS)
    assert set(module.hook_groups("rehydrate hook " + name)) <= set(module.EVENTS)
    deny = json.dumps(module.decision(module.TOOL_EVENT, "deny", "no"))
    assert "deny" in deny and callable(module.targets) and callable(module.trust_checks)


def test_every_target_has_a_module_and_an_unknown_one_is_refused() -> None:
    assert all(callable(harness.installer(name).targets) for name in harness.TARGETS)
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
