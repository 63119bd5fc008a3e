"""Gemini CLI chat files (0.61): ~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl, written by the CLI's
ChatRecordingService, read here for transcripts.recent.read_since.

The shape, from the pinned bundle (tests/e2e/.cache/gemini-0.61.0, `ChatRecordingService`, `loadConversationRecord`):
- a metadata line `{sessionId, projectHash, startTime, lastUpdated, kind[, directories]}`, projectHash being the
  sha256 hex of the project root's path (`getProjectHash`);
- messages `{id, timestamp, type: "user"|"gemini"|"info"|"error"|"warning", content, displayContent?, toolCalls?:
  [{id, name, args, result, status, timestamp, ...}], thoughts?, tokens?, model?}`, appended again with the same id
  whenever they change (tool calls completed, tokens counted): the last one wins, in the place of the first;
- `{"$set": {...}}` lines (`lastUpdated` after each new message: the only stamps of when a line was written, since a
  message appended again keeps its first timestamp) and `{"$rewindTo": id}` (that message and every later one
  dropped; an id not seen drops them all).
Our own brief reaches the chat inside `<hook_context>…</hook_context>` (the SessionStart hook's
additional context in -p mode): cut out of user messages, never taken for the user's words.
"""

from __future__ import annotations

from rehydrate.transcripts.failures import later_ok
from rehydrate.transcripts.jsonl import label, obj
from rehydrate.transcripts.model import Failed, Msg, Todos, add_edit, stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.transcripts.model import Recent

EDIT_TOOLS = ("write_file", "replace")
SHELL = "run_shell_command"
READ_ONLY: tuple[str, ...] = ("read_file", "read_many_files", "list_directory", "glob", "search_file_content")
READ_ONLY += ("grep", "google_web_search", "web_fetch", "write_todos", "save_memory")
HOOK_OPEN, HOOK_CLOSE = "<hook_context>", "</hook_context>"


def project_hash(root: str) -> str:
    """Gemini CLI's projectHash of a root: the sha256 hex of its path (the builtin module, not hashlib: no OpenSSL
    on the hook path)."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:  # pragma: no cover - another implementation
            from hashlib import sha256  # type: ignore[no-redef,unused-ignore]
    return str(sha256(root.encode("utf-8")).hexdigest())


def strip_hook_context(text: str) -> str:
    """text without any <hook_context>…</hook_context> part (an unclosed one: to its end)."""
    while HOOK_OPEN in text:
        start = text.index(HOOK_OPEN)
        end = text.find(HOOK_CLOSE, start)
        text = text[:start] + ("" if end < 0 else text[end + len(HOOK_CLOSE) :])
    return text


def _text(content: Any) -> str:
    """A message's content as text: a string, or its parts' texts."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _shell_outcome(result: Any, display: Any) -> tuple[int | None, str]:
    """A failed shell call's exit code ("Exit Code: N") and first error line, from its function response."""
    texts = []
    for part in result if isinstance(result, list) else [result]:
        response = obj(obj(obj(part).get("functionResponse")).get("response"))
        texts += [response[k] for k in ("error", "output") if isinstance(response.get(k), str)]
    if isinstance(display, str):
        texts.append(display)
    code: int | None = None
    error = ""
    for line in "\n".join(texts).split("\n"):
        words = line.strip()
        if words.startswith("Exit Code: ") and words[11:].strip().lstrip("-").isdigit() and code is None:
            code = int(words[11:].strip())
            continue
        for prefix in ("Error: ", "Output: "):
            if words.startswith(prefix):
                words = words[len(prefix) :].strip()
                words = "" if words == "(none)" else words
        if (
            words
            and not error
            and not words.startswith(
                ("Command: ", "Directory: ", "Signal: ", "Background PIDs: ", "Process Group PGID: ")
            )
        ):
            error = words
    return code, error


class _Tail:
    """The Gemini CLI side of read_since (transcripts.model.Tail, through TAIL)."""

    @staticmethod
    def refused(raw: bytes) -> bool:
        return False

    @staticmethod
    def stamp(rec: dict[str, Any]) -> Any:
        """Only `$set` lines tell when they were written (lastUpdated); a message appended again keeps its first
        timestamp, so it never ends the window."""
        return obj(rec.get("$set")).get("lastUpdated")

    @staticmethod
    def names_other(head: list[dict[str, Any]], roots: tuple[str, ...]) -> bool:
        hashes = {project_hash(root) for root in roots}
        for rec in head:
            if isinstance(rec.get("projectHash"), str):
                return rec["projectHash"] not in hashes
        return True

    @staticmethod
    def version(head: list[dict[str, Any]]) -> str | None:
        return None  # a chat file does not name the CLI's version

    TODO_MARKS: tuple[bytes, ...] = (b'"write_todos"',)  # a block holding none holds no task list

    @staticmethod
    def may_hold_todos(raw: bytes) -> bool:
        return b'"write_todos"' in raw

    @staticmethod
    def holds_todos(rec: dict[str, Any]) -> bool:
        """A message with a write_todos call: it holds the whole list."""
        calls = rec.get("toolCalls")
        return isinstance(calls, list) and any(obj(c).get("name") == "write_todos" for c in calls)

    todos_whole = holds_todos

    @staticmethod
    def extract(
        recent: Recent,
        window: list[tuple[int, dict[str, Any]]],
        before: list[tuple[int | None, dict[str, Any]]],
        roots: tuple[str, ...],
        loads: Callable[[str | bytes], Any],
        since: str | None,
    ) -> None:
        for number, rec in before:
            _todos(recent, number, rec, True)
        messages: dict[str, tuple[int, dict[str, Any]]] = {}
        for number, rec in window:
            if isinstance(rec.get("$rewindTo"), str):
                ids = list(messages)
                cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in ids else 0
                for ident in ids[cut:]:
                    del messages[ident]
            elif isinstance(rec.get("id"), str):
                messages[rec["id"]] = (number, rec)
        for number, rec in messages.values():
            _message(recent, number, rec, roots, since)


def _todos(recent: Recent, number: int | None, rec: dict[str, Any], before: bool) -> None:
    for call in rec.get("toolCalls") or []:
        todos = obj(obj(call).get("args")).get("todos") if obj(call).get("name") == "write_todos" else None
        if isinstance(todos, list):
            items = [(label(t.get("description")), label(t.get("status"))) for t in todos if isinstance(t, dict)]
            recent.todos = Todos("write_todos", number, before, items)


def _after(value: Any, since: str | None) -> bool:
    """Whether a message's or tool call's own stamp is after since (unstamped: taken as after)."""
    ts = stamp(value)
    return since is None or ts is None or ts > since


def _message(recent: Recent, number: int, rec: dict[str, Any], roots: tuple[str, ...], since: str | None) -> None:
    """One message as it stands last: a message first written before since (appended again since, its tool calls
    completed) gives only the tool calls stamped after since."""
    kind = rec.get("type")
    ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
    new = _after(ts, since)
    if kind == "user":
        text = strip_hook_context(_text(rec.get("content"))).strip()
        if text and new:
            recent.user.append(Msg(ts, number, text))
        return
    if kind != "gemini":
        return
    text = _text(rec.get("content"))
    if text.strip() and new:
        recent.assistant = Msg(ts, number, text)
    calls = rec.get("toolCalls")
    for one in calls if isinstance(calls, list) else []:
        call = obj(one)
        if not _after(call.get("timestamp"), since):
            continue
        if call.get("name") == "write_todos":
            _todos(recent, number, {"toolCalls": [call]}, False)
        name, args, status = label(call.get("name")), obj(call.get("args")), call.get("status")
        recent.tool_calls += 1
        recent.changing_calls += name not in READ_ONLY
        if name in EDIT_TOOLS and status == "success" and isinstance(args.get("file_path"), str):
            path = args["file_path"]
            if not path.startswith("/") and roots:
                path = roots[0].rstrip("/") + "/" + path
            add_edit(recent, path, roots)
        elif name == SHELL and isinstance(args.get("command"), str):
            if status == "error":
                code, error = _shell_outcome(call.get("result"), call.get("resultDisplay"))
                recent.failed.append(Failed(SHELL, args["command"], code, error, number))
            elif status == "success":
                later_ok(recent.failed, args["command"])


TAIL = _Tail()
