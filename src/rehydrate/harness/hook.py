"""`rehydrate hook HARNESS`: answer a harness's hook call. Whatever happens, it exits 0 and says what it can.

A hook that fails or blocks breaks the agent's session (in Claude Code, exit 2 blocks), so every error becomes text
the agent can read: a reduced brief and the problem. Only the harness's stdin decides what happens; nothing here is
executed from it.
"""

from __future__ import annotations

import os
import select
import time

from rehydrate import harness as registry
from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.harness.base import TASK_LIST_TOOLS, Answer, Located
from rehydrate.store import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.harness.base import Handler, Harness

MAX_STDIN = 64 << 20  # the hook's input kept whole; beyond it, stdin is read to its end and its last bytes kept
STDIN_TAIL = 1 << 20  # what is kept of the end of an input larger than MAX_STDIN
STDIN_SECONDS = 2.0  # stdin that never closes: answer with what came by then (the shortest harness timeout is 10 s)
STDIN_PAUSE = 0.05  # a pause this long after a whole JSON object ends the read, even if stdin stays open
STATE_MARKS = (layout.WAL_DIR, *layout.VIEWS)  # a folder holding none of these is not a rehydrate state
NO_STATE = "rehydrate: no state folder here, nothing to inject (`rehydrate init --goal TEXT` starts one)"


class Input:
    """What came on stdin: its first MAX_STDIN bytes (head), the last STDIN_TAIL bytes of the rest (tail), its whole
    size, and whether it ended (end of file, or a whole JSON object followed by silence)."""

    def __init__(
        self, head: bytes, tail: bytes = b"", size: int | None = None, ended: bool = True, capped: bool = False
    ) -> None:
        self.head = head
        self.tail = tail
        self.size = len(head) + len(tail) if size is None else size
        self.ended = ended
        self.capped = capped  # only head was kept, by design: the harness needs no more of this input (READ_CAP)

    @property
    def whole(self) -> bool:
        return self.ended and self.size == len(self.head)


CAP_PROBE = 1 << 16  # the bytes of an input a harness's read_cap is shown, to say how much of it it needs


def read_input(
    fd: int, limit: int = MAX_STDIN, seconds: float = STDIN_SECONDS, cap: Callable[[bytes], int | None] | None = None
) -> Input:
    """A hook's stdin: all of it up to limit bytes, within `seconds` whatever the writer does.

    Polls the descriptor, never blocks on it: from a writer that never closes it, a whole JSON object is taken as
    soon as the writer pauses, anything else after `seconds`. Past limit, the rest is read and dropped (the writer is
    never left blocked), its last STDIN_TAIL bytes kept: an event's fields may come after a huge value.

    A model request of megabytes (Gemini CLI's BeforeModel) comes through here before every request: once a first
    read finds the pipe full, it is widened where the system allows it (fewer wake-ups on both sides), and what is
    read is kept as the chunks that came, joined once at the end (never copied chunk by chunk). cap, given the
    input's first CAP_PROBE bytes, may say that only its first N bytes are needed (the harness's read_cap): the rest
    is then drained without being copied where the system can (Linux: splice into /dev/null) and the Input is
    `capped`.
    """
    parts: list[bytes] = []
    kept = 0
    tail = b""
    size = 0
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + seconds
    tried = -1  # the size at which the input was last tried as a whole object
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return Input(b"".join(parts), tail, size, ended=False)
        if not poller.poll(max(1, int(min(left, STDIN_PAUSE) * 1000))):
            if size != tried and size == kept:
                head = b"".join(parts)
                parts = [head]
                if _whole_object(head):
                    return Input(head, b"", size)
            tried = size
            continue
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            continue
        except OSError:
            break
        if not chunk:
            break
        _widen(fd, first=not size, read=len(chunk))
        size += len(chunk)
        room = limit - kept
        if room >= len(chunk):
            parts.append(chunk)
            kept += len(chunk)
            if cap is not None and kept >= CAP_PROBE:
                need = cap(b"".join(parts)[:CAP_PROBE])
                cap = None
                if need is not None:
                    parts = [b"".join(parts)[:need]]
                    return _drained(fd, parts, min(kept, need), size, need, poller, deadline)
            continue
        if room > 0:
            parts.append(chunk[:room])
            kept = limit
            chunk = chunk[room:]
        tail = (tail + chunk)[-STDIN_TAIL:]
    return Input(b"".join(parts), tail, size)


def _drained(fd: int, parts: list[bytes], kept: int, size: int, need: int, poller: Any, deadline: float) -> Input:
    """The rest of a capped input: read up to `need` bytes in all, then the remainder drained to its end (spliced
    into /dev/null where the system can, else read and dropped), within the same deadline."""
    null = [-1]  # /dev/null, opened at the first splice
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return Input(b"".join(parts), b"", size, ended=False, capped=True)
            if not poller.poll(max(1, int(min(left, STDIN_PAUSE) * 1000))):
                continue
            if kept < need:
                chunk = os.read(fd, min(1 << 20, need - kept))
                parts.append(chunk)
                kept += len(chunk)
                moved = len(chunk)
            else:
                moved = _discard(fd, null)
            if not moved:
                break
            size += moved
    except OSError:  # BlockingIOError included: what was read is what there is
        pass
    finally:
        if null[0] >= 0:
            os.close(null[0])
    return Input(b"".join(parts), b"", size, capped=True)


def _discard(fd: int, null: list[int]) -> int:
    """Up to 1 MiB of fd consumed unread: spliced into /dev/null (null[0], opened here once) where the system can,
    else read and dropped. The bytes consumed; 0 at the end of the input."""
    splice = getattr(os, "splice", None)  # Linux, Python 3.10+
    if splice is not None and null[0] != -2:
        try:
            if null[0] < 0:
                null[0] = os.open(os.devnull, os.O_WRONLY)
            moved: int = splice(fd, null[0], 1 << 20)
            return moved
        except OSError:  # not a pipe (a file given as stdin), or no splice into /dev/null here
            if null[0] >= 0:
                os.close(null[0])
            null[0] = -2
    return len(os.read(fd, 1 << 20))


def _widen(fd: int, first: bool, read: int) -> None:
    """The pipe at fd widened to 1 MiB where the system allows it (Linux: F_SETPIPE_SZ; up to pipe-max-size without
    privileges), once a first read found it full: a small input never loads fcntl."""
    if not first or read < 1 << 16:
        return
    try:
        import fcntl  # not on Windows
    except ImportError:
        return
    if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux only (Python 3.10+)
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:  # not a pipe, or more than pipe-max-size
            pass


def _whole_object(data: bytes | bytearray) -> bool:
    """True if data is one whole JSON object: nothing can follow it in a valid input."""
    end = len(data)
    while end and data[end - 1] in b" \t\r\n":  # no copy of what may be 64 MiB
        end -= 1
    if not end or data[end - 1] != 0x7D:  # "}"
        return False
    try:
        return isinstance(safejson.loads(bytes(data)), dict)
    except ValueError:
        return False


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
    if harness not in registry.HOOKS:
        return Answer(stderr=f"rehydrate hook {harness}: no such harness (one of {', '.join(registry.HOOKS)})\n")
    module = registry.get(harness)
    if event_name is not None and not getattr(module, "EVENT_IN_ARGV", False):
        return Answer(stderr=f"rehydrate hook {harness}: takes no event name ({event_name!r} given)\n")
    if event_name is not None:
        return _named(module, raw, Input(raw, tail, size, ended, capped), event_name)
    data = Input(raw, tail, size, ended, capped)
    shallow = getattr(module, "shallow", None)  # an input it reads in part: a model request (see gemini.shallow)
    if capped and data.ended:
        event = shallow(raw) if shallow is not None else None
        if event is not None:
            return _answer(module, event)
    if not data.whole:
        why = (
            f"{data.size:,} bytes, more than the {len(raw):,} read"
            if data.size > len(raw)
            else f"stdin still open after {STDIN_SECONDS:g} s, {data.size:,} bytes read"
        )
        return _unreadable(module, data, why)
    event = shallow(raw) if shallow is not None else None
    if event is not None:
        return _answer(module, event)
    try:
        event = safejson.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        if not isinstance(event, dict):
            raise ValueError("the hook's input is not a JSON object")
    except ValueError as e:
        return _unreadable(module, data, str(e)[:300])
    return _answer(module, event)


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


def located(event: dict[str, Any]) -> Located | None:
    """The rehydrate state the event's cwd finds, or None where there is none: none found, one that belongs to
    another user, or a `state/` of something else (no WAL, no view file). A state folder that exists but cannot be
    read is found: it gets the reduced brief and its problem."""
    try:
        here = Located.find(event)
    except RehydrateError:  # the only candidate belongs to another user: not ours
        return None
    root = here.root
    if root and os.path.isdir(root) and any(os.path.lexists(os.path.join(root, n)) for n in STATE_MARKS):
        return here
    return None


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
    name = event.get("tool_name")
    if name not in TASK_LIST_TOOLS:
        from rehydrate.transcripts.claude import TASK_TOOLS  # Claude Code's task tools: one task a call

        if name not in TASK_TOOLS:
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
