"""`rehydrate hook HARNESS`: answer a harness's hook call. Whatever happens, it exits 0 and says what it can.

A hook that fails or blocks breaks the agent's session (in Claude Code, exit 2 blocks), so every error becomes text
the agent can read: a reduced brief and the problem. Only the harness's stdin decides what happens; nothing here is
executed from it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys

from rehydrate.errors import RehydrateError
from rehydrate.store import views

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_STDIN = 64 << 20  # the hook's input kept whole; beyond it, stdin is read to its end and its last bytes kept
STDIN_TAIL = 1 << 20  # what is kept of the end of an input larger than MAX_STDIN
STDIN_SECONDS = 2.0  # stdin that never closes: answer with what came by then (the shortest harness timeout is 10 s)
STDIN_PAUSE = 0.05  # a pause this long after a whole JSON object ends the read, even if stdin stays open
MAX_CONFIG = 64 << 10  # state/config.json is a few keys; a larger one is ignored (defaults apply)
BRIEF_BUDGET = 9000  # characters: Claude Code cuts a hook's output string at 10,000 characters
# Each harness's bound on the brief, in the unit it counts: (characters, UTF-8 bytes or None).
# - Claude Code: cuts at 10,000 characters; 9,000 leaves room for the notice of a cut and the JSON around it.
# - Codex CLI: caps a hook's output near 2,500 tokens, counted at about 4 bytes a token (about 10,000 bytes); a brief
#   of 6,229 characters in 12,448 bytes was cut. 9,000 bytes leaves 10% for the estimate's rounding and the text
#   Codex puts around the context.
# - Gemini CLI: no cap on a hook's output (0.56 source: hookRunner keeps all of stdout; getAdditionalContext only
#   escapes < and >); the same 9,000 characters as Claude Code bounds what each injection costs.
BUDGETS: dict[str, tuple[int, int | None]] = {
    "claude": (BRIEF_BUDGET, None),
    "codex": (BRIEF_BUDGET, 9000),
    "gemini": (BRIEF_BUDGET, None),
}
# Worded for wherever the harness puts it: Claude Code puts the brief before the summary, in the same message.
COMPACTED = (
    "A context compaction just happened; the summary of the conversation is lossy. The brief below was read from disk "
    "and is the ground truth: where the summary and this brief disagree, trust this brief. Re-read it before acting."
)
ENTRY_BYTES = 1200  # a quoted rejected approach in a guard's answer, where the harness counts bytes (5 of them)
MAX_SESSION = 200  # the most characters of a harness's session id kept in a record
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit", "write_file", "replace")  # Claude Code; Gemini CLI
SHELL_TOOLS = ("Bash", "run_shell_command")  # Claude Code and Codex; Gemini CLI
PATCH_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")  # Codex's apply_patch
CONFIG = "config.json"
GUARD_DECISIONS = ("ask", "deny", "warn")
TOOL_EVENTS = ("PreToolUse", "BeforeTool")
# The string fields an unreadable input is searched for: the event's name and, for a tool event, its target.
SALVAGED = ("hook_event_name", "tool_name", "cwd", "source", "trigger", "session_id", "transcript_path")
STATE_MARKS = (views.WAL_DIR, *views.VIEWS)  # a folder holding none of these is not a rehydrate state
NO_STATE = "rehydrate: no state folder here, nothing to inject (`rehydrate init --goal TEXT` starts one)"
SALVAGED_INPUT = ("file_path", "notebook_path", "command")
_VALUE = rb'\s*:\s*"'  # after a key: the start of its string value


class Answer:
    """What the hook prints, and its exit code (always 0 unless the user asked for blocking)."""

    def __init__(self, stdout: str = "", stderr: str = "", code: int = 0) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.code = code


class Input:
    """What came on stdin: its first MAX_STDIN bytes (head), the last STDIN_TAIL bytes of the rest (tail), its whole
    size, and whether it ended (end of file, or a whole JSON object followed by silence)."""

    def __init__(self, head: bytes, tail: bytes = b"", size: int | None = None, ended: bool = True) -> None:
        self.head = head
        self.tail = tail
        self.size = len(head) + len(tail) if size is None else size
        self.ended = ended

    @property
    def whole(self) -> bool:
        return self.ended and self.size == len(self.head)


def read_input(fd: int, limit: int = MAX_STDIN, seconds: float = STDIN_SECONDS) -> Input:
    """A hook's stdin: all of it up to limit bytes, within `seconds` whatever the writer does.

    Polls the descriptor, never blocks on it: from a writer that never closes it, a whole JSON object is taken as
    soon as the writer pauses, anything else after `seconds`. Past limit, the rest is read and dropped (the writer is
    never left blocked), its last STDIN_TAIL bytes kept: an event's fields may come after a huge value.
    """
    import select
    import time

    head = bytearray()
    tail = b""
    size = 0
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + seconds
    tried = -1  # the size at which the input was last tried as a whole object
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return Input(bytes(head), tail, size, ended=False)
        if not poller.poll(max(1, int(min(left, STDIN_PAUSE) * 1000))):
            if size != tried and size == len(head) and _whole_object(head):
                return Input(bytes(head), b"", size)
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
        size += len(chunk)
        room = limit - len(head)
        if room > 0:
            head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            tail = (tail + chunk)[-STDIN_TAIL:]
    return Input(bytes(head), tail, size)


def _whole_object(data: bytearray) -> bool:
    """True if data is one whole JSON object: nothing can follow it in a valid input."""
    from rehydrate import safejson

    end = len(data)
    while end and data[end - 1] in b" \t\r\n":  # no copy of what may be 64 MiB
        end -= 1
    if not end or data[end - 1] != 0x7D:  # "}"
        return False
    try:
        return isinstance(safejson.loads(bytes(data)), dict)
    except ValueError:
        return False


def run(harness: str, raw: bytes, *, tail: bytes = b"", size: int | None = None, ended: bool = True) -> Answer:
    """Answer one hook call; never raises. raw is the hook's input; for one that was not read whole (see Input),
    tail, size and ended say what is missing."""
    from rehydrate import safejson

    data = Input(raw, tail, size, ended)
    if not data.whole:
        why = (
            f"{data.size:,} bytes, more than the {len(raw):,} read"
            if data.size > len(raw)
            else f"stdin still open after {STDIN_SECONDS:g} s, {data.size:,} bytes read"
        )
        return _unreadable(harness, data, why)
    try:
        event = safejson.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        if not isinstance(event, dict):
            raise ValueError("the hook's input is not a JSON object")
    except ValueError as e:
        return _unreadable(harness, data, str(e)[:300])
    return _answer(harness, event)


def _answer(harness: str, event: dict[str, Any], whole: bool = True) -> Answer:
    try:
        idle = _idle(harness, event)
        if idle is not None:
            return idle
        return _dispatch(harness, event, whole)
    except Exception as e:  # a hook never breaks the harness, unless the user asked for that
        name = str(event.get("hook_event_name") or "")
        message = str(e) if isinstance(e, RehydrateError) else f"internal error ({type(e).__name__}: {e})"
        if _blocking(event):  # {"block_on_error": true} in state/config.json: exit 2, the harness's "stop"
            return Answer(stderr=f"rehydrate hook {harness}: {message}\n", code=2)
        if name == "SessionStart" or not name:
            return _reduced(harness, event, f"rehydrate hook {harness}: {message}")
        return Answer(stderr=f"rehydrate hook {harness}: {message}\n")


def _unreadable(harness: str, data: Input, why: str) -> Answer:
    """An input that was not read whole or does not parse: the fields that can still be found in it decide.

    A tool event (named so; or unnamed but holding a tool's name or input, or too large to be anything else) goes to
    the guard, which decides on the target it can establish and fails closed when it cannot; any other named event
    is answered as usual from its fields; an input that names nothing gets the reduced brief.
    """
    problem = f"rehydrate hook {harness}: could not read the hook's input ({why})"
    event = salvage(data.head, data.tail)
    if "hook_event_name" not in event and ("tool_name" in event or "tool_input" in event or data.size > len(data.head)):
        event["hook_event_name"] = "BeforeTool" if harness == "gemini" else "PreToolUse"
    if "hook_event_name" not in event:
        return _idle(harness, event) or _reduced(harness, event, problem)
    answer = _answer(harness, event, whole=False)
    answer.stderr = problem + "\n" + answer.stderr
    return answer


def _idle(harness: str, event: dict[str, Any]) -> Answer | None:
    """Where there is no state, a hook says nothing: an empty answer (SessionStart: one short line on stderr, except
    for Gemini CLI, which shows a hook's stderr to the user as a message when its stdout is empty), else None. With
    hooks installed for the user, every session in every repository calls them; one without a rehydrate state folder
    (none found, or a `state/` of something else: no WAL, no view file) must not be told to make one. A state folder
    that exists but cannot be read is not this: it gets the reduced brief and its problem."""
    from rehydrate.store.locate import locate

    cwd = event.get("cwd")
    try:
        root = locate(None, cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None)
    except RehydrateError:  # the only candidate belongs to another user: not ours
        root = ""
    if root and os.path.isdir(root) and any(os.path.lexists(os.path.join(root, n)) for n in STATE_MARKS):
        return None
    if event.get("hook_event_name") in ("SessionStart", None) and harness != "gemini":
        return Answer(stderr=NO_STATE + "\n")
    return Answer()


def salvage(head: bytes, tail: bytes = b"") -> dict[str, Any]:
    """The string fields of SALVAGED (and of SALVAGED_INPUT, under "tool_input") found whole in an input that does
    not parse (cut short, too large, nested too deeply). A tool_input field found only cut short is named in
    tool_input["cut"]."""
    event: dict[str, Any] = {}
    tool_input: dict[str, Any] = {}
    cut: list[str] = []
    for key in SALVAGED + SALVAGED_INPUT:
        value, was_cut = _field(head, key)
        if value is None and tail:
            value, more = _field(tail, key, from_start=False)
            was_cut = was_cut or more
        if value is not None:
            (tool_input if key in SALVAGED_INPUT else event)[key] = value
        elif was_cut and key in SALVAGED_INPUT:
            cut.append(key)
    if tool_input or cut or b'"tool_input"' in head or b'"tool_input"' in tail:
        event["tool_input"] = {**tool_input, "cut": cut}
    if not os.path.isdir(event.get("cwd", "")):
        event.pop("cwd", None)
    return event


def _field(data: bytes, key: str, from_start: bool = True) -> tuple[str | None, bool]:
    """The first whole string value of `"key": "..."` in data where the key is not text inside a string; and
    whether such a value was found cut short by the end of data. from_start: data is the input's beginning (not a
    window whose first byte may follow a backslash). Linear in len(data)."""
    import re

    needle = b'"' + key.encode() + b'"'
    cut = False
    at = data.find(needle)
    while at >= 0:
        if _unescaped(data, at, max(0, at - 4096), from_start):  # a key, not text in a string (quotes escaped there)
            after = at + len(needle)
            m = re.compile(_VALUE).match(data, after)
            if m is None:
                cut = cut or not data[after:].strip(b" \t\r\n:")
            else:
                start = scan = m.end()
                while True:
                    quote = data.find(b'"', scan)
                    if quote < 0:
                        cut = True
                        break
                    if _unescaped(data, quote, scan, True):
                        try:
                            value = json.loads('"' + data[start:quote].decode("utf-8", "replace") + '"')
                        except ValueError:
                            break
                        return value, cut
                    scan = quote + 1
        at = data.find(needle, at + 1)
    return None, cut


def _unescaped(data: bytes, quote: int, low: int, known: bool) -> bool:
    """The quote at data[quote] follows an even number of backslashes, counted back to low at most; False when they
    may go on before low (unless low is 0 and known: data's first byte is the input's first byte)."""
    before = data[low:quote]
    run = len(before) - len(before.rstrip(b"\\"))
    if run == len(before) and ((low > 0 and data[low - 1] == 0x5C) or (low == 0 and not known)):
        return False
    return run % 2 == 0


def _blocking(event: dict[str, Any]) -> bool:
    try:
        from rehydrate.store.locate import locate

        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        return _config(locate(None, cwd if cwd and os.path.isdir(cwd) else None)).get("block_on_error") is True
    except Exception:
        return False


def _dispatch(harness: str, event: dict[str, Any], whole: bool = True) -> Answer:
    """whole: the event was read and parsed whole (else its fields were salvaged from an unreadable input)."""
    name = event.get("hook_event_name")
    if name == "SessionStart":
        return _session_start(harness, event)
    if name == "PreCompact":
        return _record_compaction(event, "pre")
    if name == "PreCompress":
        return _record_precompress(event)
    if name == "PostCompact":  # the end of the compaction PreCompact recorded: one compaction, one `compaction` record
        return _record_compaction(event, "post")
    if name in TOOL_EVENTS:
        return _guard(harness, event, whole)
    if name == "BeforeAgent":
        return _after_compression(harness, event)
    if name == "Stop":
        return _stop(event)
    return Answer()  # an event this version does not handle: nothing to say


def _open(event: dict[str, Any] | None) -> Any:
    from rehydrate.store.locate import locate
    from rehydrate.store.state import State

    cwd = event.get("cwd") if event else None
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    return State.open(locate(None, start))


def _budget(harness: str) -> tuple[int, int | None]:
    """The brief's bound for this harness: (characters, UTF-8 bytes or None); see BUDGETS."""
    return BUDGETS.get(harness, (BRIEF_BUDGET, None))


def _context(event_name: str, text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}})


def _session(event: dict[str, Any]) -> str | None:
    """The harness's session id, cleaned as the resume record keeps it; None if the event has none."""
    sid = event.get("session_id")
    if not isinstance(sid, str):
        return None
    return views.clean(sid, one_line=True)[:MAX_SESSION] or None


def _session_start(harness: str, event: dict[str, Any]) -> Answer:
    source = event.get("source")
    preface = COMPACTED if source == "compact" else None
    state = _open(event)
    session = _session(event)
    if source == "resume" and session:
        given = _already_given(state.wal_path, session)
        if given is not None:
            return Answer(stdout=_context("SessionStart", _pointer(given)))
    from rehydrate import brief

    chars, size = _budget(harness)
    result = brief.resume(state, chars, preface=preface, session_id=session, max_bytes=size)
    return Answer(stdout=_context("SessionStart", result.text))


def _recent(wal_path: str, count: int) -> list[dict[str, Any]]:
    """The WAL's last records, newest first; none when its tail cannot be read (a conflicted or damaged log): the
    caller then does what it does without them, and `State` names the problem where a brief is given."""
    from rehydrate.store import wal

    try:
        return [rec for _, rec in reversed(wal.read_tail(wal_path, count).records)]
    except wal.BadRecord:
        return []


def _already_given(wal_path: str, session: str) -> dict[str, Any] | None:
    """The `resume` record of the brief this session was given since its last compaction, if nothing was written
    since: a resumed conversation still holds that brief (after `/compact` then `--resume`, Claude Code's next
    request would otherwise carry two). None if the session had no brief since its last compaction (one without a
    session id counts for every session), or any record but another brief or another session's compaction came
    after it (the brief in the conversation may be stale), or the WAL's recent tail does not tell. A compaction's
    start (PreCompact, phase pre) is what takes a brief away; its end (PostCompact) comes after the brief that
    SessionStart compact gives (Claude Code 2.1: PreCompact, SessionStart compact, PostCompact)."""

    for rec in _recent(wal_path, 64):
        data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
        assert isinstance(data, dict)
        if rec.get("op") == "resume":
            if data.get("session_id") == session:
                return rec
            continue  # another session's brief, or one printed by `rehydrate resume`: it changed nothing
        if rec.get("op") == "precompress":
            continue  # Gemini's note that a compression may follow: it changed nothing either
        other = data.get("session_id")
        if rec.get("op") == "compaction" and isinstance(other, str) and other[:MAX_SESSION] != session:
            continue  # another session's compaction leaves this conversation as it was
        if rec.get("op") == "compacted" or (rec.get("op") == "compaction" and data.get("phase") == "post"):
            continue  # PostCompact ends a compaction: Claude Code runs it after SessionStart compact gave the brief
        return None
    return None


def _pointer(given: dict[str, Any]) -> str:
    ts = views.clean(str(given.get("ts", "")), one_line=True)[:24]
    return (
        f"rehydrate: this session was given the brief at {ts} (WAL record {given.get('seq')}) and nothing was "
        "written since: it is earlier in this conversation. `rehydrate resume` prints it again."
    )


def _after_compression(harness: str, event: dict[str, Any]) -> Answer:
    """Gemini CLI has no start event after a compression: BeforeAgent injects the brief, with the compaction notice,
    once after a `compaction` record of this session (none since its last brief). Gemini's PreCompress is no such
    record (see _record_precompress): only a confirmed compaction of this very conversation counts."""

    session = _session(event)
    if session is None:
        return Answer()
    state = _open(event)
    for rec in _recent(state.wal_path, 64):
        data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
        assert isinstance(data, dict)
        other = data.get("session_id")
        if not isinstance(other, str) or other[:MAX_SESSION] != session:
            continue
        if rec.get("op") == "resume":
            return Answer()  # the brief since
        if rec.get("op") == "compaction":
            break
    else:
        return Answer()
    from rehydrate import brief

    chars, size = _budget(harness)
    result = brief.resume(state, chars, preface=COMPACTED, session_id=_session(event), max_bytes=size)
    return Answer(stdout=_context("BeforeAgent", result.text))


def _reduced(harness: str, event: dict[str, Any] | None, problem: str) -> Answer:
    """The brief as far as the files can be read, and the problem, as SessionStart context.

    The compaction notice goes in as the brief's preface, inside its budget: the rendered brief is never cut
    afterwards (that would chop its ledger or its next action)."""
    from rehydrate import brief
    from rehydrate.store.locate import locate, resolve_actor

    problem = problem if len(problem) <= 2000 else problem[:2000] + "…"
    cwd = event.get("cwd") if event else None
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    try:
        root = locate(None, start)
        if not os.path.isdir(root):
            where = start or os.getcwd()
            text = f"{problem}\n(no state folder found from {where}: `rehydrate init --goal ...` creates one)"
        else:
            preface = COMPACTED if event and event.get("source") == "compact" else None
            chars, size = _budget(harness)
            text = brief.reduced(root, resolve_actor(None), problem, chars, preface=preface, max_bytes=size)
    except Exception as e:
        text = f"{problem}\n(and the state could not be read: {type(e).__name__}: {str(e)[:1000]})"
    return Answer(stdout=_context("SessionStart", text), stderr=problem + "\n")


def _record_precompress(event: dict[str, Any]) -> Answer:
    """Gemini CLI's PreCompress, logged as a `precompress` note that is not a compaction: no notice, no brief follow.

    Gemini fires it inside its compression service before deciding whether to compress: on every model request
    (trigger auto), and for `/compress` (manual) also when there turns out to be nothing to compress or the summary
    fails. Nothing a hook sees confirms a compression afterwards (0.61: no post-compression event; the summary is not
    written to the session file; PreCompress carries only its trigger)."""
    data: dict[str, Any] = {}
    for key in ("trigger", "session_id", "transcript_path"):
        if isinstance(event.get(key), str):
            data[key] = views.clean(event[key], one_line=True)[:1000]
    _open(event).record("precompress", data)
    return Answer()


def _record_compaction(event: dict[str, Any], phase: str) -> Answer:
    """PreCompact: a `compaction` record (phase pre). PostCompact: a `compacted` record, the end of that same
    compaction with its summary's length and hash, so that one compaction appends exactly one `compaction`."""
    data: dict[str, Any] = {"phase": phase} if phase == "pre" else {}
    for key in ("trigger", "session_id", "transcript_path"):
        if isinstance(event.get(key), str):
            data[key] = views.clean(event[key], one_line=True)[:1000]
    summary = event.get("compact_summary")
    if isinstance(summary, str):  # its length and hash, never its text
        from rehydrate.store import wal

        data["summary_chars"] = len(summary)
        data["summary_sha256"] = wal.sha256(summary.encode("utf-8", "replace"))
    instructions = event.get("custom_instructions")
    if isinstance(instructions, str) and instructions:
        data["custom_instructions_chars"] = len(instructions)
    _open(event).record("compaction" if phase == "pre" else "compacted", data)
    return Answer()


def _stop(event: dict[str, Any]) -> Answer:
    """Never blocks and never adds a model turn. With `stop_reminder_after: N` in state/config.json, reminds the agent
    to checkpoint when the transcript shows N tool calls or more since the last checkpoint.

    The reminder is a plain `systemMessage` (shown, no new turn): Claude Code feeds a Stop hook's `additionalContext`
    to the model as a new turn and then fires Stop again (`stop_hook_active: true`), a loop. While a stop hook keeps
    the agent going (`stop_hook_active`), it says nothing at all."""
    from rehydrate.store.locate import locate

    if event.get("stop_hook_active"):
        return Answer()
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    root = locate(None, cwd if cwd and os.path.isdir(cwd) else None)
    limit = _config(root).get("stop_reminder_after")
    transcript = event.get("transcript_path")
    if not isinstance(limit, int) or limit < 1 or not isinstance(transcript, str):
        return Answer()
    state = _open(event)
    since = ""
    for rec in reversed(_recent(state.wal_path, 256)):
        if rec["op"] == "checkpoint":
            since = rec["ts"]
    calls = tool_calls_since(transcript, since)
    if calls < limit:
        return Answer()
    what = f"since the last checkpoint ({since[:16]}Z)" if since else "and no checkpoint in the WAL's recent records"
    text = (
        f"rehydrate: {calls} tool calls {what}. Before you stop, record where you are: "
        "rehydrate checkpoint --done 'WHAT' --next 'NEXT ACTION'"
    )
    return Answer(stdout=json.dumps({"systemMessage": text}))


def tool_calls_since(transcript: str, since: str) -> int:
    """Tool calls in a Claude Code transcript's assistant records stamped after `since`, read from the end."""
    from rehydrate import transcripts

    count = 0
    try:
        for rec in transcripts.newer_than(transcript, since):
            message = rec.get("message")
            content = message.get("content") if rec.get("type") == "assistant" and isinstance(message, dict) else None
            if isinstance(content, list):
                count += sum(1 for block in content if isinstance(block, dict) and block.get("type") == "tool_use")
    except OSError:
        return 0
    return count


def rejected_guards(invariants: str) -> list[tuple[str | None, str | None, str]]:
    """(path or command pattern, text to look for in what is written, the whole line) for each rejected approach in
    10_invariants.md that names a guard, a `contains`, or both."""
    out = []
    for line in invariants.split("\n"):
        ident = views.entry_id(line)
        if ident and ident.startswith("R-"):
            guard, contains = views.entry_guard(line)
            if guard or contains:
                out.append((guard, contains, line))
    return out


def hit(
    guard: str | None, contains: str | None, path: str | None, rel_path: str | None, command: str | None, written: str
) -> bool:
    """A rejected approach's watch matches a tool call: its guard (if any) matches the path or command, and its
    `contains` (if any) is in what the call writes or runs. A plain substring, never a pattern: 10_invariants.md
    arrives by git pull, and a planted regular expression could make the hook run for ever."""
    if guard is None and contains is None:
        return False
    if guard is not None and not matches(guard, path, rel_path, command):
        return False
    return contains is None or contains in written


def matches(guard: str, path: str | None, rel_path: str | None, command: str | None) -> bool:
    """A guard is a path glob or a command pattern: it matches a target path, a command, or a word of it."""
    for target in (path, rel_path):
        if target and (fnmatch.fnmatchcase(target, guard) or fnmatch.fnmatchcase(os.path.basename(target), guard)):
            return True
    if command:
        if guard in command or fnmatch.fnmatchcase(command, guard):
            return True
        return any(fnmatch.fnmatchcase(word.strip("'\""), guard) for word in command.split())
    return False


def _config(root: str) -> dict[str, Any]:
    """state/config.json, or {} (the defaults) if it is absent, unreadable, not a regular file or too large: read
    through fsio, which never follows a symlink nor blocks on a FIFO."""
    from rehydrate import safejson
    from rehydrate.store import fsio

    try:
        data = fsio.read_bytes(os.path.join(root, CONFIG), MAX_CONFIG)
        value = safejson.loads(data) if data else {}
    except (RehydrateError, OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _targets(tool: object, tool_input: dict[str, Any]) -> tuple[list[str], str | None]:
    """The paths a tool call edits and the command it runs, from the harness's tool input."""
    if tool in EDIT_TOOLS:
        target = tool_input.get("file_path") or tool_input.get("notebook_path")
        return ([target] if isinstance(target, str) else []), None
    command = tool_input.get("command")
    if not isinstance(command, str):
        return [], None
    if tool == "apply_patch":
        paths = [ln[len(h) :].strip() for ln in command.split("\n") for h in PATCH_HEADERS if ln.startswith(h)]
        return paths, None
    if tool in SHELL_TOOLS:
        return [], command
    return [], None


def written(tool: object, tool_input: dict[str, Any]) -> str:
    """What a tool call writes or runs, for a rejected approach's `contains`: a file's new content, the replacement
    text of an edit, the lines a patch adds, a shell command."""
    parts: list[object] = []
    if tool in EDIT_TOOLS:
        parts = [tool_input.get(k) for k in ("content", "new_string", "new_source")]
        edits = tool_input.get("edits")
        if isinstance(edits, list):
            parts += [e.get("new_string") for e in edits if isinstance(e, dict)]
    elif tool == "apply_patch":
        command = tool_input.get("command")
        if isinstance(command, str):
            parts = [ln[1:] for ln in command.split("\n") if ln.startswith("+") and not ln.startswith("+++")]
    elif tool in SHELL_TOOLS:
        parts = [tool_input.get("command")]
    return "\n".join(p for p in parts if isinstance(p, str))


def _established(tool: object, tool_input: dict[str, Any]) -> bool:
    """Whether a salvaged tool call's target is known: the tool, and the path or command the guard checks for it."""
    if not isinstance(tool, str):
        return False
    if tool in EDIT_TOOLS:
        return "file_path" in tool_input or "notebook_path" in tool_input
    if tool in SHELL_TOOLS or tool == "apply_patch":
        return "command" in tool_input
    return True  # a tool the guard does not watch


def _guard(harness: str, event: dict[str, Any], whole: bool = True) -> Answer:
    """Before a tool runs: an edit or command that matches a rejected approach's guard gets the configured decision.

    A call salvaged from an unreadable input (whole=False) whose target cannot be established gets the configured
    decision too, when any rejected approach has a guard: it fails closed, never open.
    """
    from rehydrate.store.locate import locate

    tool = event.get("tool_name")
    tool_input = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    assert isinstance(tool_input, dict)
    known = whole or _established(tool, tool_input)
    paths, command = _targets(tool, tool_input)
    if whole and not paths and command is None:
        return Answer()
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    root = locate(None, cwd if cwd and os.path.isdir(cwd) else None)
    from rehydrate.store import fsio

    try:
        data = fsio.read_bytes(os.path.join(root, views.INVARIANTS), 4 << 20)
    except RehydrateError:
        return Answer()
    if not data:
        return Answer()
    project = os.path.dirname(root)
    guards = rejected_guards(data.decode("utf-8", "replace"))
    if not whole and any(contains for _, contains, _ in guards):
        known = False  # what the call writes was not read whole: a `contains` cannot be ruled out
    if known and not paths and command is None:
        return Answer()
    text = written(tool, tool_input)
    hits: list[str] = []
    what = f"the command {command!r}"[:300]
    for path in paths or [""]:
        absolute = os.path.normpath(os.path.join(cwd or project, path)) if path else None
        rel = os.path.relpath(absolute, project) if absolute else None
        found = [ln for g, c, ln in guards if hit(g, c, absolute, rel, command, text) and ln not in hits]
        if found and rel:
            what = f"{tool} on {rel}"
        hits += found
    if not hits and (known or not guards):
        return Answer()
    decision = _config(root).get("guard", "ask")
    if decision not in GUARD_DECISIONS:
        decision = "ask"
    where = f"{os.path.basename(root)}/{views.INVARIANTS}"
    if hits:
        quoted = "\n".join(_entry(harness, h) for h in hits[:5])
        reason = (
            f"rehydrate: {what} matches an approach rejected in {where}:\n{quoted}\n"
            "A rejected approach stays rejected: do not retry it unless the human says the reason no longer holds."
        )
    else:
        quoted = "\n".join(_entry(harness, line) for _, _, line in guards[:5])
        more = f"\n(and {len(guards) - 5} more)" if len(guards) > 5 else ""
        call = f"this {views.clean(tool, one_line=True)[:80]} call" if isinstance(tool, str) else "this tool call"
        reason = (
            f"rehydrate: the hook's input could not be read whole (it is too large or malformed), so the guard "
            f"cannot tell what {call} changes. {where} guards these rejected approaches:\n{quoted}{more}\n"
            "Go ahead only if the call touches none of them."
        )
    name = event.get("hook_event_name")
    return Answer(stdout=json.dumps(_decision(harness, str(name), decision, reason)))


def _entry(harness: str, line: str) -> str:
    """A rejected approach quoted in a guard's answer: one clean line of at most 600 characters and, where the harness
    counts bytes, at most ENTRY_BYTES of them (five of them and the rest stay within its cap)."""
    text = views.clean(line, one_line=True)[:600]
    size = _budget(harness)[1]
    data = text.encode("utf-8", "surrogatepass")
    if size is None or len(data) <= ENTRY_BYTES:
        return text
    return data[: ENTRY_BYTES - 3].decode("utf-8", "ignore") + "…"


def _decision(harness: str, event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """The harness's way of saying deny, ask or warn. Codex and Gemini CLI have no `ask`: it becomes a warning."""
    warn = {"systemMessage": reason, "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": reason}}
    if harness == "gemini":
        return {"decision": "deny", "reason": reason} if decision == "deny" else {"systemMessage": reason}
    if decision == "warn" or (decision == "ask" and harness == "codex"):
        return warn
    return {
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def main(harness: str) -> int:
    try:
        fd = sys.stdin.fileno() if sys.stdin is not None else -1
        data = read_input(fd) if fd >= 0 else Input(b"")
    except (OSError, ValueError):  # no usable stdin (closed, or not a file): an empty input
        data = Input(b"")
    answer = run(harness, data.head, tail=data.tail, size=data.size, ended=data.ended)
    if answer.stdout:
        sys.stdout.write(answer.stdout if answer.stdout.endswith("\n") else answer.stdout + "\n")
    if answer.stderr:
        sys.stderr.write(answer.stderr)
    return answer.code
