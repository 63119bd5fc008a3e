"""A transcript around a compaction's boundary, as the loss report reads it: where each boundary's line starts, the
file's bytes before it copied (what the capture may read back), the summary the harness wrote right after it, the
session's working folder, and the last assistant texts before it."""

from __future__ import annotations

import os

from rehydrate.transcripts import jsonl
from rehydrate.transcripts.claude import content_text
from rehydrate.transcripts.jsonl import label, loads, obj, open_regular
from rehydrate.transcripts.recent import CAPTURE_READ, TODOS_BACK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

COPIED = CAPTURE_READ + TODOS_BACK  # the most of a prefix copied: all that the capture may read back
SUMMARY_LINES = 20  # Claude Code writes the summary right after the boundary; a hook's records may come between
BLOCK = 1 << 20
_NOT_KEPT_TEXT = ("<environment_context>", "# AGENTS.md")  # Codex's instructions, sent again after a compaction


def session_cwd(path: str) -> str | None:
    """Where a Codex session worked: its session_meta's cwd (the rollout's first line)."""
    with open_regular(path) as f:
        for raw in _lines_from(f, 0):
            rec = _parse(raw)
            if rec is not None and rec.get("type") == "session_meta":
                cwd = obj(rec.get("payload")).get("cwd")
                return cwd if isinstance(cwd, str) else None
            return None
    return None


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        rec = loads(raw) if raw.strip() else None
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


def offsets(path: str, lines: list[int]) -> dict[int, int]:
    """The byte offset where each of these 1-based lines starts (after the file's (n-1)-th newline), counting
    newlines in one read of the file; a line past its end is left out."""
    want = sorted({n for n in lines if n >= 1})
    out: dict[int, int] = {}
    i = newlines = at = 0  # newlines: those before `at`, the offset of the block read next
    with open_regular(path) as f:
        while i < len(want):
            if want[i] - 1 == newlines:
                out[want[i]] = at
                i += 1
                continue
            block = f.read(BLOCK)
            if not block:
                break
            count = block.count(b"\n")
            cut, seen = -1, newlines
            while i < len(want) and want[i] - 1 <= newlines + count:
                for _ in range(want[i] - 1 - seen):
                    cut = block.index(b"\n", cut + 1)
                seen = want[i] - 1
                out[want[i]] = at + cut + 1
                i += 1
            newlines += count
            at += len(block)
    return out


def copy_prefix(path: str, end: int, to: str) -> int:
    """The file's bytes before `end` (at most COPIED of them, from a line's start) written to `to`; where they
    start."""
    start = max(0, end - COPIED)
    with open_regular(path) as src, open(to, "wb") as dst:
        if start > 0:
            src.seek(start - 1)
            while True:  # on to the start of the next line
                chunk = src.read(BLOCK)
                at = chunk.find(b"\n")
                if not chunk or at >= 0:
                    start += at if at >= 0 else len(chunk)
                    break
                start += len(chunk)
            start = min(start, end)
        src.seek(start)
        left = end - start
        while left > 0:
            chunk = src.read(min(BLOCK, left))
            if not chunk:
                break
            dst.write(chunk)
            left -= len(chunk)
    return start


def remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _lines_from(f: BinaryIO, offset: int) -> Iterator[bytes]:
    """The file's lines from offset on, without their newlines; a line longer than jsonl.MAX_LINE is
    skipped."""
    f.seek(offset)
    pieces: list[bytes] = []
    held = 0
    while True:
        block = f.read(BLOCK)
        if not block:
            break
        parts = block.split(b"\n")
        for part in parts[:-1]:
            line = b"".join((*pieces, part)) if pieces else part
            pieces, held = [], 0
            if len(line) <= jsonl.MAX_LINE:
                yield line
        pieces.append(parts[-1])
        held += len(parts[-1])
        if held > jsonl.MAX_LINE:
            pieces, held = [], 0
    if pieces and held:
        yield b"".join(pieces)


def records_from(path: str, offset: int, most: int) -> list[dict[str, Any]]:
    """The records of the `most` lines from offset on (the boundary, and what follows it)."""
    out = []
    with open_regular(path) as f:
        for n, raw in enumerate(_lines_from(f, offset)):
            if n >= most:
                break
            rec = _parse(raw)
            if rec is not None:
                out.append(rec)
    return out


def summary(records: list[dict[str, Any]], harness: str) -> str | None:
    """The summary the harness wrote at this boundary (records[0]), or None when the transcript holds none."""
    if not records:
        return None
    if harness == "codex":
        payload = obj(records[0].get("payload"))
        if records[0].get("type") != "compacted":
            return None
        parts = [payload["message"]] if isinstance(payload.get("message"), str) else []
        history = payload.get("replacement_history")
        for value in history if isinstance(history, list) else []:
            item = obj(value)
            if item.get("type") == "message" and item.get("role") in ("user", "assistant"):
                text = content_text(item.get("content"))
                if not text.lstrip().startswith(_NOT_KEPT_TEXT):
                    parts.append(text)
        return "\n".join(parts)
    for rec in records[1:]:
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            break
        if rec.get("type") == "user" and rec.get("isCompactSummary") is True:
            return content_text(obj(rec.get("message")).get("content"))
    return None


def assistant_texts(path: str, start: int, harness: str, most: int) -> list[str]:
    """The last `most` assistant texts after byte `start` (a line's start) of the file, oldest first, read
    back from its end: Claude Code's assistant records' text blocks (one text per record), Codex's agent_message
    events and AgentMessage items; a text equal to the one after it is one (Codex may write both)."""
    found: list[str] = []
    with open_regular(path) as f:
        end = f.seek(0, os.SEEK_END)
        carry = b""
        while end > start and len(found) < most:
            step = min(BLOCK, end - start)
            end -= step
            f.seek(end)
            parts = (f.read(step) + carry).split(b"\n")
            carry = parts.pop(0) if end > start else b""
            for raw in reversed(parts):
                text = _assistant_text(raw, harness)
                if text and (not found or found[-1] != text):
                    found.append(text)
                    if len(found) >= most:
                        break
    return found[::-1]


def _assistant_text(raw: bytes, harness: str) -> str | None:
    if harness == "codex":
        if b"agent_message" not in raw and b"AgentMessage" not in raw:
            return None
        rec = _parse(raw)
        payload = obj(rec.get("payload")) if rec is not None and rec.get("type") == "event_msg" else {}
        if payload.get("type") == "agent_message" and isinstance(payload.get("message"), str):
            return payload["message"].strip() or None
        item = obj(payload.get("item")) if payload.get("type") == "item_completed" else {}
        return content_text(item.get("content")).strip() or None if item.get("type") == "AgentMessage" else None
    if b'"assistant"' not in raw or b'"text"' not in raw:
        return None
    rec = _parse(raw)
    if rec is None or rec.get("type") != "assistant":
        return None
    content = obj(rec.get("message")).get("content")
    blocks = content if isinstance(content, list) else []
    texts = [label(b.get("text")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return "\n\n".join(t for t in texts if t.strip()) or None
