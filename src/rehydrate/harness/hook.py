"""`rehydrate hook HARNESS`: answer a harness's hook call. Whatever happens, it exits 0 and says what it can.

A hook that fails or blocks breaks the agent's session (in Claude Code, exit 2 blocks), so every error becomes text
the agent can read: a reduced brief and the problem. Only the harness's stdin decides what happens; nothing here is
executed from it.
"""

from __future__ import annotations

from rehydrate import harness as registry
from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.harness.base import Answer, Located, located, task_tool
from rehydrate.harness.percall import STDIN_SECONDS, Input, event_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.harness.base import Handler, Harness

NO_STATE = "rehydrate: no state folder here, nothing to inject (`rehydrate init --goal TEXT` starts one)"


def run(
    harness: str,
    raw: bytes,
    *,
    tail: bytes = b"",
    size: int | None = None,
    ended: bool = True,
    capped: bool = False,
    event_name: str | None = None,
) -> Answer:
    """Answer one hook call; never raises. raw is the hook's input; for one that was not read whole (see Input),
    tail, size, ended and capped say what is missing. event_name: the event the command line names, for a harness
    whose input names none (its module's EVENT_IN_ARGV and normalize)."""
    return answer(harness, Input(raw, tail, size, ended, capped), event_name)


def answer(harness: str, data: Input, event_name: str | None = None) -> Answer:
    """Answer one hook call whose input was read (percall.read_input); never raises. An input that is not one whole
    JSON object gets the fields that can be found in it (_unreadable, _named)."""
    if harness not in registry.HOOKS:
        return Answer(stderr=f"rehydrate hook {harness}: no such harness (one of {', '.join(registry.HOOKS)})\n")
    module = registry.get(harness)
    if event_name is not None and not getattr(module, "EVENT_IN_ARGV", False):
        return Answer(stderr=f"rehydrate hook {harness}: takes no event name ({event_name!r} given)\n")
    event = event_of(module, data, event_name)
    if event is not None:
        return _answered(module, event)
    if event_name is not None:
        return _named(module, data.head, data, event_name)
    if not data.whole:
        why = (
            f"{data.size:,} bytes, more than the {len(data.head):,} read"
            if data.size > len(data.head)
            else f"stdin still open after {STDIN_SECONDS:g} s, {data.size:,} bytes read"
        )
        return _unreadable(module, data, why)
    problem = "the hook's input is not a JSON object"
    try:
        safejson.loads(data.head.decode("utf-8", "replace"))
    except ValueError as e:
        problem = str(e)[:300]
    return _unreadable(module, data, problem)


def _named(harness: Harness, raw: bytes, data: Input, event_name: str) -> Answer:
    """An input that names no event (GitHub Copilot CLI's), the event named by the command line: parsed, or its
    fields salvaged, then given the field names the handlers read (the harness's normalize)."""
    problem = ""
    event: Any = None
    if data.whole:
        try:
            event = safejson.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        except ValueError as e:
            problem = str(e)[:300]
    else:
        problem = f"{data.size:,} bytes, more than the {len(raw):,} read" if data.ended else "stdin still open"
    if not isinstance(event, dict):
        from rehydrate.harness.salvage import salvage  # it loads json and re: only for an input that does not parse

        event = salvage(data.head, data.tail)
        problem = problem or "the hook's input is not a JSON object"
    normalize: Callable[[dict[str, Any], str], dict[str, Any]] | None = getattr(harness, "normalize", None)
    assert normalize is not None  # every harness whose input names no event has one
    answer = _answer(harness, normalize(event, event_name), whole=not problem)
    if problem:
        answer.stderr = f"rehydrate hook {harness.NAME}: could not read the hook's input ({problem})\n" + answer.stderr
    return answer


def _answer(harness: Harness, event: dict[str, Any], whole: bool = True) -> Answer:
    norm = getattr(harness, "normalize", None)
    if norm is not None and not getattr(harness, "EVENT_IN_ARGV", False):
        event = norm(event)  # the fields the handlers read, from the harness's own (Cursor's)
    return _answered(harness, event, whole)


def _answered(harness: Harness, event: dict[str, Any], whole: bool = True) -> Answer:
    here = None
    try:
        here = located(event)
        if here is None:
            return _idle(harness, event)
        return _dispatch(harness, event, here, whole)
    except Exception as e:  # a hook never breaks the harness, unless the user asked for that
        name = str(event.get("hook_event_name") or "")
        message = str(e) if isinstance(e, RehydrateError) else f"internal error ({type(e).__name__}: {e})"
        if here is not None and here.config.get("block_on_error") is True:  # exit 2, the harness's "stop"
            return Answer(stderr=f"rehydrate hook {harness.NAME}: {message}\n", code=2)
        if harness.EVENTS.get(name) == "session_start" or not name:
            return _reduced(harness, event, f"rehydrate hook {harness.NAME}: {message}", here)
        return Answer(stderr=f"rehydrate hook {harness.NAME}: {message}\n")


def _reduced(harness: Harness, event: dict[str, Any] | None, problem: str, here: Located | None) -> Answer:
    from rehydrate.harness import events  # the brief's handlers: loaded by the calls that give one

    return events.reduced(harness, event, problem, here)


def _unreadable(harness: Harness, data: Input, why: str) -> Answer:
    """An input that was not read whole or does not parse: the fields that can still be found in it decide.

    A tool event (named so; or unnamed but holding a tool's name or input, or too large to be anything else) goes to
    the guard, which decides on the target it can establish and fails closed when it cannot; any other named event
    is answered as usual from its fields; an input that names nothing gets the reduced brief.
    """
    from rehydrate.harness.salvage import salvage  # it loads json and re: only for an input that does not parse

    problem = f"rehydrate hook {harness.NAME}: could not read the hook's input ({why})"
    event = salvage(data.head, data.tail)
    if "hook_event_name" not in event and ("tool_name" in event or "tool_input" in event or data.size > len(data.head)):
        event["hook_event_name"] = harness.TOOL_EVENT
    if "hook_event_name" not in event:
        here = located(event)
        return _idle(harness, event) if here is None else _reduced(harness, event, problem, here)
    answer = _answer(harness, event, whole=False)
    answer.stderr = problem + "\n" + answer.stderr
    return answer


def _idle(harness: Harness, event: dict[str, Any]) -> Answer:
    """Where there is no state, a hook says nothing: an empty answer (SessionStart: one short line on stderr, where
    the harness does not show it to the user: see its SAYS_NO_STATE). With hooks installed for the user, every
    session in every repository calls them; one without a rehydrate state folder must not be told to make one."""
    if event.get("hook_event_name") in ("SessionStart", None) and harness.SAYS_NO_STATE:
        return Answer(stderr=NO_STATE + "\n")
    return Answer()


def _dispatch(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """The handler the harness names for this event (its EVENTS); an event it does not name gets an empty answer.
    whole: the event was read and parsed whole (else its fields were salvaged from an unreadable input)."""
    name = event.get("hook_event_name")
    handler = harness.EVENTS.get(name) if isinstance(name, str) else None
    if handler is None:
        return Answer()  # an event this version does not handle: nothing to say
    return HANDLERS[handler](harness, event, here, whole)


# ------------------------------------------------------------------------------------------------ the handlers
# Each loads its module when it is called, never before: the hook path loads what it runs (a tool call's guard loads
# no brief; a session's start loads no guard).


def _session_start(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    from rehydrate.harness import events  # loaded when called (see above)

    return events.session_start(harness, event, here, whole)


def _after_compaction(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    from rehydrate.harness import events  # loaded when called (see above)

    return events.after_compaction(harness, event, here, whole)


def _stop(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    from rehydrate.harness import events  # loaded when called (see above)

    return events.stop(harness, event, here, whole)


def _model_request(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    """Before each model request: the brief's modules loaded only for a request that needs the brief."""
    if getattr(harness, "wants_brief", lambda _: True)(event) is None:
        return Answer()
    from rehydrate.harness.compaction import request  # loaded when called (see above)

    return request.model_request(harness, event, here, whole)


def _compaction_start(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    from rehydrate.harness.compaction import records  # loaded when called (see above)

    return records.compaction_start(harness, event, here, whole)


def _compaction_end(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    from rehydrate.harness.compaction import records  # loaded when called (see above)

    return records.compaction_end(harness, event, here, whole)


def _precompress(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    from rehydrate.harness.compaction import records  # loaded when called (see above)

    return records.precompress(harness, event, here, whole)


def _guard(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    from rehydrate.harness.guard import before  # loaded when called (see above)

    return before.guard(harness, event, here, whole)


def _tasks(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    """After a tool call: the task list's mirror, its modules loaded only for a task tool."""
    if not task_tool(event.get("tool_name")):
        return Answer()
    from rehydrate.harness import tasks  # loaded when called (see above)

    return tasks.tasks(harness, event, here, whole)


def _after_tool(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    """The check by effect, then the harness's AFTER_TOOL handler."""
    from rehydrate.harness.guard import effect  # loaded when called (see above)

    return effect.after_tool(harness, event, here, whole, HANDLERS)


def _stop_checked(harness: Harness, event: dict[str, Any], here: Located, whole: bool) -> Answer:
    """The check by effect, then stop."""
    from rehydrate.harness.guard import effect  # loaded when called (see above)

    return effect.stop(harness, event, here, whole)


# What rehydrate does on each event a harness sends (its module's EVENTS names one of these).
HANDLERS: dict[str, Handler] = {
    "session_start": _session_start,
    "compaction_start": _compaction_start,
    "compaction_end": _compaction_end,
    "precompress": _precompress,
    "after_compaction": _after_compaction,
    "model_request": _model_request,
    "stop": _stop,
    "guard": _guard,
    "tasks": _tasks,
    "after_tool": _after_tool,
    "stop_checked": _stop_checked,
}
