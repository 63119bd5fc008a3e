"""Harness transcripts: what a session did, where it compacted, and its last turns, read from the harness's own files.

One module per format (claude, codex). A reader streams a file line by line (memory grows with the number of
turns and tool calls, not with the file's bytes), counts and skips lines it cannot parse, and keeps record types it
does not know (counted by type). `tail` reads the last turns from the end of a file, without reading the rest.
"""

from __future__ import annotations

import json
import os

try:  # orjson parses several times faster; it is optional (pip install 'rehydrate[audit]'), json is the fallback
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - depends on the environment
    from json import loads as _loads  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

MAX_LINE = 64 << 20  # a longer line is skipped as unreadable, without being held in memory


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
    """One tool call: its name, the files it touched, whether it failed, and where it is."""

    def __init__(self, ident: str | None, name: str, files: list[str], key: str, line: int, time: str | None) -> None:
        self.ident = ident
        self.name = name
        self.files = files
        self.key = key  # name and input, canonical: identical calls have the same key
        self.failed = False
        self.line = line
        self.time = time


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


def lines(path: str) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) of each line; None for a line longer than MAX_LINE (skipped, never held)."""
    with open(path, "rb") as f:
        number = 0
        while True:
            raw = f.readline(MAX_LINE + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                while True:
                    more = f.readline(1 << 20)
                    if not more or more.endswith(b"\n"):
                        break
                yield number, None
                continue
            yield number, raw


def records(path: str, session: Session) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object of a JSONL file with its line number; bad lines are counted on the session and skipped."""
    for number, raw in lines(path):
        session.lines = number
        if raw is None or not raw.strip():
            session.bad_lines += raw is None
            continue
        try:
            rec = _loads(raw)
        except ValueError:  # a torn last line, invalid UTF-8, anything but JSON
            session.bad_lines += 1
            continue
        if isinstance(rec, dict):
            yield number, rec
        else:
            session.bad_lines += 1


def detect(path: str) -> str | None:
    """Which harness wrote a transcript, from its first readable records; None if neither."""
    try:
        for n, (_, raw) in enumerate(lines(path)):
            if n > 50:
                break
            try:
                rec = json.loads(raw) if raw else None
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


def read(path: str, harness: str | None = None) -> Session:
    """Read one transcript. harness: "claude" or "codex" (found from the file when None)."""
    from rehydrate.transcripts import claude, codex

    harness = harness or detect(path) or "claude"
    return codex.read(path) if harness == "codex" else claude.read(path)


def tail(path: str, turns: int, harness: str | None = None) -> list[dict[str, Any]]:
    """The records of the last `turns` turns, oldest first, read backwards from the end of the file.

    A turn starts at a user's message. The cost depends on the size of those turns, not on the file's.
    """
    from rehydrate.transcripts import claude, codex

    starts_turn = codex.starts_turn if (harness or detect(path)) == "codex" else claude.starts_turn
    found: list[dict[str, Any]] = []
    seen = 0
    for raw in _backwards(path):
        try:
            rec = json.loads(raw)
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
    for raw in _backwards(path):
        try:
            rec = _loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("timestamp"), str):
            continue
        if rec["timestamp"] <= since:
            return
        yield rec


def _backwards(path: str, chunk: int = 1 << 16) -> Iterator[bytes]:
    """The lines of a file, last first, read in chunks from its end."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        rest = b""
        while end > 0:
            step = min(chunk, end)
            end -= step
            f.seek(end)
            block = f.read(step) + rest
            parts = block.split(b"\n")
            rest = parts[0]
            for part in reversed(parts[1:]):
                if part.strip():
                    yield part
            if len(rest) > MAX_LINE:  # a line too long to be a record: drop it
                rest = b""
        if rest.strip():
            yield rest
