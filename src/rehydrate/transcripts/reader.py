"""A whole transcript, read by the formats the audit reads (Claude Code's, Codex's): the Session a file holds, its
last turns read back from its end, and which of the two wrote it.

A reader streams a file line by line (memory grows with the number of turns and tool calls, not with the file's
bytes), counts and skips lines it cannot parse, and keeps record types it does not know (counted by type). `tail`
reads the last turns from the end of a file, without reading the rest.
"""

from __future__ import annotations

from rehydrate.transcripts.formats import whole
from rehydrate.transcripts.jsonl import lines, lines_backwards, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.transcripts.model import Session


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
    cannot hold any of it are not even parsed (claude.read.audited; bad_lines then counts only the lines parsed)."""
    return whole(harness or detect(path)).read(path, audit, prefilter)


def tail(path: str, turns: int, harness: str | None = None) -> list[dict[str, Any]]:
    """The records of the last `turns` turns, oldest first, read backwards from the end of the file.

    A turn starts at a user's message. The cost depends on the size of those turns, not on the file's.
    """
    starts_turn = whole(harness or detect(path)).starts_turn
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
