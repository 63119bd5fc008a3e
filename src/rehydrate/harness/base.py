"""What a harness module provides (the Harness protocol), what several harnesses share (the hook's Answer, Claude
Code's context and decision shapes, which Codex and Qwen Code read too), and the state folder one hook call finds
(Located): found once, its config and State read once, whatever the handlers ask.

Imported on the hook path: nothing heavy at module level, and typing only for the type checker.
"""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.store import layout

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable
    from typing import Any, Protocol

    from rehydrate.harness.setup.install import Target
    from rehydrate.harness.setup.program import Program
    from rehydrate.harness.setup.trust import TrustReport
    from rehydrate.store.state import State

    class Installs(Protocol):
        """What `install` reads of a target (a harness, or the MCP server): the files it writes and how."""

        def targets(self, project: str, state_rel: str, user: bool, prog: Program) -> list[Target]: ...

    class Harness(Installs, Protocol):
        """A harness module, rehydrate.harness.<NAME>: the events it sends and the handler of each (hook.HANDLERS),
        its tools as the guard reads them, its answer shapes, what `install` writes and checks for it.

        A harness may also have, read with getattr where it does: normalize(event[, name]) and EVENT_IN_ARGV (an
        input in its own field names, an event named by the command line), shallow and read_cap (an input read in
        part), AFTER_TOOL (the handler after the check by effect), START_CONTEXT_KEPT, TASK_HOOK_TOOLS,
        compacted_summary, tool_calls_since, stop_reminder, our_hooks, and Gemini CLI's request readers."""

        @property
        def NAME(self) -> str: ...
        @property
        def TITLE(self) -> str: ...
        @property
        def EVENTS(self) -> dict[str, str]: ...
        @property
        def EDIT_TOOLS(self) -> tuple[str, ...]: ...
        @property
        def SHELL_TOOLS(self) -> tuple[str, ...]: ...
        @property
        def PATCH_TOOLS(self) -> tuple[str, ...]: ...
        @property
        def TOOL_EVENT(self) -> str: ...
        @property
        def BRIEF_BYTES(self) -> int | None: ...
        @property
        def SAYS_NO_STATE(self) -> bool: ...

        def home(self) -> str: ...
        def context(self, event_name: str, text: str) -> str: ...
        def decision(self, event_name: str, decision: str, reason: str) -> dict[str, Any]: ...
        def hook_groups(self, command: str) -> dict[str, list[dict[str, Any]]]: ...
        def trust_checks(
            self, project: str, settings_path: str, found: list[tuple[str, int, int, str]], user: bool
        ) -> list[TrustReport]: ...

    # What rehydrate does on an event: the harness, its event, the state it finds, whether it was read whole.
    Handler = Callable[[Harness, dict[str, Any], "Located", bool], "Answer"]


# the tools whose call gives the whole task list (Claude Code's old TodoWrite, Codex CLI's update_plan, Gemini CLI's
# write_todos): harness/tasks.py reads each; the hook loads that module only for these and Claude Code's task tools
TASK_LIST_TOOLS = ("TodoWrite", "update_plan", "write_todos")
# Claude Code's task tools (since 2.1.17), one task a call: its transcripts' names (transcripts.claude), a copy kept
# equal by tests/harness/test_harness.py, so that a tool call loads no transcript module
TASK_TOOLS = ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet")


def task_tool(tool: object) -> bool:
    """Whether a tool's call gives the task list (TASK_LIST_TOOLS) or one of its tasks (Claude Code's task tools):
    the calls whose list is mirrored into the state after they run (harness/tasks.py)."""
    return tool in TASK_LIST_TOOLS or tool in TASK_TOOLS


MAX_SESSION = 200  # the most characters of a harness's session id kept in a record


def session_of(event: dict[str, Any]) -> str | None:
    """The harness's session id, cleaned as the resume record keeps it; None if the event has none."""
    sid = event.get("session_id")
    if not isinstance(sid, str):
        return None
    from rehydrate.text import clean  # (a call that reads no session never loads it)

    return clean(sid, one_line=True)[:MAX_SESSION] or None


class Answer:
    """What the hook prints, and its exit code (always 0 unless the user asked for blocking)."""

    def __init__(self, stdout: str = "", stderr: str = "", code: int = 0) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.code = code


def context(event_name: str, text: str) -> str:
    """Text the harness adds to the model's context, answering event_name: Claude Code's hookSpecificOutput, which
    Codex, Gemini CLI and Qwen Code read too."""
    return safejson.dumps({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}})


def said(harness: Harness, event_name: str, text: str) -> str:
    """Text the harness adds to the model's context, answering event_name, in its own shape."""
    return harness.context(event_name, text)


def decision(event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """Claude Code's answer before a tool runs: deny, ask, or warn (a systemMessage plus context, the call goes
    ahead)."""
    if decision == "warn":
        return warning(event_name, reason)
    return {
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def warning(event_name: str, reason: str) -> dict[str, Any]:
    return {"systemMessage": reason, "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": reason}}


def config(root: str) -> dict[str, Any]:
    """state/config.json, or {} (the defaults): store/config.read, as the hooks read it (loaded when a call needs the
    config: a tool call that nothing applies to never does)."""
    from rehydrate.store import config as project

    return project.read(root)


STATE_MARKS = (layout.WAL_DIR, *layout.VIEWS)  # a folder holding none of these is not a rehydrate state


def located(event: dict[str, Any]) -> Located | None:
    """The rehydrate state the event's cwd finds, or None where there is none: none found, one that belongs to
    another user, or a `state/` of something else (no WAL, no view file). A state folder that exists but cannot be
    read is found: it gets the reduced brief and its problem."""
    try:
        here = Located.find(event)
    except Exception as e:
        from rehydrate.errors import RehydrateError  # (loaded only here: a call that finds its state never needs it)

        if isinstance(e, RehydrateError):  # the only candidate belongs to another user: not ours
            return None
        raise
    root = here.root
    if root and os.path.isdir(root) and any(os.path.lexists(os.path.join(root, n)) for n in STATE_MARKS):
        return here
    return None


class Located:
    """The state folder a hook call's event finds from its cwd (start: that cwd when it is a folder), with its
    config and State read when first asked for and kept for the rest of the call. A read that fails is not kept:
    the next one fails the same way."""

    def __init__(self, start: str | None, root: str) -> None:
        self.start = start
        self.root = root
        self._config: dict[str, Any] | None = None
        self._state: State | None = None

    @classmethod
    def find(cls, event: dict[str, Any] | None) -> Located:
        """The folder the event's cwd finds (store.locate; StateMissing where it belongs to another user)."""
        from rehydrate.store.locate import locate

        cwd = event.get("cwd") if event else None
        start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
        return cls(start, locate(None, start))

    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            self._config = config(self.root)
        return self._config

    @property
    def state(self) -> State:
        if self._state is None:
            from rehydrate.store.state import State  # a handler that writes or renders pays for it; the guard never

            self._state = State.open(self.root)
        return self._state
