"""What a transcript says happened since a time: the tail a recovery reads, never the whole file.

Contract of `read_since(path, since_ts, *, loads, max_bytes, harness=None, project=None, todos_back=TODOS_BACK)
-> Recent` (WP-B builds it, with the extractors in claude.py, codex.py and gemini.py; until then it raises
NotImplementedError and nothing calls it):
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
- todos_back: for the task list only, reading goes on past since_ts for at most this many bytes
  (`Todos.before_checkpoint` then True).
- Every string in a Recent is the transcript's text, untrusted: raw here, cleaned and bounded by the caller (the
  capture, the checks), fenced by the brief. Our own brief echoed back (`<system-reminder>`, `<hook_context>`) is
  never taken for a user message.
- Never raises for the file's content: bad lines are counted in `bad_lines`; only opening the file raises (OSError).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

TODOS_BACK = 1 << 20


class Msg:
    """A user or assistant message: its stamp (None: unstamped), its 1-based line in the file, its text."""

    __slots__ = ("line", "text", "ts")

    def __init__(self, ts: str | None, line: int, text: str) -> None:
        self.ts = ts
        self.line = line
        self.text = text


class Todos:
    """The agent's task list as the harness held it last: the tool that wrote it (TodoWrite, TaskCreate/TaskUpdate
    folded, update_plan, write_todos, or "prompt" for a user record's `todos` field), its line, whether it was
    written before since_ts, and its items as (text, status) pairs in order."""

    __slots__ = ("before_checkpoint", "items", "line", "tool")

    def __init__(self, tool: str, line: int, before_checkpoint: bool, items: list[tuple[str, str]]) -> None:
        self.tool = tool
        self.line = line
        self.before_checkpoint = before_checkpoint
        self.items = items


class Failed:
    """A command that failed: the tool (Bash, exec_command, shell, run_shell_command), the command, its exit code
    (None: not told), the first line of its error, its line, and whether a later run of the same command succeeded."""

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
    todo writes); user (user messages, oldest first); assistant (the last assistant text); todos; edited (paths of
    successful edits, relative to the project when inside it, in order of first edit); failed (failed commands,
    oldest first); compacted_at (stamps of compactions the file records in the window); line_base: 0 when reading
    reached the file's start (every `line` is then the file's own), else None: lines are then counted from
    read_from (line 1 is the first line after it), since counting the lines before it would read the whole file."""

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
        window, before = _window(recent, f, stamp(since_ts), loads, max_bytes, fmt, todos_back)
    fmt.extract(recent, window, before, roots, loads, stamp(since_ts))
    if roots and recent.foreign:
        _empty(recent)
    return recent


def _empty(recent: Recent) -> None:
    """Nothing extracted from a file of another project."""
    recent.user, recent.assistant, recent.todos, recent.edited, recent.failed = [], None, None, [], []
    recent.tool_calls = recent.changing_calls = 0
    recent.compacted_at = []


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
) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, dict[str, Any]]]]:
    """The records after since (oldest first, numbered from read_from or from the file's start), and, when the window
    holds no task list, the newest task-list records before it (within todos_back bytes)."""
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
    recent.line_base = 0 if recent.read_from == 0 else None
    window = [(count - back + 1, rec) for back, rec in reversed(found)]
    before: list[tuple[int, dict[str, Any]]] = []
    if stopped and todos_back > 0 and not any(fmt.holds_todos_json(rec) for _, rec in window):
        before = _todos_before(f, recent, loads, fmt, todos_back)
    return window, before


def _todos_before(
    f: Any, recent: Recent, loads: Callable[[str | bytes], Any], fmt: Any, todos_back: int
) -> list[tuple[int, dict[str, Any]]]:
    """The newest record before the window that holds a task list (line 0: before the window), read back at most
    todos_back bytes from read_from; only lines whose bytes name a task-list tool are parsed."""
    for _offset, raw in _backwards(f, recent.read_from, todos_back):
        if not fmt.may_hold_todos(raw):
            continue
        try:
            rec = loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and fmt.holds_todos_json(rec):
            return [(0, rec)]
    return []


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


def exit_error(text: str) -> tuple[int | None, str]:
    """A failed command's exit code and first error line from its output: "Exit code N" (Claude Code's Bash) or
    "Process exited with code N" (Codex) read off its first lines, the error the first other non-blank line."""
    code: int | None = None
    error = ""
    for line in text.split("\n")[:20]:
        words = line.strip()
        for prefix in ("Exit code ", "Process exited with code ", "Exit code: "):
            if words.startswith(prefix) and code is None:
                number = words[len(prefix) :].strip()
                if number.lstrip("-").isdigit():
                    code = int(number)
                    words = ""
                break
        if words and not error and not words.startswith(_NOT_ERRORS):
            error = words
    return code, error


def later_ok(failed: list[Failed], command: str) -> None:
    """A command that succeeded: its earlier failures get later_ok."""
    for one in failed:
        if one.command == command:
            one.later_ok = True


def add_edit(recent: Recent, path: str, roots: tuple[str, ...]) -> None:
    rel = inside(path, roots)
    if rel not in recent.edited:
        recent.edited.append(rel)
