"""What a transcript says happened since a time: the tail a recovery reads, never the whole file.

`read_since(path, since_ts, *, loads, max_bytes, harness=None, project=None, todos_back=TODOS_BACK, numbered=False)
-> Recent`, with the extractors in claude.py, codex.py and gemini.py:
- path: opened with `open_regular` (a FIFO, a device or a folder is refused with OSError; so is a missing file).
- Reads backwards from the end to the first *stamped* record at or before since_ts (stamps compared as
  YYYY-MM-DDTHH:MM:SS.mmmZ strings, normalised without datetime; unstamped records inside the window are kept);
  since_ts None reads back to max_bytes. Lines that cannot hold a used record are refused by a byte test before
  parsing (Claude's progress and file-history-snapshot lines).
- max_bytes: the most bytes read back (4 MiB in hook scope, 64 MiB in recover, 16 MiB for the PreCompact capture).
  When it stops before since_ts, `cut` is True and `read_from` says where it stopped.
- loads: the JSON parser, from the caller (safejson.loads on the hook path), so that neither json nor re is imported
  here at run time. Nothing here imports the rest of rehydrate.
- harness: "claude", "codex" or "gemini"; None: detected from the file's first records.
- project: the project's root; when given, the file's records must name it (Claude `cwd`, Codex
  `session_meta.payload.cwd`, Gemini `projectHash`), else `foreign` is True and nothing else is extracted.
- todos_back: for the task list only, reading goes on past since_ts for at most this many bytes, through the records
  that change the list (Claude Code's task tools create and update one task at a time) back to the newest one that
  holds it whole (a TodoWrite, a TaskList result, an update_plan); `Todos.before_checkpoint` then says so.
- numbered: every `line` is the file's own 1-based line: the lines before where reading started are counted too,
  when they are at most COUNT_MAX bytes (else `line_base` stays None and a caller shows no line number).
- Every string in a Recent is the transcript's text, untrusted: raw here, cleaned and bounded by the caller (the
  capture, the checks), fenced by the brief. Our own brief echoed back (`<system-reminder>`, `<hook_context>`) is
  never taken for a user message.
- Never raises for the file's content: bad lines are counted in `bad_lines`; only opening the file raises (OSError).
- What a reader does not know (a record type, a subtype, a tool name) is counted in `unknown`, with the harness's
  version in `version`: the next change of format shows up as a count, not as silently missing facts.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

# The task list's look-back past since_ts (the capture's and the audit's): only the blocks and lines that name a task
# tool are split and parsed, but every byte is read and searched (about 3 ms a MiB): a list made longer ago than this
# is known by its ids
TODOS_BACK = 8 << 20
# The PreCompact capture's bounds (harness/compaction/capture.py), named here so that the audit, which compares the
# facts with what the capture carries, reads the same bytes without importing the harness side.
CAPTURE_READ = 16 << 20  # the most read back from the transcript's end
COUNT_MAX = 32 << 20  # the most bytes before the read's start counted to give lines their own numbers (~30 ms)

# What a user's message is: typed as a prompt, a slash command or skill ("/name args"), typed while the agent worked
# (queued), or the words the user gave when rejecting a tool call.
PROMPT, COMMAND, QUEUED, REJECTED = "prompt", "command", "queued", "rejected"
KINDS = (PROMPT, COMMAND, QUEUED, REJECTED)


class Msg:
    """A user or assistant message: its stamp (None: unstamped), its 1-based line in the file, its text, and for a
    user's message its kind (KINDS)."""

    __slots__ = ("kind", "line", "text", "ts")

    def __init__(self, ts: str | None, line: int, text: str, kind: str = PROMPT) -> None:
        self.ts = ts
        self.line = line
        self.text = text
        self.kind = kind


class Todos:
    """The agent's task list as the harness held it last: the tool that wrote it (TodoWrite, "task tools" for
    Claude Code's TaskCreate/TaskUpdate/TaskList folded, update_plan, write_todos, or "prompt" for a user record's
    `todos` field), the line of its last change (None: before the lines read), whether that change came before
    since_ts, and its items as (text, status) pairs in order."""

    __slots__ = ("before_checkpoint", "items", "line", "tool")

    def __init__(self, tool: str, line: int | None, before_checkpoint: bool, items: list[tuple[str, str]]) -> None:
        self.tool = tool
        self.line = line
        self.before_checkpoint = before_checkpoint
        self.items = items


class Failed:
    """A command that failed: the tool (Bash, exec_command, shell, run_shell_command), the command, its exit code
    (None: not told), the lines of its output that say what failed (telling()), its line, and whether a later run of
    the same command succeeded."""

    __slots__ = ("command", "error", "exit", "later_ok", "line", "tool")

    def __init__(
        self, tool: str, command: str, exit: int | None, error: str, line: int, later_ok: bool = False
    ) -> None:
        self.tool = tool
        self.command = command
        self.exit = exit
        self.error = error
        self.line = line
        self.later_ok = later_ok


class Recent:
    """What read_since found (see the module's docstring). harness, path, size (bytes when read); read_from (the byte
    offset reading went back to), cut, foreign; bad_lines, lines (lines read); first_ts, last_ts (the window's first
    and last stamps); tool_calls, changing_calls (edits, shell and patch calls, unknown tools; not reads, searches or
    task list writes); user (user messages of every kind, oldest first); assistant (the last assistant text); todos;
    edited (paths of successful edits, relative to the project when inside it, in order of first edit); failed
    (failed commands, oldest first); compacted_at (stamps of compactions the file records in the window); line_base:
    the number of lines before read_from when known (0 when reading reached the file's start; with `numbered`, counted
    when cheap), every `line` then being the file's own; else None: lines are then counted from read_from (line 1 is
    the first line after it); unknown: what the reader met and does not know, by "type:NAME", "subtype:NAME" or
    "tool:NAME", with its count; version: the harness version the window's records name last."""

    def __init__(self, harness: str, path: str, size: int) -> None:
        self.harness = harness
        self.path = path
        self.size = size
        self.read_from = size
        self.cut = False
        self.foreign = False
        self.bad_lines = 0
        self.lines = 0
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        self.tool_calls = 0
        self.changing_calls = 0
        self.user: list[Msg] = []
        self.assistant: Msg | None = None
        self.todos: Todos | None = None
        self.edited: list[str] = []
        self.failed: list[Failed] = []
        self.compacted_at: list[str] = []
        self.line_base: int | None = 0  # lines are the file's when 0; else counted from read_from (line 1 after it)
        self.unknown: dict[str, int] = {}
        self.version: str | None = None

    def unknown_one(self, what: str) -> None:
        self.unknown[what] = self.unknown.get(what, 0) + 1


CHUNK = 1 << 16  # what one backward read takes
HEAD = 1 << 20  # the most read from the file's start to tell its harness and its project
_HEAD_RECORDS = 20


def stamp(value: object) -> str | None:
    """An ISO 8601 UTC stamp as YYYY-MM-DDTHH:MM:SS.mmmZ (fractions cut or padded to milliseconds, "+00:00" read as
    "Z"), so that stamps of different writers compare as strings; another offset or a non-string: as it is / None."""
    if not isinstance(value, str) or len(value) < 19 or value[10:11] != "T":
        return None
    text = value
    if text.endswith("Z"):
        text = text[:-1]
    elif text.endswith("+00:00"):
        text = text[:-6]
    else:
        return value
    whole, _, frac = text.partition(".")
    if len(whole) != 19 or (not frac.isdigit() and frac):
        return value
    return whole + "." + (frac + "000")[:3] + "Z"


def _backwards(f: Any, size: int, budget: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes without the newline) of each line, last first, reading at most `budget` bytes back from `size`.
    Each chunk is read once and a line joined once, when its start is found; a line whose start lies beyond the
    budget is not yielded (the caller sees the budget spent)."""
    end = size
    low = max(0, size - budget)
    pieces: list[bytes] = []  # the line being read, last piece first
    while end > low:
        step = min(CHUNK, end - low)
        end -= step
        f.seek(end)
        parts = f.read(step).split(b"\n")
        at = end + step
        for part in reversed(parts[1:]):
            pieces.append(part)
            line = part if len(pieces) == 1 else b"".join(reversed(pieces))
            at -= len(part)
            yield at, line
            at -= 1
            pieces = []
        pieces.append(parts[0])
    if end == 0 and pieces:
        yield 0, b"".join(reversed(pieces))


def _open(path: str) -> Any:
    from rehydrate.transcripts import open_regular

    return open_regular(path)


def _head(f: Any, loads: Callable[[str | bytes], Any]) -> list[dict[str, Any]]:
    """The first records of the file (at most HEAD bytes, _HEAD_RECORDS records): its harness and project."""
    f.seek(0)
    data = f.read(HEAD)
    found: list[dict[str, Any]] = []
    for raw in data.split(b"\n")[:-1] if b"\n" in data else [data]:
        if len(found) >= _HEAD_RECORDS:
            break
        try:
            rec = loads(raw) if raw.strip() else None
        except ValueError:
            continue
        if isinstance(rec, dict):
            found.append(rec)
    return found


def harness_of(path: str, loads: Callable[[str | bytes], Any]) -> str | None:
    """The harness that wrote the transcript at path, from its first records; None when none of the three (OSError
    when it cannot be opened, as read_since)."""
    with _open(path) as f:
        return detect(_head(f, loads))


def detect(head: list[dict[str, Any]]) -> str | None:
    """The harness that wrote records like these (the file's first ones); None when none of the three."""
    for rec in head:
        if ("projectHash" in rec and "sessionId" in rec) or "$set" in rec or "$rewindTo" in rec:
            return "gemini"
        if "payload" in rec and rec.get("type") in ("session_meta", "response_item", "event_msg", "turn_context"):
            return "codex"
        if "sessionId" in rec or rec.get("type") in ("user", "assistant", "summary", "file-history-snapshot"):
            return "claude"
        if rec.get("type") in ("user", "gemini") and "id" in rec:
            return "gemini"
    return None


def inside(path: str, roots: tuple[str, ...]) -> str:
    """path relative to the first of roots that holds it, else path as it is."""
    import posixpath

    for root in roots:
        if path == root:
            return "."
        if root and path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1 :]
    if path.startswith("/"):
        norm = posixpath.normpath(path)
        if norm != path:
            return inside(norm, roots)
    return path


def roots_of(project: str | None) -> tuple[str, ...]:
    """The spellings of a project's root that a transcript may use: as given (normalised) and its real path."""
    if not project:
        return ()
    import os.path

    norm = os.path.normpath(os.path.abspath(project))
    real = os.path.realpath(norm)
    return (norm,) if real == norm else (norm, real)


def read_since(
    path: str,
    since_ts: str | None,
    *,
    loads: Callable[[str | bytes], Any],
    max_bytes: int,
    harness: str | None = None,
    project: str | None = None,
    todos_back: int = TODOS_BACK,
    numbered: bool = False,
) -> Recent:
    """What the transcript at path says happened since since_ts (see the module's docstring)."""
    import os

    with _open(path) as f:
        size = os.fstat(f.fileno()).st_size
        head = _head(f, loads)
        name = harness or detect(head) or "claude"
        fmt = _format(name)
        recent = Recent(name, path, size)
        roots = roots_of(project)
        if roots and fmt.names_other(head, roots):
            recent.foreign = True
            return recent
        recent.version = fmt.version(head)
        window, before = _window(recent, f, stamp(since_ts), loads, max_bytes, fmt, todos_back, numbered)
    fmt.extract(recent, window, before, roots, loads, stamp(since_ts))
    if roots and recent.foreign:
        _empty(recent)
    return recent


def _empty(recent: Recent) -> None:
    """Nothing extracted from a file of another project."""
    recent.user, recent.assistant, recent.todos, recent.edited, recent.failed = [], None, None, [], []
    recent.tool_calls = recent.changing_calls = 0
    recent.compacted_at = []
    recent.unknown, recent.version = {}, None


def _format(name: str) -> Any:
    if name == "codex":
        from rehydrate.transcripts import codex

        return codex.TAIL
    if name == "gemini":
        from rehydrate.transcripts import gemini

        return gemini.TAIL
    from rehydrate.transcripts import claude

    return claude.TAIL


def _window(
    recent: Recent,
    f: Any,
    since: str | None,
    loads: Callable[[str | bytes], Any],
    max_bytes: int,
    fmt: Any,
    todos_back: int,
    numbered: bool,
) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int | None, dict[str, Any]]]]:
    """The records after since (oldest first, numbered from read_from or, when known, as the file's own lines), and,
    unless the window holds the whole task list, the task-list records before it (_todos_before)."""
    found: list[tuple[int, dict[str, Any]]] = []  # (lines from the end, record), newest first
    count = 0
    stopped = False
    lines = _backwards(f, recent.size, max_bytes)
    for offset, raw in lines:
        if offset == recent.size:  # the empty part after the last newline
            continue
        if not raw.strip() or fmt.refused(raw):
            count += 1
            recent.read_from = offset
            continue
        try:
            rec = loads(raw)
        except (ValueError, RecursionError):
            count += 1
            recent.bad_lines += 1
            recent.read_from = offset
            continue
        if not isinstance(rec, dict):
            count += 1
            recent.bad_lines += 1
            recent.read_from = offset
            continue
        ts = stamp(fmt.stamp(rec))
        if since is not None and ts is not None and ts <= since:
            stopped = True
            break
        count += 1
        recent.read_from = offset
        found.append((count, rec))
        if ts is not None:
            recent.first_ts = ts
            recent.last_ts = recent.last_ts or ts
    recent.lines = count
    recent.cut = not stopped and recent.read_from > 0
    before: list[tuple[int, dict[str, Any]]] = []  # (offset, record), oldest first
    if stopped and todos_back > 0 and not any(fmt.todos_whole(rec) for _, rec in found):
        before = _todos_before(f, recent, loads, fmt, todos_back)
    base: int | None = 0
    marks: dict[int, int] = {}
    if recent.read_from > 0:
        base = None
        if numbered and recent.read_from <= COUNT_MAX:
            counted = _count_lines(f, [o for o, _ in before] + [recent.read_from])
            base, marks = counted[recent.read_from], counted
    recent.line_base = base
    window = [((base or 0) + count - back + 1, rec) for back, rec in reversed(found)]
    return window, [(marks[o] + 1 if o in marks else None, rec) for o, rec in before]


def _count_lines(f: Any, offsets: list[int]) -> dict[int, int]:
    """The number of newlines before each offset, reading the file once from its start to the last one."""
    want = sorted(set(offsets))
    out: dict[int, int] = {}
    at = total = 0
    f.seek(0)
    for mark in want:
        while at < mark:
            block = f.read(min(1 << 20, mark - at))
            if not block:
                break
            total += block.count(b"\n")
            at += len(block)
        out[mark] = total
    return out


def _todos_before(
    f: Any, recent: Recent, loads: Callable[[str | bytes], Any], fmt: Any, todos_back: int
) -> list[tuple[int, dict[str, Any]]]:
    """The records before the window that hold or change the task list, oldest first with their byte offsets: read
    back at most todos_back bytes from read_from, to the newest one that holds the list whole (nothing older can
    change what it says); only lines whose bytes may be such a record are parsed."""
    found: list[tuple[int, dict[str, Any]]] = []
    for offset, raw in _marked(f, recent.read_from, todos_back, fmt.TODO_MARKS):
        if not fmt.may_hold_todos(raw):
            continue
        try:
            rec = loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and fmt.holds_todos(rec):
            found.append((offset, rec))
            if fmt.todos_whole(rec):
                break
    found.reverse()
    return found


MARKED_BLOCK = 64 << 10


def _marked(f: Any, end: int, budget: int, marks: tuple[bytes, ...]) -> Iterator[tuple[int, bytes]]:
    """(offset, line) of the lines before `end`, last first, within `budget` bytes back, in the blocks that hold one
    of `marks`: a block without any is skipped whole, never split into lines (a task list's records are a few lines
    in megabytes of others, and splitting is what costs). A line whose start lies beyond the budget is not given."""
    low = max(0, end - budget)
    pos, tail = end, b""  # tail: the end of the line that runs from before pos to its newline at or after pos
    while pos > low:
        start = max(low, pos - MARKED_BLOCK)
        f.seek(start)
        data = f.read(pos - start) + tail
        if start > 0:
            cut = data.find(b"\n")
            if cut < 0:  # one line longer than the block: read on back for its start
                tail, pos = data, start
                continue
            head, body, at = data[:cut], data[cut + 1 :], start + cut + 1
        else:
            head, body, at = b"", data, 0
        if any(m in body for m in marks):
            lines = body.split(b"\n")
            offsets = [at]
            for line in lines[:-1]:
                offsets.append(offsets[-1] + len(line) + 1)
            for offset, line in zip(reversed(offsets), reversed(lines), strict=True):
                if line.strip() and offset < end:
                    yield offset, line
        tail, pos = head, start


def named(path: str, roots: tuple[str, ...]) -> bool:
    """Whether path is one of roots or inside one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def first_line(text: object) -> str:
    """The first non-blank line of a text, stripped ("" for anything else)."""
    if isinstance(text, str):
        for line in text.split("\n"):
            if line.strip():
                return line.strip()
    return ""


_NOT_ERRORS = ("Chunk ID:", "Wall time:", "Original token count:", "Output:")
_EXIT_PREFIXES = ("Exit code ", "Process exited with code ", "Exit code: ")
# A line naming one of these (lowercased) says what went wrong; command echoes and the lines that only restate the
# exit status (TRAILERS) do not, and are shown only when nothing else does.
ERROR_WORDS: tuple[str, ...] = ("error", "fail", "fatal", "panic", "exception", "traceback", "conflict", "denied")
ERROR_WORDS += ("not found", "cannot", "can't", "unrecognized", "no such file", "refused", "invalid", "×", "✗", "✖")
ERROR_WORDS += ("✘",)
TRAILERS: tuple[str, ...] = ("exited with code", "exit code", "exit status", "task failed", "some errors were emitted")
TRAILERS += ("for more information", "a complete log of this run", "command failed with")
BARE = ("fail", "failed", "error", "errors", "failure", "failures")
ECHOES = ("$ ", "> ", "+ ")  # a shell's or a script runner's echo of the command it runs
MAX_PART = 150  # each of the two lines telling() joins
MAX_SCAN = 64 << 10  # the most of an output's end telling() reads (tools print errors last), beside its first 4 KiB


def exit_error(text: str) -> tuple[int | None, str]:
    """A failed command's exit code and the lines that say what failed (telling()): "Exit code N" (Claude Code's
    Bash) or "Process exited with code N" / "Exit code: N" (Codex) read off its first lines."""
    code: int | None = None
    for line in text.split("\n", 20)[:20]:
        words = line.strip()
        for prefix in _EXIT_PREFIXES:
            if words.startswith(prefix):
                number = words[len(prefix) :].strip()
                if number.lstrip("-").isdigit() and code is None:
                    code = int(number)
                break
    return code, "" if code == 0 else telling(text)  # a success has nothing to tell: no scan of its output


def telling(text: str) -> str:
    """What a failed command's output says went wrong, on one line: its first and its last line that name an error
    (ERROR_WORDS), joined by " … " when they differ (a merge's CONFLICT and "Automatic merge failed", a test's
    first FAIL and its summary), each cut to MAX_PART; leaving out the exit status header, command echoes ("$ biome
    check .") and banners that name no error ("bun test v1.3.13"). Lines that only restate the exit status
    (TRAILERS: `error: script "lint" exited with code 1`) count only when no other line names an error; with none,
    the output's last line that is not a header. str methods only: this runs on the hook path, where re is not
    loaded."""
    if len(text) > MAX_SCAN + 4096:
        text = text[:4096] + "\n" + text[-MAX_SCAN:]
    found: list[str] = []
    trailers: list[str] = []
    last = ""
    for line in text.split("\n"):
        words = " ".join(line.split())
        if not words or words.startswith(_NOT_ERRORS) or words.startswith(_EXIT_PREFIXES):
            continue
        if words.startswith(ECHOES) or (words[:1] == "[" and "] $ " in words[:60]):
            continue
        low = words.lower()
        if any(w in low for w in ERROR_WORDS):
            if low.strip("-=*#:. ") in BARE or any(t in low for t in TRAILERS):
                trailers.append(words)
            else:
                found.append(words)
        elif not low.startswith("hint:"):
            last = words
    if not found:
        return _part(trailers[-1]) if trailers else _part(last)
    first, end = _part(found[0]), _part(found[-1])
    return first if first == end else first + " … " + end


def _part(words: str) -> str:
    return words if len(words) <= MAX_PART else words[: MAX_PART - 1].rstrip() + "…"


def later_ok(failed: list[Failed], command: str) -> None:
    """A command that succeeded: its earlier failures get later_ok."""
    for one in failed:
        if one.command == command:
            one.later_ok = True


def add_edit(recent: Recent, path: str, roots: tuple[str, ...]) -> None:
    rel = inside(path, roots)
    if rel not in recent.edited:
        recent.edited.append(rel)
