"""Claude Code session files: ~/.claude/projects/<project>/<session>.jsonl (and subagents' files); its home folder
and the tools that edit files, named here once (the harness's module takes them from here)."""

from __future__ import annotations

import os

from rehydrate.transcripts import Compaction, Session, ToolCall, label, newer_than, obj, records, same_input

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FILE_KEYS = ("file_path", "notebook_path", "path")
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")  # a tool input's file_path or notebook_path


def home() -> str:
    """Claude Code's user folder: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


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
_TIGHT = (b':"assistant"', b':"user"', b':"system"')  # their "type", as Claude Code spells it


def audited(raw: bytes) -> bool:
    """Whether a line may be a record read() uses, decided from its bytes without parsing it (audit's pre-filter).

    Inside a JSON string a quote is escaped, so every key and string value of a record appears as its own bytes
    between quotes, whatever the key order; only a \\u00 escape can spell one in other bytes. A line is refused
    (False) only when it is shaped like one object ("{" first, "}" last), holds no \\u00 escape, and every "type"
    key in it, at any depth, is followed at once by a colon and a string other than "assistant", "user" or "system".
    Anything else is parsed: a "type" spaced or spelled otherwise, a line that is not one object, torn or too odd to
    judge (which still counts as a bad line). Exact, but slower than parsing with orjson on Claude Code's sessions
    (its progress records are short; its big ones are needed), so audit leaves it off (bench/transcripts.py)."""
    i = raw.find(b'"type"')
    while i >= 0:
        i += 6
        if not raw.startswith(b':"', i) or raw.startswith(_TIGHT, i):
            return True
        i = raw.find(b'"type"', i)
    return b"\\u00" in raw or raw[:1] != b"{" or not raw.endswith(b"}")


def read(path: str, audit: bool = False, prefilter: bool = False) -> Session:
    """What a Claude Code session file says. audit: only the record types audit uses (_USED), no types counted;
    prefilter: the lines audited() refuses are not parsed."""
    session = Session(path, "claude")
    calls: dict[str, ToolCall] = {}
    seen_messages: set[str] = set()
    for number, rec in records(path, session, audited if prefilter else None, _USED if audit else None):
        kind = rec.get("type")
        if not audit:  # the audit reads only the types it uses, and counts none
            kind = label(kind)
            subtype = rec.get("subtype")
            session.count(f"{kind}:{label(subtype)}" if subtype else kind)
        if kind == "assistant":
            time = rec.get("timestamp")
            _assistant(session, obj(rec.get("message")), number, _text(time), calls, seen_messages)
        elif kind == "user":
            if starts_turn(rec):
                session.user_turns += 1
            _results(obj(rec.get("message")).get("content"), calls)
        elif kind == "system" and rec.get("subtype") == "compact_boundary":
            meta = obj(rec.get("compactMetadata"))
            trigger = meta.get("trigger") if isinstance(meta.get("trigger"), str) else None
            before = meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else None
            session.compactions.append(Compaction(trigger, before, number, _text(rec.get("timestamp"))))
    return session


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _assistant(
    session: Session, message: dict[str, Any], number: int, time: str | None, calls: dict[str, ToolCall], seen: set[str]
) -> None:
    """An assistant record: its usage (once per message: one record per content block) and its tool calls."""
    ident = message.get("id")
    if not isinstance(ident, str) or ident not in seen:
        if isinstance(ident, str):
            seen.add(ident)
        session.usage(number, time, context_size(message.get("usage")))
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            name = label(block.get("name"))
            tool_input = obj(block.get("input"))
            files = [f for k in FILE_KEYS if isinstance(f := tool_input.get(k), str)]
            block_id = block.get("id")
            same = same_input(name, tool_input)  # the key itself is made only when asked for (a repeated call's)
            call = ToolCall(block_id if isinstance(block_id, str) else None, name, files, None, number, time, same)
            session.tool_calls.append(call)
            if isinstance(call.ident, str):
                calls[call.ident] = call


def _results(content: Any, calls: dict[str, ToolCall]) -> None:
    """A user record's tool results: a failed one marks its call failed."""
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            result_of = calls.get(label(block.get("tool_use_id")))
            if result_of is not None and (block.get("is_error") is True or _error_text(block.get("content"))):
                result_of.failed = True


def _error_text(content: Any) -> bool:
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):
        text = "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return text.lstrip().startswith("<tool_use_error>")
