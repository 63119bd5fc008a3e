"""Claude Code: its home folder, the hook events it sends and what rehydrate does on each, how it is answered, and
what `install` writes for it.

Imported on the hook path when Claude Code calls: it imports nothing heavy at module level (install's helpers are
imported inside the functions install calls).
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

NAME = "claude"
TITLE = "Claude Code"
# Its tools as its hooks name them, the same names as its transcripts' (transcripts.claude, which cannot import from
# here): a copy, kept equal by tests/harness/test_harness.py, so that a tool call loads no transcript module.
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")  # a tool input's file_path or notebook_path
TASK_TOOLS = base.TASK_TOOLS  # the task list since 2.1.17, one task a call
SHELL_TOOLS = ("Bash",)
PATCH_TOOLS: tuple[str, ...] = ()
TOOL_EVENT = "PreToolUse"
# Claude Code cuts a hook's output string at 10,000 characters: the brief's default budget (9,000) leaves room for the
# notice of a cut and the JSON around it. It counts characters, not bytes.
BRIEF_BYTES: int | None = None
SAYS_NO_STATE = True  # SessionStart without a state: one short line on stderr (shown in the transcript only)
# The events it sends that rehydrate answers, and the handler of each (hook.HANDLERS).
EVENTS = {
    "SessionStart": "session_start",
    "PreCompact": "compaction_start",
    "PostCompact": "compaction_end",  # runs after SessionStart compact (Claude Code 2.1)
    "PreToolUse": "guard",
    "PostToolUse": "after_tool",  # the guard's check by effect; for its task tools, the task list mirrored
    "Stop": "stop_checked",
}
context = base.context  # the shapes Claude Code defined (base holds them: Codex and Qwen Code read them too)
decision = base.decision
AFTER_TOOL = "tasks"  # what PostToolUse does after the check by effect, for a tool that is not an edit or a command


def home() -> str:
    """Claude Code's user folder: $CLAUDE_CONFIG_DIR, else ~/.claude (transcripts.claude.home, where its transcripts
    are)."""
    from rehydrate.transcripts.claude import home  # its transcript format's, loaded by what reads them

    return home()


def hook_groups(command: str) -> dict[str, list[dict[str, Any]]]:
    """The hook groups install writes into its settings.json (timeouts in seconds)."""
    from rehydrate.harness.setup.settings import hook_group  # install's, never loaded on the hook path

    return {
        "SessionStart": hook_group("startup|resume|clear|compact", command, 30),
        "PreCompact": hook_group("manual|auto", command, 30),
        "PostCompact": hook_group("manual|auto", command, 30),
        "PreToolUse": hook_group("|".join((*EDIT_TOOLS, *SHELL_TOOLS, *PATCH_TOOLS)), command, 10),
        "PostToolUse": hook_group(
            "|".join((*EDIT_TOOLS, *SHELL_TOOLS, *TASK_TOOLS, "TodoWrite", "mcp__.*")), command, 10
        ),
        "Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}],  # never blocks
    }


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """Hooks in .claude/settings.json (the user's: in home()); in a project, the boot rule in CLAUDE.md."""
    from rehydrate.harness.setup import rules  # install's, never loaded on the hook path
    from rehydrate.harness.setup.settings import merge_hooks

    path = os.path.join(home() if user else os.path.join(project, ".claude"), "settings.json")
    events = hook_groups(prog.shell("hook", "claude"))
    out: list[Target] = [(path, lambda old, rm: merge_hooks(old, events, remove=rm), "hooks")]
    if not user:
        out.append(rules.target(os.path.join(project, "CLAUDE.md"), state_rel))
    return out


def trust_checks(
    project: str, settings_path: str, found: list[tuple[str, int, int, str]], user: bool
) -> list[TrustReport]:
    """What else decides whether Claude Code runs the hooks: the folder's trust, which it keeps to itself."""
    from rehydrate.harness.setup import trust  # install's, never loaded on the hook path

    return [trust.claude_note()]
