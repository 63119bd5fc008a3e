"""GitHub Copilot CLI: the hook events it sends and what rehydrate does on each, how it is answered, and what `install`
writes for it (hooks in .github/hooks/rehydrate.json, the boot rule in .github/copilot-instructions.md).

Copilot CLI (npm `@github/copilot`, 1.0.x) loads every `.github/hooks/*.json` of the repository (and
`$COPILOT_HOME/hooks/*.json`): `{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": ..., "powershell":
..., "timeoutSec": ...}]}}`. Its camelCase events send camelCase fields (`sessionId`, `cwd`, `toolName`, `toolArgs`
as an object, `transcriptPath` on agentStop and preCompact) and no event name: each command names its event
(`rehydrate hook copilot <event>`), and `normalize` gives the event the field names the handlers read.

Imported on the hook path when Copilot calls: it imports nothing heavy at module level.
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

NAME = "copilot"
TITLE = "GitHub Copilot CLI"
EDIT_TOOLS = ("create", "edit")  # their input's `path`, given to the guard as file_path (normalize)
SHELL_TOOLS = ("bash", "powershell")
PATCH_TOOLS: tuple[str, ...] = ()
TOOL_EVENT = "preToolUse"
TASK_HOOK_TOOLS: tuple[str, ...] = ()  # Copilot keeps its todo list in its session database (the `sql` tool)
# No cap on a hook's output was found; a sessionStart context of about 108 KB or more is dropped whole at the
# default prompt budget of a custom provider. The brief's default budget keeps far below it.
BRIEF_BYTES: int | None = None
SAYS_NO_STATE = False
EVENT_IN_ARGV = True  # its input names no event: the command does
# sessionStart's context is a message Copilot builds again at each start and resume, never kept in the conversation:
# a resumed session holds no earlier brief, so it gets the brief, never a pointer to one (1.0.102, seen in requests).
START_CONTEXT_KEPT = False
EVENTS = {
    "sessionStart": "session_start",
    "preCompact": "compaction_start",  # observe only: what it answers is ignored
    "userPromptSubmitted": "after_compaction",  # its context stays in the conversation
    "postToolUse": "after_tool",  # the guard's check by effect, then AFTER_TOOL
    "preToolUse": "guard",
    "agentStop": "stop_checked",
}
AFTER_TOOL = (
    "after_compaction"  # after every tool: its context is appended to the result, which stays in the conversation
)
# Copilot drops sessionStart's context at a compaction and sends no event after one: the brief comes back with the
# next prompt or tool result after a `compaction` record of the session (events.after_compaction).
FIELDS = {"sessionId": "session_id", "transcriptPath": "transcript_path", "toolName": "tool_name"}
ARGS = {"path": "file_path", "file_text": "content", "new_str": "new_string"}  # toolArgs, as the guard reads them


def home() -> str:
    """Copilot CLI's user folder: $COPILOT_HOME, else ~/.copilot."""
    return os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def normalize(event: dict[str, Any], name: str) -> dict[str, Any]:
    """The event with the field names the handlers read (session_id, transcript_path, tool_name, tool_input with a
    file_path, hook_event_name from the command line), its own fields kept beside them."""
    out = dict(event)
    out["hook_event_name"] = name
    for theirs, ours in FIELDS.items():
        if theirs in event and ours not in event:
            out[ours] = event[theirs]
    args = event.get("toolArgs")
    if isinstance(args, str):  # documented as a JSON string by older versions
        try:
            args = safejson.loads(args)
        except ValueError:
            args = None
    if isinstance(args, dict):
        named = dict(args)
        for theirs, ours in ARGS.items():
            if theirs in args and ours not in args:
                named[ours] = args[theirs]
        out["tool_input"] = named
    return out


def context(event_name: str, text: str) -> str:
    """Text Copilot adds to the model's context: a top-level `additionalContext` (sessionStart: a user message after
    the system prompt; userPromptSubmitted: appended to the prompt; postToolUse: appended to the tool's result)."""
    return safejson.dumps({"additionalContext": text})


def decision(event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """Deny or ask before a tool runs (in `-p` mode nobody can answer an ask: Copilot then denies); warn: context for
    the model after the tool's result, the tool runs."""
    if decision in ("deny", "ask"):
        return {"permissionDecision": decision, "permissionDecisionReason": reason}
    return {"additionalContext": reason}


def stop_reminder(text: str) -> str:
    """agentStop's answer for the reminder to checkpoint: Copilot shows nothing a stop hook says unless it blocks,
    and a block's reason becomes the next prompt (once: agentStop then comes with stop_hook_active)."""
    return safejson.dumps({"decision": "block", "reason": text})


def tool_calls_since(transcript: str, since: str) -> int:
    """Tool calls Copilot's session log (events.jsonl) records after `since` (ISO 8601; "" for all)."""
    from rehydrate.transcripts.jsonl import newer_than  # the transcripts' reader: only for stop's reminder

    count = 0
    for rec in newer_than(transcript, since or "0"):
        if rec.get("type") == "tool.execution_complete":
            count += 1
    return count


def hook_groups(command: str, powershell: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """One command entry per event, each naming its event (the same command for PowerShell unless given); timeouts
    in seconds."""
    powershell = command if powershell is None else powershell

    def entry(event: str, timeout: int, matcher: str | None = None) -> list[dict[str, Any]]:
        out: dict[str, Any] = {"type": "command", "bash": f"{command} {event}", "powershell": f"{powershell} {event}"}
        if matcher:
            out["matcher"] = matcher
        out["timeoutSec"] = timeout
        return [out]

    return {
        "sessionStart": entry("sessionStart", 30),
        "userPromptSubmitted": entry("userPromptSubmitted", 30),
        "preToolUse": entry("preToolUse", 10, "|".join((*EDIT_TOOLS, *SHELL_TOOLS))),
        "postToolUse": entry("postToolUse", 30),
        "preCompact": entry("preCompact", 30),
        "agentStop": entry("agentStop", 10),
    }


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """.github/hooks/rehydrate.json, a file rehydrate owns whole (the user's: $COPILOT_HOME/hooks/rehydrate.json); in
    a project, the boot rule in .github/copilot-instructions.md."""
    from rehydrate.harness.setup import rules  # install's, never loaded on the hook path
    from rehydrate.harness.setup.settings import merge_owned

    base = os.path.join(home(), "hooks") if user else os.path.join(project, ".github", "hooks")
    groups = hook_groups(prog.shell("hook", "copilot"), prog.powershell("hook", "copilot"))
    content = safejson.dumps({"version": 1, "hooks": groups}) + "\n"
    path = os.path.join(base, "rehydrate.json")
    out: list[Target] = [(path, lambda old, rm: merge_owned(old, content, remove=rm), "hooks")]
    if not user:
        out.append(rules.target(os.path.join(project, ".github", "copilot-instructions.md"), state_rel))
    return out


def trust_checks(
    project: str, settings_path: str, found: list[tuple[str, int, int, str]], user: bool
) -> list[TrustReport]:
    """Copilot runs a repository's hooks in `-p` mode only in a trusted folder; user hooks always."""
    from rehydrate.harness.setup import trust  # install's, never loaded on the hook path

    return [] if user else [trust.copilot_folder(project)]


def our_hooks(path: str) -> tuple[list[tuple[str, int, int, str]], str | None]:
    """rehydrate's commands in a Copilot hooks file (flat entries, each its `bash` command); or an error."""
    from rehydrate.harness.setup import trust  # install's, never loaded on the hook path

    return trust.flat_hooks(path, "bash")
