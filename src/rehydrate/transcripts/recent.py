"""What a transcript says happened since a time: the tail a recovery reads, never the whole file.

`read_since(path, since_ts, *, loads, max_bytes, harness=None, project=None, todos_back=TODOS_BACK, numbered=False)
-> Recent` (transcripts.model), each format's tail picked from transcripts.formats.FORMATS:
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

import os

from rehydrate.transcripts import formats
from rehydrate.transcripts.jsonl import open_regular
from rehydrate.transcripts.model import Recent, roots_of, stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from rehydrate.transcripts.model import Tail

# The task list's look-back past since_ts (the capture's and the audit's): only the blocks and lines that name a task
# tool are split and parsed, but every byte is read and searched (about 3 ms a MiB): a list made longer ago than this
# is known by its ids
TODOS_BACK = 8 << 20
# The PreCompact capture's bounds (harness/compaction/capture.py), named here so that the audit, which compares the
# facts with what the capture carries, reads the same bytes without importing the harness side.
CAPTURE_READ = 16 << 20  # the most read back from the transcript's end
COUNT_MAX = 32 << 20  # the most bytes before the read's start counted to give lines their own numbers (~30 ms)


CHUNK = 1 << 16  # what one backward read takes
HEAD = 1 << 20  # the most read from the file's start to tell its harness and its project
_HEAD_RECORDS = 20


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
    with open_regular(path) as f:
        return formats.detect(_head(f, loads))


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
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        head = _head(f, loads)
        name = harness or formats.detect(head) or formats.DEFAULT
        fmt = formats.tail(name)
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


def _window(
    recent: Recent,
    f: Any,
    since: str | None,
    loads: Callable[[str | bytes], Any],
    max_bytes: int,
    fmt: Tail,
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
    f: Any, recent: Recent, loads: Callable[[str | bytes], Any], fmt: Tail, todos_back: int
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
