"""Cursor: the hook events it sends and what rehydrate does on each, how it is answered, and what `install` writes for
it (hooks in .cursor/hooks.json, and the always-applied rule in .cursor/rules/rehydrate.mdc).

Cursor (the editor's agent and its CLI, `agent`) reads `.cursor/hooks.json` (and `~/.cursor/hooks.json`): `{"version":
1, "hooks": {"<event>": [{"command": ..., "timeout": <seconds>, "matcher": ...}]}}`, flat entries. Its events send
`hook_event_name` (camelCase), `conversation_id`, `workspace_roots` and no `cwd` at sessionStart (a user hook runs in
~/.cursor): `normalize` gives each event the fields the handlers read. Its CLI is installed by a script, not from
npm, and needs a sign-in: the hooks are tested against the documented payloads (tests/fixtures/hooks/cursor/).

Imported on the hook path when Cursor calls: it imports nothing heavy at module level.
"""

from __future__ import annotations

import os

from rehydrate import safejson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.setup.install import Target
    from rehydrate.harness.setup.program import Program
    from rehydrate.harness.setup.trust import TrustReport

NAME = "cursor"
TITLE = "Cursor"
EDIT_TOOLS = ("Write", "Delete")  # their input's path, given to the guard as file_path (normalize)
SHELL_TOOLS = ("Shell",)  # preToolUse's shell tool; beforeShellExecution sends the command itself
PATCH_TOOLS: tuple[str, ...] = ()
TOOL_EVENT = "preToolUse"
TASK_HOOK_TOOLS: tuple[str, ...] = ()
BRIEF_BYTES: int | None = None
SAYS_NO_STATE = False
EVENTS = {
    "sessionStart": "session_start",
    "preCompact": "compaction_start",  # observe only; sessionStart does not fire again after it (the rule does)
    "preToolUse": "guard",
    "beforeShellExecution": "guard",
    "stop": "stop",
}
# Cursor fires sessionStart once per conversation, never after a compaction, and no hook can add to the context
# after one (preCompact only observes): Cursor applies the always-applied rule again, and the rule sends the agent to
# `rehydrate resume`.
RULE = """---
description: Working state kept on disk by rehydrate; read it before acting and after any compaction
alwaysApply: true
---
{block}"""
PATHS = ("file_path", "path", "target_file", "filePath")  # where a Write or Delete input may name its file


def home() -> str:
    """Cursor's user folder: ~/.cursor."""
    return os.path.join(os.path.expanduser("~"), ".cursor")


def normalize(event: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """The event with the fields the handlers read: cwd (the first workspace root, or CURSOR_PROJECT_DIR, where the
    event has none), session_id (the conversation's), tool_name and tool_input with a file_path; for
    beforeShellExecution, a Shell call of its command."""
    out = dict(event)
    if not isinstance(event.get("cwd"), str) or not event["cwd"]:
        roots = event.get("workspace_roots")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
        out["cwd"] = root or os.environ.get("CURSOR_PROJECT_DIR") or ""
    if not isinstance(event.get("session_id"), str) and isinstance(event.get("conversation_id"), str):
        out["session_id"] = event["conversation_id"]
    if event.get("hook_event_name") == "beforeShellExecution":
        out["tool_name"] = "Shell"
        out["tool_input"] = {"command": event.get("command")}
    tool_input = out.get("tool_input")
    if isinstance(tool_input, str):  # an MCP tool's input comes as a JSON string
        try:
            tool_input = safejson.loads(tool_input)
        except ValueError:
            tool_input = None
    if isinstance(tool_input, dict):
        found = next((tool_input[k] for k in PATHS if isinstance(tool_input.get(k), str)), None)
        named = dict(tool_input)
        if found is not None and not isinstance(named.get("file_path"), str):
            named["file_path"] = found
        if isinstance(named.get("contents"), str) and "content" not in named:  # a Write's text, for `contains`
            named["content"] = named["contents"]
        out["tool_input"] = named
    return out


def context(event_name: str, text: str) -> str:
    """sessionStart's context: `additional_context`."""
    return safejson.dumps({"additional_context": text})


def decision(event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """Deny, or ask where Cursor asks (beforeShellExecution); preToolUse takes only allow or deny, so an ask there is a
    message to the agent and to you, and the call goes ahead, as a warning is."""
    if decision == "deny" or (decision == "ask" and event_name == "beforeShellExecution"):
        return {"permission": decision, "user_message": reason, "agent_message": reason}
    return {"permission": "allow", "user_message": reason, "agent_message": reason}


def hook_groups(command: str) -> dict[str, list[dict[str, Any]]]:
    """One entry per event (timeouts in seconds); only event names Cursor knows: one it does not voids the file."""

    def entry(timeout: int, matcher: str | None = None) -> list[dict[str, Any]]:
        out: dict[str, Any] = {"command": command, "timeout": timeout}
        if matcher:
            out["matcher"] = matcher
        return [out]

    return {
        "sessionStart": entry(30),
        "preCompact": entry(30),
        "preToolUse": entry(10, "|".join((*EDIT_TOOLS, *SHELL_TOOLS))),
        "beforeShellExecution": entry(10),
        "stop": entry(10),
    }


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """.cursor/hooks.json, its other hooks kept (the user's: ~/.cursor/hooks.json); in a project, the rule file
    .cursor/rules/rehydrate.mdc, which rehydrate owns whole."""
    from rehydrate.harness.setup import rules  # install's, never loaded on the hook path
    from rehydrate.harness.setup.settings import merge_flat_hooks, merge_owned

    groups = hook_groups(prog.shell("hook", "cursor"))
    path = os.path.join(home() if user else os.path.join(project, ".cursor"), "hooks.json")
    out: list[Target] = [(path, lambda old, rm: merge_flat_hooks(old, groups, remove=rm), "hooks")]
    if not user:
        content = RULE.format(block=rules.block(state_rel))
        rule = os.path.join(project, ".cursor", "rules", "rehydrate.mdc")
        out.append((rule, lambda old, rm: merge_owned(old, content, remove=rm), "rule"))
    return out


def our_hooks(path: str) -> tuple[list[tuple[str, int, int, str]], str | None]:
    """rehydrate's commands in a Cursor hooks file (flat entries); or an error."""
    from rehydrate.harness.setup import trust  # install's, never loaded on the hook path

    return trust.flat_hooks(path, "command")


def trust_checks(
    project: str, settings_path: str, found: list[tuple[str, int, int, str]], user: bool
) -> list[TrustReport]:
    """Cursor runs a project's hooks only in a trusted workspace (the CLI: `--trust` when headless); nothing on disk
    says whether it is."""
    from rehydrate.harness.setup.trust import TrustReport  # install's, never loaded on the hook path

    if user:
        return []
    return [
        TrustReport(
            "project trusted",
            None,
            f"Cursor runs {project}'s hooks only in a trusted workspace; rehydrate cannot see whether it is",
            "trust the workspace when Cursor asks (the CLI: `agent --trust` when it runs headless)",
        )
    ]


def tool_calls_since(transcript: str, since: str) -> int:
    """Tool calls since a time, for stop's reminder to checkpoint: none counted, since rehydrate does not read Cursor's
    transcripts (their format is not documented), so Cursor gets no such reminder."""
    return 0
