"""Codex CLI: its home folder, the hook events it sends and what rehydrate does on each, how it is answered, and
what `install` writes for it.

Imported on the hook path when Codex calls: it imports nothing heavy at module level.
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

NAME = "codex"
TITLE = "Codex CLI"
# Its edit tool, the same name as its transcripts' (transcripts.codex, which cannot import from here): a copy, kept
# equal by tests/harness/test_harness.py, so that a tool call loads no transcript module.
EDIT_TOOLS = ("apply_patch",)
SHELL_TOOLS = ("Bash",)
PATCH_TOOLS = ("apply_patch",)  # its input's command is a patch: `*** Update File: PATH` headers, `+` lines added
TOOL_EVENT = "PreToolUse"
TASK_HOOK_TOOLS = ("update_plan",)  # offered by `codex exec` with [tools.update_plan] enabled
# Codex caps a hook's output near 2,500 tokens, counted at about 4 bytes a token (about 10,000 bytes); a brief of
# 6,229 characters in 12,448 bytes was cut. 9,000 bytes leaves 10% for the estimate's rounding and the text Codex
# puts around the context.
BRIEF_BYTES: int | None = 9000
SAYS_NO_STATE = True
EVENTS = {
    "SessionStart": "session_start",
    "PreCompact": "compaction_start",
    "PostCompact": "compaction_end",
    "PreToolUse": "guard",
    "PostToolUse": "after_tool",  # the guard's check by effect; for update_plan, the plan mirrored into the state
    "Stop": "stop_checked",
}
AFTER_TOOL = "tasks"
context = base.context  # Claude Code's shape, which Codex reads


def home() -> str:
    """Codex CLI's user folder: $CODEX_HOME, else ~/.codex (transcripts.codex.home, where its rollouts are)."""
    from rehydrate.transcripts.codex import home  # its transcript format's, loaded by what reads them

    return home()


def decision(event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """Deny or warn before a tool runs (Claude Code's answers); Codex has no `ask`, so it warns."""
    if decision == "ask":
        return base.warning(event_name, reason)
    return base.decision(event_name, decision, reason)


def compacted_summary(path: str) -> tuple[str, str] | None:
    """What stands for the last compaction's summary in the rollout at path, and where (transcripts.codex
    .last_compaction): PostCompact carries none (0.171's post-compact.command.input has no summary field)."""
    from rehydrate.transcripts.codex import last_compaction  # its rollout's reader: PostCompact's alone

    return last_compaction(path)


def hook_groups(command: str) -> dict[str, list[dict[str, Any]]]:
    """The hook groups install writes into its hooks.json (timeouts in seconds)."""
    from rehydrate.harness.setup.settings import hook_group  # install's, never loaded on the hook path

    return {
        "SessionStart": hook_group("startup|resume|clear|compact", command, 30),
        "PreCompact": hook_group("manual|auto", command, 30),
        "PostCompact": hook_group("manual|auto", command, 30),
        "PreToolUse": hook_group("|".join(dict.fromkeys((*SHELL_TOOLS, *EDIT_TOOLS, *PATCH_TOOLS))), command, 10),
        "PostToolUse": hook_group(
            "|".join(dict.fromkeys((*SHELL_TOOLS, *EDIT_TOOLS, *PATCH_TOOLS, *TASK_HOOK_TOOLS))), command, 10
        ),
    }


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """Hooks in .codex/hooks.json (the user's: in home()); in a project, the boot rule in AGENTS.md."""
    from rehydrate.harness.setup import rules  # install's, never loaded on the hook path
    from rehydrate.harness.setup.settings import merge_hooks

    path = os.path.join(home() if user else os.path.join(project, ".codex"), "hooks.json")
    events = hook_groups(prog.shell("hook", "codex"))
    out: list[Target] = [(path, lambda old, rm: merge_hooks(old, events, remove=rm), "hooks")]
    if not user:
        out.append(rules.target(os.path.join(project, "AGENTS.md"), state_rel))
    return out


def trust_checks(
    project: str, settings_path: str, found: list[tuple[str, int, int, str]], user: bool
) -> list[TrustReport]:
    """Codex runs a project's hooks once it trusts the project, and each hook once it is trusted in `/hooks`."""
    from rehydrate.harness.setup import trust  # install's, never loaded on the hook path

    out = [] if user else [trust.codex_project(project)]
    out.append(trust.codex_hooks(settings_path, found))
    return out
