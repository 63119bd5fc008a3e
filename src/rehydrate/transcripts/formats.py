"""The transcript formats, each named once: FORMATS maps a harness's name to its Format, and the readers pick the
one they read by it (transcripts.recent.read_since its tail, transcripts.reader its whole file).

A format is one module (codex, gemini) or one room (claude/). Its Format loads each of its sides when first asked:
its tail since a time (transcripts.model.Tail: the module's TAIL) and, for the formats the audit reads whole (Claude
Code's, Codex's), its whole file (transcripts.model.Whole: a module with read and starts_turn). The hook path reads
one transcript's tail, and so loads only that format's tail. A harness without a format of its own (a fork of one)
is read as DEFAULT's. Which harness wrote a file is told by its first records (detect).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.transcripts.model import Tail, Whole


class Format:
    """One format: the loaders of its tail and of its whole-file reader (None: the audit reads none)."""

    __slots__ = ("tail", "whole")

    def __init__(self, tail: Callable[[], Tail], whole: Callable[[], Whole] | None) -> None:
        self.tail = tail
        self.whole = whole


# Each loader imports its side when called, so that the hook path loads only the tail of the file it reads.
def _claude_tail() -> Tail:
    from rehydrate.transcripts.claude.tail import TAIL

    return TAIL


def _claude_whole() -> Whole:
    from rehydrate.transcripts.claude import read

    return read


def _codex_tail() -> Tail:
    from rehydrate.transcripts.codex import TAIL

    return TAIL


def _codex_whole() -> Whole:
    from rehydrate.transcripts import codex

    return codex


def _gemini_tail() -> Tail:
    from rehydrate.transcripts.gemini import TAIL

    return TAIL


FORMATS = {
    "claude": Format(_claude_tail, _claude_whole),
    "codex": Format(_codex_tail, _codex_whole),
    "gemini": Format(_gemini_tail, None),
}
DEFAULT = "claude"  # a file no record tells, or a harness with no format of its own


def tail(name: str | None) -> Tail:
    """The tail of the format of that name; DEFAULT's for any other."""
    return (FORMATS.get(name or DEFAULT) or FORMATS[DEFAULT]).tail()


def whole(name: str | None) -> Whole:
    """The whole-file reader of the format of that name; DEFAULT's for any other, or one the audit does not read."""
    fmt = FORMATS.get(name or DEFAULT)
    load = fmt.whole if fmt is not None and fmt.whole is not None else FORMATS[DEFAULT].whole
    assert load is not None
    return load()


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
