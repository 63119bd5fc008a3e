"""Claude Code session files: ~/.claude/projects/<project>/<session>.jsonl (and subagents' files); its home folder
and the tools that edit files, named here once (the harness's module takes them from here)."""

from __future__ import annotations

import os

from rehydrate.transcripts import Compaction, Session, ToolCall, canonical, label, newer_than, obj, records

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
    parts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    numbers = [p for p in parts if isinstance(p, int)]
    return sum(numbers) if numbers else None


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


def read(path: str) -> Session:
    session = Session(path, "claude")
    calls: dict[str, ToolCall] = {}
    seen_messages: set[str] = set()
    for number, rec in records(path, session):
        kind = label(rec.get("type"))
        subtype = rec.get("subtype")
        session.count(f"{kind}:{label(subtype)}" if subtype else kind)
        time = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if kind == "system" and subtype == "compact_boundary":
            meta = obj(rec.get("compactMetadata"))
            trigger = meta.get("trigger") if isinstance(meta.get("trigger"), str) else None
            before = meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else None
            session.compactions.append(Compaction(trigger, before, number, time))
        elif kind == "assistant":
            _assistant(session, obj(rec.get("message")), number, time, calls, seen_messages)
        elif kind == "user":
            if starts_turn(rec):
                session.user_turns += 1
            _results(obj(rec.get("message")).get("content"), calls)
    return session


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
            files = [str(tool_input[k]) for k in FILE_KEYS if isinstance(tool_input.get(k), str)]
            key = name + " " + canonical(tool_input)
            block_id = block.get("id")
            call = ToolCall(block_id if isinstance(block_id, str) else None, name, files, key, number, time)
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
