"""The hook calls a harness makes on every tool call (and Gemini CLI's before every model request), answered with the
few modules they need: a call that nothing applies to costs little more than the interpreter's own start.

`rehydrate hook HARNESS [EVENT]` comes here first (rehydrate.__main__, before the command line is loaded). A call is
answered here only by the code the whole dispatch (hook.py) runs for it, called the same way: the same intake
(event_of), the same state found (base.located), the guard's own function (guard/before.guard), the check by
effect's own first step (guard/snapshot.quiet). What is skipped is the loading: the command line, the dispatch and
its handlers. Anything else goes to the whole dispatch with the input already read: another event, an input that is
not one whole JSON object, a check by effect with something to do (a guarded file changed, a snapshot to rebuild),
a task list to mirror, a brief to add, an error.

A hook's input is read here too, for both (read_input, event_of): within a deadline whatever the writer does, up to
a bound, and parsed and named as the handlers read it.
"""

from __future__ import annotations

import os
import stat
import sys
import time

from rehydrate import harness as registry
from rehydrate import safejson
from rehydrate.harness.base import Answer, located, task_tool

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.harness.base import Harness, Located


def answer(args: list[str]) -> int | Input | None:
    """Answer `rehydrate hook HARNESS [EVENT]` (args: HARNESS [EVENT]) when its event is one answered here: the exit
    code. Else the input read from stdin, for the whole dispatch to answer; None when nothing was read (the command
    line then says what is wrong with the arguments)."""
    name, event_name = args[0], (args[1] if len(args) == 2 else None)
    if name not in registry.HOOKS or (event_name is not None and event_name.startswith("-")):
        return None
    module = registry.get(name)
    if event_name is not None and not getattr(module, "EVENT_IN_ARGV", False):
        return None
    if sys.stdin is None:
        return None
    try:
        data = read_input(sys.stdin.fileno(), cap=getattr(module, "read_cap", None))
    except (OSError, ValueError):  # no usable stdin (closed, or not a file): the command line reads it again
        return None
    try:
        reply = _answered(module, data, event_name)
    except Exception:  # the whole dispatch answers it again, and says what went wrong as it always does
        return data
    return data if reply is None else told(reply)


def told(reply: Answer, safe: Callable[[str], str] | None = None) -> int:
    """Print a hook's answer (its stdout as one line) and give its exit code. safe: what every write passes through
    first. What this module answers is JSON written by safejson (printable ASCII: nothing for terminal_safe to take
    out), so it needs none; the whole dispatch's answers do (rehydrate.__main__, and the command line's streams)."""
    out, err = reply.stdout, reply.stderr
    if safe is not None:
        out, err = safe(out), safe(err)
    if out:
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
    if err:
        sys.stderr.write(err)
    return reply.code


def _answered(harness: Harness, data: Input, event_name: str | None) -> Answer | None:
    event = event_of(harness, data, event_name)
    if event is None:
        return None
    name = event.get("hook_event_name")
    handler = harness.EVENTS.get(name, "") if isinstance(name, str) else ""
    if handler == "session_start":
        _session_start(event)
        return None
    quick = QUICK.get(handler)
    if quick is None:
        return None
    here = located(event)
    if here is None:
        return Answer()  # no state here: a tool call is told nothing (hook._idle)
    return quick(harness, event, here)


def _session_start(event: dict[str, Any]) -> None:
    """A session start is the whole dispatch's (the brief). git status, which needs nothing the state says, starts
    here, before the brief's modules load: the brief takes it (checks.git.probe.prestart); the script's entry stops
    it when nothing did (rehydrate.__main__)."""
    here = located(event)
    if here is not None:
        from rehydrate.checks.git import probe

        probe.prestart(here.root)


def _guard(harness: Harness, event: dict[str, Any], here: Located) -> Answer | None:
    from rehydrate.harness.guard import before  # the guard itself: what it loads, it loads only as it needs

    return before.guard(harness, event, here, True)


def _after_tool(harness: Harness, event: dict[str, Any], here: Located) -> Answer | None:
    """guard/effect.after_tool when the check by effect finds nothing and the harness's AFTER_TOOL has nothing to do
    (no AFTER_TOOL; the task list's mirror after a call that is not a task tool's; the brief after a compaction
    with no compaction since the brief)."""
    from rehydrate.harness.guard import snapshot

    if snapshot.quiet(here.root) is None:
        return None
    then = getattr(harness, "AFTER_TOOL", None)
    if then is None or (then == "tasks" and not task_tool(event.get("tool_name"))):
        return Answer()
    return _after_compaction(harness, event, here) if then == "after_compaction" else None


def _after_compaction(harness: Harness, event: dict[str, Any], here: Located) -> Answer | None:
    """events.after_compaction for a session with no compaction since its brief (its marks say so)."""
    from rehydrate.harness.compaction import marks

    return Answer() if marks.unseen(here.root, event) is None else None


def _model_request(harness: Harness, event: dict[str, Any], here: Located) -> Answer | None:
    """hook._model_request for a request that needs no brief (the common case)."""
    wants: Callable[[dict[str, Any]], object] | None = getattr(harness, "wants_brief", None)
    return Answer() if wants is not None and wants(event) is None else None


# The handlers (a harness's EVENTS) answered here, each when it can be.
QUICK: dict[str, Callable[[Harness, dict[str, Any], Located], Answer | None]] = {
    "guard": _guard,
    "after_tool": _after_tool,
    "after_compaction": _after_compaction,
    "model_request": _model_request,
}


# ------------------------------------------------------------------------------------------------ the input

MAX_STDIN = 64 << 20  # the hook's input kept whole; beyond it, stdin is read to its end and its last bytes kept
STDIN_TAIL = 1 << 20  # what is kept of the end of an input larger than MAX_STDIN
STDIN_SECONDS = 2.0  # stdin that never closes: answer with what came by then (the shortest harness timeout is 10 s)
STDIN_PAUSE = 0.05  # a pause this long after a whole JSON object ends the read, even if stdin stays open


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

    Reads a pipe without blocking (what is there already is taken at once), polls the descriptor for the rest,
    never blocks on it: from a writer that never closes it, a whole JSON object is taken as
    soon as the writer pauses, anything else after `seconds`. Past limit, the rest is read and dropped (the writer is
    never left blocked), its last STDIN_TAIL bytes kept: an event's fields may come after a huge value.

    A model request of megabytes (Gemini CLI's BeforeModel) comes through here before every request: once a first
    read finds the pipe full, it is widened where the system allows it (fewer wake-ups on both sides), and what is
    read is kept as the chunks that came, joined once at the end (never copied chunk by chunk). cap, given the
    input's first CAP_PROBE bytes, may say that only its first N bytes are needed (the harness's read_cap): the rest
    is then drained without being copied where the system can (Linux: splice into /dev/null) and the Input is
    `capped`.
    """
    unblocked = _unblocked(fd)
    try:
        return _read(fd, limit, seconds, cap, None if unblocked else _poller(fd))
    finally:
        if unblocked:
            os.set_blocking(fd, True)


def _unblocked(fd: int) -> bool:
    """Whether fd, a pipe, was made non-blocking here (the caller makes it blocking again): then what the writer
    wrote already is read at once, and only an input still coming needs select (a harness writes the whole event
    and closes the pipe, most often before the interpreter is up)."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode) or not os.get_blocking(fd):
            return False
        os.set_blocking(fd, False)
    except (OSError, AttributeError):  # (os.get_blocking on a Windows pipe: Python 3.12+)
        return False
    return True


def _poller(fd: int) -> Any:
    """A poll object watching fd for input (select loads here)."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return poller


def _read(fd: int, limit: int, seconds: float, cap: Callable[[bytes], int | None] | None, poller: Any) -> Input:
    """read_input's loop; poller is None while fd, non-blocking, has not yet been found empty."""
    parts: list[bytes] = []
    kept = 0
    tail = b""
    size = 0
    deadline = time.monotonic() + seconds
    tried = -1  # the size at which the input was last tried as a whole object
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return Input(b"".join(parts), tail, size, ended=False)
        if poller is not None and not poller.poll(max(1, int(min(left, STDIN_PAUSE) * 1000))):
            if size != tried and size == kept:
                head = b"".join(parts)
                parts = [head]
                if _whole_object(head):
                    return Input(head, b"", size)
            tried = size
            continue
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:  # all that was written is read: wait for the rest
            poller = poller or _poller(fd)
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
                    return _drained(fd, parts, min(kept, need), size, need, poller or _poller(fd), deadline)
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


def event_of(harness: Harness, data: Input, event_name: str | None = None) -> dict[str, Any] | None:
    """The event an input gives when it was read whole (or as much of it as the harness's read_cap asked) and parses
    as a JSON object, in the field names the handlers read (the harness's normalize; event_name: the event the
    command line names, for a harness whose input names none); None for any other input, whose fields the caller
    salvages (hook.run)."""
    shallow = getattr(harness, "shallow", None) if event_name is None else None  # a model request read in part
    if shallow is not None and data.capped and data.ended:
        event = shallow(data.head)
        if event is not None:
            return _named(harness, event, event_name)
    if not data.whole:
        return None
    if shallow is not None:
        event = shallow(data.head)
        if event is not None:
            return _named(harness, event, event_name)
    try:
        event = safejson.loads(data.head.decode("utf-8", "replace")) if data.head.strip() else {}
    except ValueError:
        return None
    return _named(harness, event, event_name) if isinstance(event, dict) else None


def _named(harness: Harness, event: dict[str, Any], event_name: str | None) -> dict[str, Any]:
    """The event in the field names the handlers read: the harness's normalize, where it has one (given the event
    name where the command line names it)."""
    normalize: Any = getattr(harness, "normalize", None)
    if event_name is not None:
        return normalize(event, event_name)  # type: ignore[no-any-return]  # (every EVENT_IN_ARGV harness has one)
    if normalize is not None and not getattr(harness, "EVENT_IN_ARGV", False):
        return normalize(event)  # type: ignore[no-any-return]
    return event
