"""The transcript formats, each named once: FORMATS maps a harness's name to the loader of its format
(transcripts.model.Format), and the readers (transcripts.recent.read_since, transcripts.reader) pick the one they read
by it.

A format is one module (codex, gemini) or one room (claude/), and provides a FORMAT: its tail since a time, and for
the formats the audit reads whole (Claude Code's, Codex's), the whole file. A format is imported when first picked:
the hook path reads one transcript, and loads only its format. A harness without a format of its own (a fork of one)
is read as DEFAULT's. Which harness wrote a file is told by its first records (detect).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.transcripts.model import Format


# Each loader imports its format when called: the hook path loads only the format of the file it reads.
def _claude() -> Format:
    from rehydrate.transcripts.claude.tail import FORMAT

    return FORMAT


def _codex() -> Format:
    from rehydrate.transcripts.codex import FORMAT

    return FORMAT


def _gemini() -> Format:
    from rehydrate.transcripts.gemini import FORMAT

    return FORMAT


FORMATS: dict[str, Callable[[], Format]] = {"claude": _claude, "codex": _codex, "gemini": _gemini}
DEFAULT = "claude"  # a file no record tells, or a harness with no format of its own


def pick(name: str | None) -> Format:
    """The format of that name; DEFAULT's for any other."""
    return (FORMATS.get(name or DEFAULT) or FORMATS[DEFAULT])()


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
