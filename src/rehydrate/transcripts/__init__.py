"""Harness transcripts: what a session did, where it compacted, and its last turns, read from the harness's own files.

One module per format (claude, codex). A reader streams a file line by line (memory grows with the number of
turns and tool calls, not with the file's bytes), counts and skips lines it cannot parse, and keeps record types it
does not know (counted by type). `tail` reads the last turns from the end of a file, without reading the rest.

A transcript is other people's input: files are opened without blocking and only when regular (a FIFO, a device or a
folder is refused with an OSError), and a record nested too deeply for the parser is a bad line, never a
RecursionError. Nothing here imports the rest of rehydrate.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, BinaryIO, Literal

_loads: Callable[[str | bytes], Any] | None = None


def json_parser() -> Callable[[str | bytes], Any]:
    """orjson's loads, which parses several times faster (optional: pip install 'rehydrate[audit]'), else json's;
    imported when a record is first parsed, so that the hook path can read a format's names (EDIT_TOOLS) without."""
    global _loads
    if _loads is None:
        try:
            from orjson import loads as fast
        except ImportError:  # pragma: no cover - depends on the environment
            from json import loads as fast  # type: ignore[assignment]
        _loads = fast
    return _loads


MAX_LINE = 64 << 20  # a longer line is skipped as unreadable, without being held in memory
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
TOO_DEEP = "<nested too deeply>"


def open_regular(path: str) -> BinaryIO:
    """A regular file open for reading. Never blocks: a FIFO, a device or a folder (also behind a symlink) is refused
    with an OSError whose strerror is "not a regular file"."""
    fd = os.open(path, _READ_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def loads(raw: str | bytes) -> Any:
    """One record, with the fast parser; ValueError for anything but JSON, also for JSON nested too deeply."""
    try:
        return json_parser()(raw)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_encode: Callable[[Any], str] | None = None


def canonical(value: Any) -> str:
    """value as canonical JSON (sorted keys): identical inputs give identical text; one too deep gives TOO_DEEP.
    The text of json.dumps(value, sort_keys=True), from one encoder made once (dumps makes one per call)."""
    global _encode
    if _encode is None:
        import json  # here only: the package is on the hook path (transcripts.recent), where json is not

        _encode = json.JSONEncoder(sort_keys=True).encode
    try:
        return _encode(value)
    except (RecursionError, ValueError):
        return TOO_DEEP


def label(value: Any) -> str:
    """A field's value as text: strings and scalars as themselves, anything else by its type (never its repr, which
    recurses into a value nested too deeply)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    return f"<{type(value).__name__}>"


def obj(value: Any) -> dict[str, Any]:
    """value if it is a JSON object, else an empty one: records from other tools have any shape."""
    return value if isinstance(value, dict) else {}


class Compaction:
    """One compaction: what triggered it, the context's size before and after it (tokens), and where it is."""

    def __init__(self, trigger: str | None, tokens_before: int | None, line: int, time: str | None) -> None:
        self.trigger = trigger
        self.tokens_before = tokens_before
        self.tokens_after: int | None = None  # the next usage after the compaction
        self.line = line
        self.time = time

    def as_dict(self) -> dict[str, Any]:
        return {
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "line": self.line,
            "time": self.time,
        }


class ToolCall:
    """One tool call: its name, the files it touched, whether it failed, and where it is.

    key: its name and input as canonical JSON (identical calls have the same key). same: equal for identical calls
    and only for them: the key itself, or a cheaper token from same_input (the key is made from it when asked); made
    from tool_input when first asked for (the audit asks only for calls that may repeat one: audit.symptoms)."""

    def __init__(
        self,
        ident: str | None,
        name: str,
        files: list[str],
        key: str | None,
        line: int,
        time: str | None,
        same: tuple[str, bytes] | str | None = None,
        tool_input: Any = None,
    ) -> None:
        self.ident = ident
        self.name = name
        self.files = files
        self._key = key
        self._same = same if key is None else key
        self._input = tool_input if self._same is None else None
        self.failed = False
        self.line = line
        self.time = time

    @property
    def same(self) -> tuple[str, bytes] | str | None:
        if self._same is None and self._input is not None:
            self._same, self._input = same_input(self.name, self._input), None
        return self._same

    @property
    def key(self) -> str:
        if self._key is None:  # made from `same`: the key itself, or (name, the input as orjson wrote it, sorted)
            same = self.same
            if isinstance(same, str):
                self._key = same
            else:
                assert isinstance(same, tuple)
                self._key = same[0] + " " + canonical(json_parser()(same[1]))
        return self._key


_sorted: Callable[[Any], bytes] | Literal[False] | None = None  # orjson's dumps with sorted keys, once loaded


def same_input(name: str, value: Any) -> tuple[str, bytes] | str:
    """A token equal for identical calls (name and input) and only for them, cheaper than the canonical key: the input
    as orjson writes it with sorted keys (as one-to-one as json.dumps's text: the same calls are equal); the key
    itself when orjson is missing or cannot write the input (nested too deeply: the key says so, as before)."""
    global _sorted
    if _sorted is None:
        try:
            from orjson import OPT_SORT_KEYS, dumps
        except ImportError:  # pragma: no cover - depends on the environment
            _sorted = False
        else:
            from functools import partial

            _sorted = partial(dumps, option=OPT_SORT_KEYS)
    if _sorted:
        try:
            return name, _sorted(value)
        except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError; deeper than orjson writes
            pass
    return name + " " + canonical(value)


class Turn:
    """One model turn with its context size (input plus cache tokens of its usage)."""

    def __init__(self, line: int, time: str | None, context: int | None) -> None:
        self.line = line
        self.time = time
        self.context = context


class Session:
    """What one transcript file says."""

    def __init__(self, path: str, harness: str) -> None:
        self.path = path
        self.harness = harness
        self.lines = 0
        self.bad_lines = 0
        self.user_turns = 0
        self.turns: list[Turn] = []
        self.tool_calls: list[ToolCall] = []
        self.compactions: list[Compaction] = []
        self.types: dict[str, int] = {}  # every record type seen, known or not, with its count

    def count(self, kind: str) -> None:
        self.types[kind] = self.types.get(kind, 0) + 1

    def usage(self, line: int, time: str | None, context: int | None) -> None:
        """A model turn's usage: a turn, and the size after any compaction still waiting for one."""
        self.turns.append(Turn(line, time, context))
        if context is not None:
            for c in self.compactions:
                if c.tokens_after is None and c.line < line:
                    c.tokens_after = context


BLOCK = 64 << 10  # what a block read takes: 64 KiB stays in the CPU's caches while split copies it (1 MiB: +40%)


def read_blocks(path: str, size: int = BLOCK) -> Iterator[list[bytes | None]]:
    """The lines of a file without their newlines, a list for each block read; None for a line longer than MAX_LINE
    (skipped, never held: a block is at most MAX_LINE bytes, and the part of a line carried over is dropped once it
    passes MAX_LINE). A line longer than a block is gathered in a list and joined once (never copied block by
    block)."""
    size = min(size, MAX_LINE)
    with open_regular(path) as f:
        carry: list[bytes] = []  # the start of a line whose newline is not read yet, in pieces
        carried = 0  # their length
        skipping = False  # the line being read is longer than MAX_LINE
        while True:
            block = f.read(size)
            if not block:
                break
            parts: list[bytes | None] = block.split(b"\n")  # type: ignore[assignment]
            rest: bytes = parts.pop()  # type: ignore[assignment]
            if parts:
                if skipping:
                    parts[0] = None
                elif carry:
                    first: bytes = parts[0]  # type: ignore[assignment]
                    parts[0] = b"".join((*carry, first)) if carried + len(first) <= MAX_LINE else None
                carry, carried, skipping = [rest] if rest else [], len(rest), False
                yield parts
            elif not skipping:
                carry.append(rest)
                carried += len(rest)
            if carried > MAX_LINE:
                carry, carried, skipping = [], 0, True
        if skipping or carry:
            yield [None if skipping else b"".join(carry)]


def lines(path: str, block: int = BLOCK) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes without the newline) of each line, read `block` bytes at a time; None for a line longer
    than MAX_LINE (skipped, never held)."""
    number = 0
    for part in read_blocks(path, block):
        for raw in part:
            number += 1
            yield number, raw


def records(
    path: str, session: Session, wanted: Callable[[bytes], bool] | None = None, kinds: tuple[str, ...] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object of a JSONL file with its line number; bad lines are counted on the session and skipped.

    wanted, if given, sees each line's bytes first: a line it refuses is not parsed (nor counted as a bad line). It
    must refuse only lines that cannot be a record the caller uses (claude.audited). kinds, if given: only the
    records whose "type" is one of these are yielded."""
    parse = json_parser()
    number = 0
    for block in read_blocks(path):
        for raw in block:
            number += 1
            if raw is None:
                session.bad_lines += 1
                continue
            if wanted is not None and not wanted(raw):
                continue
            if raw[:1] != b"{" and not raw.strip():
                continue
            try:
                rec = parse(raw)
            except (ValueError, RecursionError):  # a torn last line, invalid UTF-8, not JSON, nested too deeply
                session.bad_lines += 1
                continue
            if not isinstance(rec, dict):
                session.bad_lines += 1
            elif kinds is None or rec.get("type") in kinds:
                session.lines = number
                yield number, rec
    session.lines = number


def detect(path: str) -> str | None:
    """Which harness wrote a transcript, from its first readable records; None if neither."""
    try:
        for n, (_, raw) in enumerate(lines(path, 1 << 16)):  # its first lines only
            if n > 50:
                break
            try:
                rec = loads(raw) if raw else None
            except ValueError:
                continue
            if not isinstance(rec, dict):
                continue
            if "payload" in rec and rec.get("type") in ("session_meta", "response_item", "event_msg", "turn_context"):
                return "codex"
            if "sessionId" in rec or rec.get("type") in ("user", "assistant", "summary", "file-history-snapshot"):
                return "claude"
    except OSError:
        return None
    return None


def read(path: str, harness: str | None = None, audit: bool = False, prefilter: bool = True) -> Session:
    """Read one transcript. harness: "claude" or "codex" (found from the file when None). audit: only what `rehydrate
    audit` reports (compactions, usage, turns, tool calls and their failures) is read, the rest of a Claude Code
    session left at its type, and types are not counted; prefilter (with audit): its lines whose bytes show they
    cannot hold any of it are not even parsed (claude.audited; bad_lines then counts only the lines parsed)."""
    from rehydrate.transcripts import claude, codex

    harness = harness or detect(path) or "claude"
    return codex.read(path) if harness == "codex" else claude.read(path, audit, prefilter)


def tail(path: str, turns: int, harness: str | None = None) -> list[dict[str, Any]]:
    """The records of the last `turns` turns, oldest first, read backwards from the end of the file.

    A turn starts at a user's message. The cost depends on the size of those turns, not on the file's.
    """
    from rehydrate.transcripts import claude, codex

    starts_turn = codex.starts_turn if (harness or detect(path)) == "codex" else claude.starts_turn
    found: list[dict[str, Any]] = []
    seen = 0
    for raw in lines_backwards(path):
        try:
            rec = loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        found.append(rec)
        if starts_turn(rec):
            seen += 1
            if seen >= turns:
                break
    found.reverse()
    return found


def newer_than(path: str, since: str) -> Iterator[dict[str, Any]]:
    """The records stamped after `since` (ISO 8601, UTC), newest first, read backwards until an older one: the cost
    depends on what came after `since`, not on the file's size. Unparsable or unstamped lines are skipped."""
    for raw in lines_backwards(path):
        try:
            rec = loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("timestamp"), str):
            continue
        if rec["timestamp"] <= since:
            return
        yield rec


def lines_backwards(path: str, chunk: int = 1 << 16) -> Iterator[bytes]:
    """The lines of a file, last first, read in chunks from its end.

    Linear in the bytes read: each chunk is read and split once, and a line is joined once, when its start is found
    (never re-scanned as it grows). A line longer than MAX_LINE is skipped whole: never held, never yielded in part.
    """
    with open_regular(path) as f:
        end = f.seek(0, os.SEEK_END)
        pieces: list[bytes] = []  # the line being read, last piece first
        held = 0  # bytes in pieces
        skipping = False  # the line being read is longer than MAX_LINE
        while end > 0:
            step = min(chunk, end)
            end -= step
            f.seek(end)
            parts = f.read(step).split(b"\n")
            for part in reversed(parts[1:]):  # each one ends at a newline: its line is complete
                if not skipping and held + len(part) <= MAX_LINE:
                    pieces.append(part)
                    line = part if len(pieces) == 1 else b"".join(reversed(pieces))
                    if line.strip():
                        yield line
                pieces, held, skipping = [], 0, False
            if not skipping:
                pieces.append(parts[0])
                held += len(parts[0])
                if held > MAX_LINE:  # a line too long to be a record: drop what is held, skip to its start
                    pieces, held, skipping = [], 0, True
        if not skipping and pieces:
            line = b"".join(reversed(pieces))
            if line.strip():
                yield line
