"""Qwen Code (npm `@qwen-code/qwen-code`, a fork of Gemini CLI with Claude Code's hooks): the hook events it sends and
what rehydrate does on each, how it is answered, and what `install` writes for it (hooks in .qwen/settings.json, the
boot rule in QWEN.md).

Its hooks are Claude Code's: the same event names, stdin fields and `hookSpecificOutput` answers, in Gemini CLI's
settings file (timeouts in milliseconds). After a compaction it fires PreCompact, PostCompact (with the summary), then
SessionStart with source `compact`, whose context replaces the session's in its system prompt (0.24.4: one request
after the compaction, since it does not wait for that hook).

Imported on the hook path when Qwen Code calls: it imports nothing heavy at module level.
"""

from __future__ import annotations

import os

from rehydrate.harness import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.setup.install import Target
    from rehydrate.harness.setup.program import Program
    from rehydrate.harness.setup.trust import TrustReport

NAME = "qwen"
TITLE = "Qwen Code"
EDIT_TOOLS = ("write_file", "edit")  # a tool input's file_path
SHELL_TOOLS = ("run_shell_command",)
PATCH_TOOLS: tuple[str, ...] = ()
TOOL_EVENT = "PreToolUse"
TASK_HOOK_TOOLS: tuple[str, ...] = ()
BRIEF_BYTES: int | None = None
SAYS_NO_STATE = False  # whether it shows a hook's stderr to the user is not known: it is told nothing
# SessionStart's context goes into the system prompt, which Qwen builds again at each start and resume: a resumed
# session holds no earlier brief, so it gets the brief, never a pointer to one (0.24.4, seen in its requests).
START_CONTEXT_KEPT = False
EVENTS = {
    "SessionStart": "session_start",
    "PreCompact": "compaction_start",
    "PostCompact": "compaction_end",  # its answer is ignored: a record of the summary's length and hash
    "PreToolUse": "guard",
}
context = base.context  # Claude Code's answers: its hooks are Claude Code's
decision = base.decision


def home() -> str:
    """Qwen Code's user folder: $QWEN_HOME, else ~/.qwen."""
    return os.environ.get("QWEN_HOME") or os.path.join(os.path.expanduser("~"), ".qwen")


def hook_groups(command: str) -> dict[str, list[dict[str, Any]]]:
    """Claude Code's groups, timeouts in milliseconds (as Gemini CLI's). SessionStart takes every source (its
    matcher is a pattern of startup|resume|clear|compact|branch)."""

    def group(timeout_ms: int, matcher: str | None = None) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout_ms}]}
        return [{"matcher": matcher, **entry}] if matcher else [entry]

    return {
        "SessionStart": group(30000),
        "PreCompact": group(30000),
        "PostCompact": group(30000),
        "PreToolUse": group(10000, "|".join((*EDIT_TOOLS, *SHELL_TOOLS))),
    }


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """Hooks in .qwen/settings.json (the user's: in home()); in a project, the boot rule in QWEN.md."""
    from rehydrate.harness.setup import rules  # install's, never loaded on the hook path
    from rehydrate.harness.setup.settings import merge_hooks

    base = home() if user else os.path.join(project, ".qwen")
    events = hook_groups(prog.shell("hook", "qwen"))
    path = os.path.join(base, "settings.json")
    out: list[Target] = [(path, lambda old, rm: merge_hooks(old, events, remove=rm, comments=True), "hooks")]
    if not user:
        out.append(rules.target(os.path.join(project, "QWEN.md"), state_rel))
    return out


def trust_checks(
    project: str, settings_path: str, found: list[tuple[str, int, int, str]], user: bool
) -> list[TrustReport]:
    """Qwen Code ran a project's hooks with no trust step (0.24.4, `-p`)."""
    return []
