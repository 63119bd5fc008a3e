"""Gemini CLI: the hook events it sends and what rehydrate does on each, how it is answered, and what `install`
writes for it.

Imported on the hook path when Gemini CLI calls: it imports nothing heavy at module level.
"""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.harness import base

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.setup.install import Target
    from rehydrate.harness.setup.program import Program
    from rehydrate.harness.setup.trust import TrustReport

NAME = "gemini"
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
    "BeforeModel": "model_request",  # where a compressed or cleared history shows: the brief rides in the request
    "BeforeTool": "guard",
    "AfterTool": "after_tool",  # the guard's check by effect; for write_todos, the list mirrored into the state
}
AFTER_TOOL = "tasks"
context = base.context  # Claude Code's shape, which Gemini CLI reads
# What Gemini CLI's compression service puts after the summary it makes (0.61 core, ChatCompressionService.compress):
# the new history is [the environment's context, the summary as a user message, this as the model's reply, the turns
# kept]. A conversation whose first model message is this, right after a user message, was compressed.
ACK = "Got it. Thanks for the additional context!"
SESSION_CONTEXT_END = "</session_context>"
BRIEF_TITLE = "# rehydrate brief: "  # the first line of every brief (brief/compose.py)
LOOK = 4  # the messages of a request that are read: the environment, the summary, the reply, one more
WINDOW = 1 << 20  # of a BeforeModel input, the characters from its request on that those messages are looked for in
STEP = 1 << 16  # the first window decoded: most requests' first messages end within it
HEAD = 1 << 16  # where an input's event name is looked for before it is parsed in part


def read_cap(head: bytes) -> int | None:
    """How much of an input `shallow` can need, from its first bytes: for a BeforeModel input whose request starts
    there, up to WINDOW bytes past the request's key; None (all of it) for any other. The rest of stdin is drained
    unread (harness/hook.read_input)."""
    top = _fields(head)
    if top is None:
        return None
    return top[1] + len(b'"llm_request"') + WINDOW


def shallow(raw: bytes) -> dict[str, Any] | None:
    """A BeforeModel input with only the first LOOK messages of its request, parsed without the rest; None for any
    other input, or one this cannot read so (the caller then parses it whole).

    BeforeModel runs before every model request with the whole request on stdin (every message's text: megabytes in
    a long session). Parsing all of it would make each request's hook cost grow with the conversation; what it
    decides needs the event's own fields (Gemini CLI writes them first: session_id, transcript_path, cwd,
    hook_event_name, timestamp, then llm_request) and the request's first messages."""
    found = _fields(raw)
    if found is None:
        return None
    top, key = found
    size = STEP  # decoded a window at a time, widened only while the first messages run past it
    while True:
        read = first_messages(raw[key : key + size].decode("utf-8", "ignore"))
        more = key + size < len(raw) and size < WINDOW
        if (read is None or not read[1]) and more:
            size = min(size * 4, WINDOW)
            continue
        if read is None:
            return None
        top["llm_request"] = {"messages": read[0]} if read[1] else {"messages": read[0], "cut": True}
        return top


def _fields(raw: bytes) -> tuple[dict[str, Any], int] | None:
    """A BeforeModel input's own fields (the ones before its request) and where its request's key starts; None for
    any other input, or one whose fields do not parse so (it is then read and parsed whole)."""
    if raw.find(b'"BeforeModel"', 0, HEAD) < 0:
        return None
    key = raw.find(b'"llm_request"')
    if key < 0:
        return None
    fields = raw[:key].rstrip(b" \t\r\n")
    try:  # the fields before the request, closed: a key found inside a string leaves that string open, and fails
        top = safejson.loads(fields[:-1] + b"}" if fields.endswith(b",") else fields + b"}")
    except ValueError:
        return None
    if not isinstance(top, dict) or top.get("hook_event_name") != "BeforeModel" or "llm_request" in top:
        return None
    return top, key


def first_messages(text: str) -> tuple[list[Any], bool] | None:
    """The first LOOK values of the `messages` array in text, which starts with the key "llm_request" of an object
    whose value holds that array (those found before the text ends, if it ends first), and whether they are all
    there were to find (LOOK of them, or the array's end): False when text ended first. None when text is not that
    (or ends before the array starts)."""
    n = len(text)

    def skip(i: int, punct: str | None = None) -> int:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if punct is not None:
            if i >= n or text[i] != punct:
                raise ValueError(f"{punct!r} expected at {i}")
            i += 1
        return i

    try:
        _, i = safejson.scan(text, 0)
        i = skip(skip(i, ":"), "{")
        while True:
            i = skip(i)
            if i < n and text[i] == "}":
                return [], True  # a request without messages
            key, i = safejson.scan(text, i)
            i = skip(i, ":")
            if key == "messages":
                break
            _, i = safejson.scan(text, i)
            i = skip(i)
            if i < n and text[i] == ",":
                i += 1
        i = skip(i, "[")
    except ValueError:
        return None
    out: list[Any] = []
    while len(out) < LOOK:
        i = skip(i)
        if i >= n:
            return out, False
        if text[i] == "]":
            break
        try:
            value, i = safejson.scan(text, i)
        except ValueError:  # the window ends inside this message
            return out, False
        out.append(value)
        i = skip(i)
        if i < n and text[i] == ",":
            i += 1
    return out, True


def wants_brief(event: dict[str, Any]) -> tuple[list[Any], int | None] | None:
    """A BeforeModel input's messages and where its summary is (None: no compressed history) when the request needs
    the brief; None when it does not (the common case: the hook answers without loading the brief's modules)."""
    request = event.get("llm_request")
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list) or not isinstance(event.get("session_id"), str):
        return None
    at = summary_at(messages)
    if at is None and ((isinstance(request, dict) and request.get("cut")) or not lacks_brief(messages)):
        return None  # (a message not read whole may hold the brief)
    return messages, at


def summary_at(messages: list[Any]) -> int | None:
    """The index of the message that holds the summary a compression put into the request (see ACK; the message
    also holds the environment's context: summary_of), or None when its history was not compressed: its first model
    message is not ACK right after a user message. (A model whose very first reply is ACK word for word would pass
    for a compression: the two histories differ in nothing else a hook sees.)"""
    for k, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "model":
            continue
        before = messages[k - 1] if k else None
        if message.get("content") != ACK or not isinstance(before, dict) or before.get("role") != "user":
            return None
        if not all(isinstance(m, dict) for m in messages[: k - 1]):
            return None  # what the answer gives back must be messages
        return k - 1 if isinstance(before.get("content"), str) and before["content"] else None
    return None


def lacks_brief(messages: list[Any]) -> bool:
    """Whether a conversation's request holds no brief where a session's start puts it: its first message is the
    environment's context (the main conversation's, not a subagent's) and none of the first LOOK messages holds a
    brief's title. Gemini CLI 0.61 drops SessionStart's context after `/clear` (clearCommand shows only its
    systemMessage); at startup and on resume it is in the first messages."""
    first = messages[0] if messages else None
    if not isinstance(first, dict) or first.get("role") != "user":
        return False
    if not isinstance(first.get("content"), str) or not first["content"].startswith("<session_context>"):
        return False
    return not any(isinstance(m, dict) and BRIEF_TITLE in str(m.get("content")) for m in messages[:LOOK])


def summary_of(text: str) -> str:
    """The summary in the message summary_at found: Gemini CLI sends the environment's context (its
    `<session_context>`) and the summary as one user message (two text parts of one content, joined)."""
    return text.split(SESSION_CONTEXT_END, 1)[-1].lstrip("\n") if text.startswith("<session_context>") else text


def with_brief(messages: list[Any], at: int, brief: str) -> dict[str, Any]:
    """BeforeModel's answer: the request's messages up to the one at `at` (the summary's, or the first), that one
    with the brief after its text.

    Gemini CLI lays the answer's messages over the request's text-bearing contents in order and keeps the rest of
    them as they were (0.61 core, HookTranslatorGenAIv1.fromHookLLMRequest): the messages before the summary are
    given back as they came, the ones after it not at all. No model and no config are given: those would replace the
    request's."""
    out = [{"role": m.get("role"), "content": m.get("content")} for m in messages[:at]]
    out.append({"role": "user", "content": f"{messages[at]['content']}\n\n{brief}"})
    return {"hookSpecificOutput": {"hookEventName": "BeforeModel", "llm_request": {"messages": out}}}


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
        "BeforeModel": group(30000),
        "BeforeTool": group(10000, "|".join((*EDIT_TOOLS, *SHELL_TOOLS, *PATCH_TOOLS))),
        "AfterTool": group(10000, "|".join((*EDIT_TOOLS, *SHELL_TOOLS, *PATCH_TOOLS, *TASK_HOOK_TOOLS))),
    }


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """Hooks in .gemini/settings.json (JSON with comments; the user's: in home()); in a project, the boot rule in
    GEMINI.md."""
    from rehydrate.harness.setup import rules  # install's, never loaded on the hook path
    from rehydrate.harness.setup.settings import merge_hooks

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
    from rehydrate.harness.setup import trust  # install's, never loaded on the hook path

    return [trust.gemini_folder(project)]
