"""Gemini CLI: the hook events it sends and what rehydrate does on each, how it is answered, and what `install`
writes for it.

Imported on the hook path when Gemini CLI calls: it imports nothing heavy at module level.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.install import Target
    from rehydrate.harness.program import Program
    from rehydrate.harness.trust import TrustReport

TITLE = "Gemini CLI"
EDIT_TOOLS = ("write_file", "replace")  # a tool input's file_path
SHELL_TOOLS = ("run_shell_command",)
PATCH_TOOLS: tuple[str, ...] = ()
TOOL_EVENT = "BeforeTool"
TASK_HOOK_TOOLS = ("write_todos",)
# No cap on a hook's output (0.56 source: hookRunner keeps all of stdout; getAdditionalContext only escapes < and >):
# the brief's default budget (the same as Claude Code's) bounds what each injection costs.
BRIEF_BYTES: int | None = None
# It shows a hook's stderr to the user as a message when its stdout is empty: without a state, it is told nothing.
SAYS_NO_STATE = False
EVENTS = {
    "SessionStart": "session_start",
    "PreCompress": "precompress",  # a note, not a compaction: nothing confirms that one followed
    "BeforeAgent": "after_compression",  # no start event follows a compression: the brief goes in here, once
    "BeforeTool": "guard",
    "AfterTool": "tasks",  # write_todos only: the list mirrored into the state
}


def home() -> str:
    """Gemini CLI's user folder: ~/.gemini."""
    return os.path.join(os.path.expanduser("~"), ".gemini")


def decision(event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """Deny, or warn with a systemMessage (no `ask`)."""
    return {"decision": "deny", "reason": reason} if decision == "deny" else {"systemMessage": reason}


def hook_groups(command: str) -> dict[str, list[dict[str, Any]]]:
    """Timeouts in milliseconds; a lifecycle matcher matches one exact value, so none is given."""

    def group(timeout_ms: int, matcher: str | None = None) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout_ms}]}
        if matcher:
            entry = {"matcher": matcher, **entry}
        return [entry]

    return {
        "SessionStart": group(30000),
        "PreCompress": group(30000),
        "BeforeAgent": group(30000),
        "BeforeTool": group(10000, "|".join((*EDIT_TOOLS, *SHELL_TOOLS, *PATCH_TOOLS))),
        "AfterTool": group(10000, "|".join(TASK_HOOK_TOOLS)),
    }


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """Hooks in .gemini/settings.json (JSON with comments; the user's: in home()); in a project, the boot rule in
    GEMINI.md."""
    from rehydrate.harness import rules
    from rehydrate.harness.settings import merge_hooks

    base = home() if user else os.path.join(project, ".gemini")
    events = hook_groups(prog.shell("hook", "gemini"))
    path = os.path.join(base, "settings.json")
    out: list[Target] = [(path, lambda old, rm: merge_hooks(old, events, remove=rm, comments=True), "hooks")]
    if not user:
        out.append(rules.target(os.path.join(project, "GEMINI.md"), state_rel))
    return out


def trust_checks(
    project: str, settings_path: str, found: list[tuple[str, int, int, str]], user: bool
) -> list[TrustReport]:
    """Gemini CLI refuses an untrusted folder in -p mode and asks in the interactive one."""
    from rehydrate.harness import trust

    return [trust.gemini_folder(project)]
