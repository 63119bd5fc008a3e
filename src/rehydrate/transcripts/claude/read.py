"""A whole Claude Code session file, for the audit: its compactions, usage, user turns, tool calls and their
failures (a Session); and what the Stop hook counts from its end (tool_calls_since)."""

from __future__ import annotations

from rehydrate.transcripts.claude import FILE_KEYS, error_text
from rehydrate.transcripts.jsonl import json_parser, label, newer_than, obj, read_blocks, records
from rehydrate.transcripts.model import Compaction, Session, ToolCall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def starts_turn(rec: dict[str, Any]) -> bool:
    """A user's own message (not a tool result, not a compaction summary)."""
    if rec.get("type") != "user" or rec.get("isCompactSummary") or rec.get("isMeta"):
        return False
    content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
    if isinstance(content, list):
        return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return isinstance(content, str)


def context_size(usage: Any) -> int | None:
    """Input plus cache tokens of a usage: the context the model saw."""
    if not isinstance(usage, dict):
        return None
    total = None
    for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        part = usage.get(key)
        if isinstance(part, int):
            total = part + (total or 0)  # an int, also for a bool
    return total


def tool_uses(rec: dict[str, Any]) -> int:
    """The tool calls in one record: the tool_use blocks of an assistant message."""
    message = rec.get("message")
    content = message.get("content") if rec.get("type") == "assistant" and isinstance(message, dict) else None
    if not isinstance(content, list):
        return 0
    return sum(1 for block in content if isinstance(block, dict) and block.get("type") == "tool_use")


def tool_calls_since(path: str, since: str) -> int:
    """Tool calls in a transcript's assistant records stamped after `since`, read from the end (the Stop hook's
    count since the last checkpoint); 0 when the file cannot be read."""
    try:
        return sum(tool_uses(rec) for rec in newer_than(path, since))
    except OSError:
        return 0


_USED = ("assistant", "user", "system")  # the record types read() uses (a compaction is a system record)
# A "type" that may make a line one of _USED: spaced, not followed by a string, or followed by one of theirs
_MAY_BE_USED = rb'"type"(?!:"(?!assistant"|user"|system"))'
_may_be_used: Callable[[bytes], object] | None = None  # its search, compiled by the first audit
# The longest line audit tests before parsing it. The test scans a line at about half the cost of parsing it, so it
# pays where most lines are records audit skips: Claude Code's progress records are short (99% of them under 1 KB),
# the records audit uses long (two thirds of its assistant records, four fifths of its user records over 1 KB).
FILTERED = 1024


def _searcher() -> Callable[[bytes], object]:
    global _may_be_used
    if _may_be_used is None:
        import re  # here only: the hook path loads this module (tool_calls_since, the tail's FORMAT) without re

        _may_be_used = re.compile(_MAY_BE_USED).search
    return _may_be_used


def audited(raw: bytes) -> bool:
    """Whether a line may be a record read() uses, decided from its bytes without parsing it (audit's pre-filter).

    Inside a JSON string a quote is escaped, so every key and string value of a record appears as its own bytes
    between quotes, whatever the key order; only a \\u00 escape can spell "type" or one of _USED's names in other
    bytes. A line is refused (False) only when it is shaped like one object ("{" first, "}" last), holds no \\u00
    escape, and every "type" in it, at any depth, is followed at once by a colon and a string other than
    "assistant", "user" or "system": then no "type" key of it, the top one's included, names a record read() uses.
    Anything else is parsed: a "type" spaced or spelled otherwise, a line that is not one object, torn or too odd to
    judge (which still counts as a bad line). _audit() makes the same test inline."""
    may_be_used = _searcher()
    return not (
        raw[:1] == b"{" and raw[-1:] == b"}" and may_be_used(raw) is None and (b"\\" not in raw or b"\\u00" not in raw)
    )


def read(path: str, audit: bool = False, prefilter: bool = True) -> Session:
    """What a Claude Code session file says. audit: only what the audit uses (_audit()), no types counted;
    prefilter (with audit): the lines audited() refuses are not parsed."""
    if audit:
        return _audit(path, prefilter)
    session = Session(path, "claude")
    calls: dict[str, ToolCall] = {}
    seen_messages: set[str] = set()
    for number, rec in records(path, session):
        kind = label(rec.get("type"))
        subtype = rec.get("subtype")
        session.count(f"{kind}:{label(subtype)}" if subtype else kind)
        _record(session, rec, kind, number, calls, seen_messages)
    return session


def _audit(path: str, prefilter: bool) -> Session:
    """read() for audit: the records of _USED's types, in one loop without a generator (an audit reads gigabytes),
    read in blocks of 1 MiB. With prefilter, a line of at most FILTERED bytes that audited() refuses is skipped
    before it is parsed (tested inline: a function call per line costs what it saves); a line skipped is not judged,
    so bad_lines counts the lines that do not parse among those that may be records the audit uses."""
    session = Session(path, "claude")
    calls: dict[str, ToolCall] = {}
    seen_messages: set[str] = set()
    parse, may_be_used, record, used = json_parser(), _searcher(), _record, _USED
    short = FILTERED if prefilter else 0
    number = bad = 0
    for block in read_blocks(path):
        for raw in block:
            number += 1
            if not raw:
                bad += raw is None
                continue
            if (  # audited(raw) is False, inline
                len(raw) <= short
                and raw[0] == 123  # {
                and raw[-1] == 125  # }
                and may_be_used(raw) is None
                and (b"\\" not in raw or b"\\u00" not in raw)
            ):
                continue
            try:
                rec = parse(raw)
            except (ValueError, RecursionError):  # a torn last line, invalid UTF-8, not JSON, too deep
                bad += not raw.isspace()
                continue
            if type(rec) is not dict:
                bad += 1
            elif (kind := rec.get("type")) in used:
                record(session, rec, kind, number, calls, seen_messages)
    session.lines, session.bad_lines = number, bad
    return session


def _record(
    session: Session, rec: dict[str, Any], kind: Any, number: int, calls: dict[str, ToolCall], seen: set[str]
) -> None:
    """What one record adds to the session: a turn's usage and tool calls, a tool's failure, a compaction."""
    if kind == "assistant":
        _assistant(session, obj(rec.get("message")), number, _text(rec.get("timestamp")), calls, seen)
    elif kind == "user":
        _user(session, rec, calls)
    elif kind == "system" and rec.get("subtype") == "compact_boundary":
        meta = obj(rec.get("compactMetadata"))
        trigger = meta.get("trigger") if isinstance(meta.get("trigger"), str) else None
        before = meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else None
        session.compactions.append(Compaction(trigger, before, number, _text(rec.get("timestamp"))))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _assistant(
    session: Session, message: dict[str, Any], number: int, time: str | None, calls: dict[str, ToolCall], seen: set[str]
) -> None:
    """An assistant record: its usage (once per message: one record per content block) and its tool calls."""
    ident = message.get("id")
    if not isinstance(ident, str):
        session.usage(number, time, context_size(message.get("usage")))
    elif ident not in seen:
        seen.add(ident)
        session.usage(number, time, context_size(message.get("usage")))
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            name = label(block.get("name"))
            tool_input = obj(block.get("input"))
            files = [f for k in FILE_KEYS if isinstance(f := tool_input.get(k), str)] if tool_input else []
            block_id = block.get("id")
            ident = block_id if isinstance(block_id, str) else None
            call = ToolCall(ident, name, files, None, number, time, tool_input=tool_input)  # `same` made when asked
            session.tool_calls.append(call)
            if call.ident is not None:
                calls[call.ident] = call


def _user(session: Session, rec: dict[str, Any], calls: dict[str, ToolCall]) -> None:
    """A user record: a turn when starts_turn() says so; a failed tool result marks its call failed (one walk over
    the content for both)."""
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    results = False
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results = True
                result_of = calls.get(label(block.get("tool_use_id")))
                if result_of is not None and (block.get("is_error") is True or error_text(block.get("content"))):
                    result_of.failed = True
    elif not isinstance(content, str):
        return
    if not results and not rec.get("isCompactSummary") and not rec.get("isMeta"):
        session.user_turns += 1
