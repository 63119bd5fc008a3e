"""Whether a session reached its end, and whether it named a file: what `rehydrate accept` asks of a reviewer's
transcript before it takes the reviewer's approval file.

A session has ended when its last turn is a finished assistant turn: the last message is the model's, it holds
no tool call, and no tool call of the session waits for its result. Per format:
- Claude Code (JSONL): `assistant` records (one per content block; a `tool_use` block opens a call) and `user`
  records (a `tool_result` block closes one; text is a new prompt, which the model has not answered yet). Side
  chains (sub-agents) and meta records are left out.
- Codex CLI (JSONL rollout): `response_item` payloads: `message` (role user or assistant), `function_call`,
  `custom_tool_call` and `local_shell_call` open a call (by call_id), `*_output` closes it.
- Gemini CLI (JSONL chat file): messages by id (a message written again replaces the first, `$rewindTo` drops it
  and the later ones); the last user or gemini message must be gemini's, with text and no tool calls.
The file is named when a string of an assistant-side record (the model's text or a tool call's input, a JSON text
inside it read too) holds the file's path relative to the project, its absolute path or its name, whole (`whole`):
"UNAPPROVED" does not name APPROVED, nor "BROKEN" OK. The transcript is untrusted input: read without blocking,
each line parsed on its own (a line that does not parse is counted and skipped).
"""

from __future__ import annotations

import os

from rehydrate.transcripts.formats import detect
from rehydrate.transcripts.jsonl import lines, loads, open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class Ended:
    """harness (claude, codex, gemini or None), finished, why (what the last turn was when it had not ended),
    named (the file was named by the model's side), session (its id when the transcript gives one), records."""

    def __init__(self) -> None:
        self.harness: str | None = None
        self.finished = False
        self.why = "the transcript holds no message"
        self.named = False
        self.session: str | None = None
        self.records = 0


def _needles(file_path: str, project: str) -> list[str]:
    full = os.path.abspath(file_path)
    rel = os.path.relpath(full, project).replace(os.sep, "/")
    return sorted(n for n in {full, rel, os.path.basename(full)} if n)


# What continues a name: a letter or digit of any script, `_` and `-`. Before a name `.`, `/` and `\` continue it
# too (`.APPROVED` is another file, `lib/src/a.py` another path), except a `./` that is itself at a boundary (the same
# file, spelt from the project's folder); after it `/` and `\` continue it (a folder of that name) and so does a `.`
# followed by a name's character (`APPROVED.md`), while a `.` ending a sentence does not.
_JOINS = frozenset("_-")


def _name_char(c: str) -> bool:
    return c.isalnum() or c in _JOINS


def _open_before(text: str, start: int) -> bool:
    while start >= 2 and text[start - 2 : start] == "./":
        start -= 2  # `./NAME` (`././NAME`): the boundary is the one before
    return start == 0 or not (_name_char(text[start - 1]) or text[start - 1] in "./\\")


def _closed_after(text: str, end: int) -> bool:
    if end == len(text):
        return True
    nxt = text[end]
    if nxt == ".":
        return end + 1 == len(text) or not _name_char(text[end + 1])
    return not (_name_char(nxt) or nxt in "/\\")


def whole(text: str, name: str) -> bool:
    """Whether text holds name whole: not inside a longer word, file name or path (the rules above)."""
    if not name:
        return False
    at = text.find(name)
    while at >= 0:
        if _open_before(text, at) and _closed_after(text, at + len(name)):
            return True
        at = text.find(name, at + 1)
    return False


_MAX_STRINGS = 100_000  # strings looked at in one record: a planted record nested without end costs no more


def _strings(value: Any) -> Iterator[str]:
    """Every string in a record's part (keys left out: they are the format's, not the model's words), and in a
    string that is itself a JSON object or array (a Codex call's `arguments`) the strings it holds, decoded: an
    escape (`\\n`) never glues a name to the letter beside it."""
    stack = [(value, 0)]
    seen = 0
    while stack and seen < _MAX_STRINGS:
        item, depth = stack.pop()
        seen += 1
        if isinstance(item, str):
            yield item
            inner = item.lstrip()[:1]
            if depth < 2 and inner in ("{", "["):
                try:
                    stack.append((loads(item.encode("utf-8", "replace")), depth + 1))
                except (ValueError, RecursionError):
                    pass
        elif isinstance(item, dict):
            stack.extend((v, depth) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth) for v in item)


def names(value: Any, needles: list[str]) -> bool:
    """Whether a record's part names the file: one of its strings holds a needle whole."""
    return any(whole(text, n) for text in _strings(value) for n in needles if n in text)


def _objects(path: str, block: int | None = None) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """(line, record) of each line that parses as a JSON object; the others skipped."""
    for _, raw in lines(path, block) if block else lines(path):
        if raw is None:
            continue
        try:
            rec = loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict):
            yield raw, rec


def ended(path: str, file_path: str, project: str) -> Ended:
    """Read the transcript at path (OSError when it cannot be opened: not a regular file, absent)."""
    with open_regular(path):
        pass  # refused early when not a regular file
    head: list[dict[str, Any]] = []
    for _, rec in _objects(path, 1 << 16):
        head.append(rec)
        if len(head) >= 20:
            break
    out = Ended()
    out.harness = detect(head)
    needles = _needles(file_path, project)
    reader = {"claude": _Claude, "codex": _Codex, "gemini": _Gemini}.get(out.harness or "")
    if reader is None:
        out.why = "not a Claude Code, Codex or Gemini CLI transcript"
        return out
    walk: Any = reader()
    for _, rec in _objects(path):
        out.records += 1
        said = walk.take(rec)  # the model's own words and tool inputs in this record (None: not the model's)
        if said is not None and not out.named:
            out.named = names(said, needles)
        if out.session is None:
            out.session = walk.session(rec)
    out.finished, out.why = walk.verdict()
    return out


def _id(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class _Claude:
    def __init__(self) -> None:
        self.pending: set[str] = set()
        self.last: str | None = None  # "text", "tool" (the model's), "prompt", "result" (the user's side)

    def session(self, rec: dict[str, Any]) -> str | None:
        return _id(rec.get("sessionId"))

    def take(self, rec: dict[str, Any]) -> list[Any] | None:
        """The model's words and tool inputs in the record, as a list to look for the file's name in (None: not the
        model's side)."""
        kind = rec.get("type")
        if kind not in ("assistant", "user") or rec.get("isSidechain") or rec.get("isMeta"):
            return None
        message = rec.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if kind == "assistant":
            calls = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            for block in calls:
                self.pending.add(str(block.get("id")))
            if rec.get("isApiErrorMessage") or rec.get("error"):  # the harness's note of a failed call, not an answer
                self.last = "error"
            elif calls:
                self.last = "tool"
            elif any(isinstance(b, dict) and b.get("type") == "text" and str(b.get("text")).strip() for b in blocks):
                self.last = "text"
            return [content]
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            self.pending.discard(str(block.get("tool_use_id")))
        if results:
            self.last = "result"
        elif rec.get("isCompactSummary") or _is_command(content):
            pass  # a compaction's summary or a local command: not a prompt the model must answer
        else:
            self.last = "prompt"
        return None

    def verdict(self) -> tuple[bool, str]:
        return _verdict(self.last, self.pending)


def _is_command(content: object) -> bool:
    text = content if isinstance(content, str) else ""
    return text.startswith(("<command-name>", "<local-command-stdout>", "<command-message>"))


class _Codex:
    CALLS = ("function_call", "custom_tool_call", "local_shell_call")
    OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")

    def __init__(self) -> None:
        self.pending: set[str] = set()
        self.last: str | None = None

    def session(self, rec: dict[str, Any]) -> str | None:
        payload = rec.get("payload")
        if rec.get("type") == "session_meta" and isinstance(payload, dict):
            return _id(payload.get("id"))
        return None

    def take(self, rec: dict[str, Any]) -> list[Any] | None:
        payload = rec.get("payload")
        if rec.get("type") != "response_item" or not isinstance(payload, dict):
            return None
        kind = payload.get("type")
        if kind in self.CALLS:
            self.pending.add(str(payload.get("call_id") or payload.get("id")))
            self.last = "tool"
            return [payload.get(k) for k in ("name", "arguments", "input", "action")]
        if kind in self.OUTPUTS:
            self.pending.discard(str(payload.get("call_id")))
            self.last = "result"
            return None
        if kind == "message":
            role = payload.get("role")
            if role == "assistant":
                self.last = "text"
                return [payload.get("content")]
            if role == "user" and not _codex_context(payload):
                self.last = "prompt"
        return None

    def verdict(self) -> tuple[bool, str]:
        return _verdict(self.last, self.pending)


def _codex_context(payload: dict[str, Any]) -> bool:
    """A user message that Codex writes itself (the environment context, AGENTS.md's instructions), not a prompt."""
    content = payload.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    starts = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ")
    return isinstance(text, str) and text.lstrip().startswith(starts)


class _Gemini:
    def __init__(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        self.sid: str | None = None

    def session(self, rec: dict[str, Any]) -> str | None:
        return _id(rec.get("sessionId"))

    def take(self, rec: dict[str, Any]) -> list[Any] | None:
        rewind = rec.get("$rewindTo")
        if rewind is not None:
            ids = list(self.messages)
            cut = ids.index(rewind) if rewind in ids else 0
            for key in ids[cut:]:
                del self.messages[key]
            return None
        mid = rec.get("id")
        if rec.get("type") in ("user", "gemini") and isinstance(mid, str):
            self.messages[mid] = rec  # written again: replaces the first, in its place
            if rec.get("type") == "gemini":
                calls = rec.get("toolCalls")
                args = [c.get("args") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else None
                return [rec.get("content"), args]
        return None

    def verdict(self) -> tuple[bool, str]:
        if not self.messages:
            return False, "the transcript holds no message"
        last = list(self.messages.values())[-1]
        if last.get("type") != "gemini":
            return False, "its last message is the user's: the model has not answered it"
        calls = last.get("toolCalls")
        if isinstance(calls, list) and calls:
            return False, "its last message calls a tool: the model has not answered after it"
        content = last.get("content")
        text = (
            content
            if isinstance(content, str)
            else "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            if isinstance(content, list)
            else ""
        )
        if not text.strip():
            return False, "its last message from the model holds no text"
        return True, "its last turn is a finished answer of the model"


def _verdict(last: str | None, pending: set[str]) -> tuple[bool, str]:
    if pending:
        return False, f"{len(pending)} tool call(s) wait for their result: the session is mid-turn"
    if last == "text":
        return True, "its last turn is a finished answer of the model"
    if last == "tool":
        return False, "its last record is a tool call: the session is mid-turn"
    if last == "error":
        return False, "its last record is an API error, not an answer of the model"
    if last == "result":
        return False, "its last record is a tool's result the model has not answered: the session is mid-turn"
    if last == "prompt":
        return False, "its last message is the user's: the model has not answered it"
    return False, "the transcript holds no message of the model"
