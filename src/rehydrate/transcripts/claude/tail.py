"""The tail of a Claude Code session since a checkpoint (transcripts.recent.read_since): the user's requests of every
kind, the last assistant text, the task list, the files edited, the commands that failed; what the reader does not
know counted. TAIL is this side as transcripts.formats lists it."""

from __future__ import annotations

from rehydrate.transcripts.claude import (
    EDIT_TOOLS,
    KNOWN_SUBTYPES,
    KNOWN_TOOLS,
    KNOWN_TYPES,
    LOCAL_COMMANDS,
    NOT_PROMPTS,
    READ_ONLY,
    REJECTED,
    TASK_TOOLS,
    USER_SAID,
    content_text,
    error_text,
)
from rehydrate.transcripts.claude.tasks import fold_task
from rehydrate.transcripts.failures import exit_error, later_ok
from rehydrate.transcripts.jsonl import label, obj
from rehydrate.transcripts.model import COMMAND, QUEUED, Failed, Msg, Todos, add_edit, named, stamp
from rehydrate.transcripts.model import REJECTED as REJECTED_KIND

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.transcripts.model import Recent

_USED_TYPES = (b"user", b"assistant", b"system", b"queue-operation")
_SKIPPED_TYPES = (b"progress", b"file-history-snapshot")


class _Tail:
    """Claude Code's side of read_since (transcripts.model.Tail, through TAIL)."""

    @staticmethod
    def refused(raw: bytes) -> bool:
        """Whether a line cannot be a record read_since uses, from its bytes (no re): one object holding no \\u00
        escape, every "type" in it followed by a string other than those read_since uses, one of them a type it
        knows to skip (progress and file-history-snapshot lines). Anything spelled otherwise is parsed, and so is a
        record of a type nobody knows (it is counted)."""
        if raw[:1] != b"{" or raw[-1:] != b"}" or b"\\u00" in raw:
            return False
        at = raw.find(b'"type"')
        if at < 0:
            return False
        skipped = False
        while at >= 0:
            value = at + 6
            if raw[value : value + 2] != b':"':
                return False
            close = raw.find(b'"', value + 2)
            kind = raw[value + 2 : close]
            if close < 0 or kind in _USED_TYPES:
                return False
            skipped = skipped or kind in _SKIPPED_TYPES
            at = raw.find(b'"type"', close)
        return skipped

    @staticmethod
    def stamp(rec: dict[str, Any]) -> Any:
        return rec.get("timestamp")

    @staticmethod
    def names_other(head: list[dict[str, Any]], roots: tuple[str, ...]) -> bool:
        """Whether the file's first record with a cwd names another project."""
        for rec in head:
            if isinstance(rec.get("cwd"), str):
                return not named(rec["cwd"], roots)
        return False

    @staticmethod
    def version(head: list[dict[str, Any]]) -> str | None:
        return next((rec["version"] for rec in head if isinstance(rec.get("version"), str)), None)

    # A block holding none of these holds no such line (a user record's empty `todos: []` is in every block)
    TODO_MARKS: tuple[bytes, ...] = (b'"TodoWrite"', b'"Task', b'"task', b'"todos":[{', b'"todos": [{')

    @staticmethod
    def may_hold_todos(raw: bytes) -> bool:
        """A line that may hold or change the task list: a TodoWrite or task tool call, a task tool's result (its
        toolUseResult names a "task", "tasks" or "taskId"), a user record's todos."""
        return any(m in raw for m in _Tail.TODO_MARKS)

    @staticmethod
    def holds_todos(rec: dict[str, Any]) -> bool:
        """A record that holds or changes the task list (read before the window, oldest first)."""
        inner = _subagent(rec)
        if inner is not None:
            return _Tail.holds_todos(inner)
        if rec.get("type") == "user":
            todos = rec.get("todos")
            return (isinstance(todos, list) and bool(todos)) or _task_result(rec)
        return _tool_uses(rec, ("TodoWrite", *TASK_TOOLS))

    @staticmethod
    def todos_whole(rec: dict[str, Any]) -> bool:
        """A record that holds the whole list: a TodoWrite call, a TaskList result. (A user record's todos is only
        a fallback: it never ends the look-back.)"""
        inner = _subagent(rec)
        if inner is not None:
            return _Tail.todos_whole(inner)
        if rec.get("type") == "user":
            return isinstance(obj(rec.get("toolUseResult")).get("tasks"), list)
        return _todo_write(rec) is not None

    @staticmethod
    def extract(
        recent: Recent,
        window: list[tuple[int, dict[str, Any]]],
        before: list[tuple[int | None, dict[str, Any]]],
        roots: tuple[str, ...],
        loads: Callable[[str | bytes], Any],
        since: str | None,
    ) -> None:
        cwds = {rec["cwd"] for _, rec in window if isinstance(rec.get("cwd"), str)}
        if roots and cwds and not any(named(cwd, roots) for cwd in cwds):
            recent.foreign = True
            return
        walk = _Walk(recent, roots)
        for number, rec in before:
            walk.todos(number, rec, True)
        for number, rec in window:
            walk.record(number, rec)
        walk.done()


TAIL = _Tail()


def _subagent(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The message a subagent's progress record carries (its own tool calls and results: a subagent works on the
    same task list), else None."""
    if rec.get("type") != "progress":
        return None
    data = obj(rec.get("data"))
    inner = data.get("message") if data.get("type") == "agent_progress" else None
    return inner if isinstance(inner, dict) and inner.get("type") in ("user", "assistant") else None


def _tool_uses(rec: dict[str, Any], names: tuple[str, ...]) -> bool:
    message = rec.get("message")
    content = message.get("content") if rec.get("type") == "assistant" and isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") in names for b in content
    )


def _task_result(rec: dict[str, Any]) -> bool:
    """A user record carrying a task tool's result: {"task": {...}}, {"tasks": [...]} or {"taskId": ...}."""
    result = rec.get("toolUseResult")
    return isinstance(result, dict) and ("task" in result or "tasks" in result or "taskId" in result)


def _todo_write(rec: dict[str, Any]) -> list[Any] | None:
    """The todos of a TodoWrite call in an assistant record, the last one; None when it holds none."""
    message = rec.get("message")
    content = message.get("content") if rec.get("type") == "assistant" and isinstance(message, dict) else None
    found = None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "TodoWrite":
                todos = obj(block.get("input")).get("todos")
                if isinstance(todos, list):
                    found = todos
    return found


def _items(todos: list[Any], text_key: str) -> list[tuple[str, str]]:
    return [
        (label(t.get(text_key)) if t.get(text_key) is not None else "", label(t.get("status")))
        for t in todos
        if isinstance(t, dict)
    ]


def command(text: str) -> str | None:
    """A slash command or skill a user record holds, as "/name args"; None when it holds none, or names a built-in
    command that acts on the CLI only (LOCAL_COMMANDS)."""
    name = _between(text, "<command-name>", "</command-name>")
    if name is None:
        return None
    name = name.strip()
    if not name.startswith("/"):
        name = "/" + name
    if not name[1:] or (name[1:].split(":")[-1] in LOCAL_COMMANDS and ":" not in name):
        return None
    args = (_between(text, "<command-args>", "</command-args>") or "").strip()
    return f"{name} {args}" if args else name


def _between(text: str, start: str, end: str) -> str | None:
    at = text.find(start)
    if at < 0:
        return None
    stop = text.find(end, at + len(start))
    return text[at + len(start) : stop if stop >= 0 else len(text)]


def rejected_words(text: str) -> str | None:
    """The user's words in a rejected tool call's result ("" when the user gave none); None when the call was not
    rejected."""
    if REJECTED not in text:
        return None
    at = text.find(USER_SAID)
    return text[at + len(USER_SAID) :].strip() if at >= 0 else ""


class _Walk:
    """One pass over the window's records, oldest first (and before them, the task list's records)."""

    def __init__(self, recent: Recent, roots: tuple[str, ...]) -> None:
        self.recent = recent
        self.roots = roots
        self.calls: dict[str, tuple[str, dict[str, Any], int, str | None]] = {}  # id: name, input, line, ts
        self.task_calls: dict[str, tuple[str, dict[str, Any]]] = {}  # id: name, input, of the task tools
        self.tasks: dict[str, dict[str, Any]] = {}  # id: the task (fold_task), in order of creation
        self.prompt_todos: Todos | None = None
        self.edits: list[tuple[str, object]] = []  # (path, call id) of each edit call, in order
        self.failed_ids: set[str] = set()  # the edit calls whose result is an error or was rejected
        self.queued: list[Msg] = []  # queued messages not yet delivered nor taken back
        self.tool_todos = False

    def todos(self, number: int | None, rec: dict[str, Any], before: bool) -> None:
        """What a record does to the task list: a TodoWrite sets it whole, a task tool's result changes it (its
        call's input says how), a user record's todos is the fallback when no tool wrote one; a subagent's calls
        count as the agent's own."""
        inner = _subagent(rec)
        if inner is not None:
            self.todos(number, inner, before)
            return
        kind = rec.get("type")
        if kind == "assistant":
            content = obj(rec.get("message")).get("content")
            for block in content if isinstance(content, list) else []:
                if _is_str(block, "id") and block.get("type") == "tool_use" and block.get("name") in TASK_TOOLS:
                    self.task_calls[block["id"]] = (block["name"], obj(block.get("input")))
            todos = _todo_write(rec)
            if todos is not None:
                self.recent.todos = Todos("TodoWrite", number, before, _items(todos, "content"))
                self.tool_todos = True
        elif kind == "user":
            content = obj(rec.get("message")).get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    result = obj(rec.get("toolUseResult"))
                    call = self.task_calls.get(label(block.get("tool_use_id")))
                    if call is None and isinstance(result.get("tasks"), list):
                        call = ("TaskList", {})  # the whole list, whatever call asked for it (read from here back)
                    failed = block.get("is_error") is True or error_text(block.get("content"))
                    if call is not None and not failed:
                        self._task(call[0], call[1], result, number, before)
            todos = rec.get("todos")
            if isinstance(todos, list) and todos and not self.tool_todos:  # an empty one hides nothing
                self.prompt_todos = Todos("prompt", number, before, _items(todos, "content"))

    def record(self, number: int, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if isinstance(rec.get("version"), str):
            self.recent.version = rec["version"]
        if kind == "assistant":
            self.todos(number, rec, False)
            self._assistant(number, ts, obj(rec.get("message")))
        elif kind == "user":
            self.todos(number, rec, False)
            self._user(number, ts, rec)
        elif kind == "queue-operation":
            self._queued(number, ts, rec)
        elif kind == "progress":
            self.todos(number, rec, False)
        elif kind == "system":
            subtype = rec.get("subtype")
            if subtype == "compact_boundary" and ts is not None:
                self.recent.compacted_at.append(stamp(ts) or ts)
            elif subtype is not None and subtype not in KNOWN_SUBTYPES:
                self.recent.unknown_one("subtype:system:" + label(subtype))
        elif kind not in KNOWN_TYPES:
            self.recent.unknown_one("type:" + label(kind))

    def _assistant(self, number: int, ts: str | None, message: dict[str, Any]) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            return
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                texts.append(block["text"])
            elif block.get("type") == "tool_use":
                name = label(block.get("name"))
                tool_input = obj(block.get("input"))
                self.recent.tool_calls += 1
                if name not in READ_ONLY and name not in TASK_TOOLS:
                    self.recent.changing_calls += 1
                if name not in KNOWN_TOOLS and not name.startswith("mcp__"):
                    self.recent.unknown_one("tool:" + name)
                if isinstance(block.get("id"), str):
                    self.calls[block["id"]] = (name, tool_input, number, ts)
                path = next((tool_input[k] for k in ("file_path", "notebook_path") if _is_str(tool_input, k)), None)
                if name in EDIT_TOOLS and path is not None:
                    self.edits.append((path, block.get("id")))  # kept unless its result says it failed
        if texts:
            self.recent.assistant = Msg(ts, number, "\n\n".join(texts))

    def _user(self, number: int, ts: str | None, rec: dict[str, Any]) -> None:
        content = obj(rec.get("message")).get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._result(number, ts, block)
            return
        if rec.get("isMeta") or rec.get("isCompactSummary"):
            return
        if isinstance(content, list):
            content = "\n".join(b["text"] for b in content if _is_str(b, "text") and b.get("type") == "text")
        if not isinstance(content, str) or not content.strip():
            return
        said = command(content) if "<command-name>" in content else None
        if said is not None:
            self.recent.user.append(Msg(ts, number, said, COMMAND))
        elif not content.lstrip().startswith(NOT_PROMPTS):
            self.recent.user.append(Msg(ts, number, content.strip()))

    def _queued(self, number: int, ts: str | None, rec: dict[str, Any]) -> None:
        """A message the user typed while the agent worked: enqueued (a request from then on), removed from the
        queue when delivered to the model (it stands), or all taken back into the input box (popAll: what the user
        then sends is the request, so they no longer count)."""
        operation = rec.get("operation")
        if operation == "popAll":
            pending = {id(m) for m in self.queued}
            self.recent.user = [m for m in self.recent.user if id(m) not in pending]
            self.queued = []
            return
        if operation == "remove":
            self.queued = self.queued[1:]
            return
        text = rec.get("content")
        if operation != "enqueue" or not isinstance(text, str) or not text.strip():
            return
        text = text.strip()
        if text.startswith("/") and text[1:].split(" ")[0] in LOCAL_COMMANDS:
            return
        msg = Msg(ts, number, text, QUEUED)
        self.queued.append(msg)
        self.recent.user.append(msg)

    def _result(self, number: int, ts: str | None, block: dict[str, Any]) -> None:
        ident = label(block.get("tool_use_id"))
        call = self.calls.get(ident)
        if call is None:
            return
        name, tool_input, _line, _ts = call
        text = content_text(block.get("content"))
        words = rejected_words(text) if block.get("is_error") is True else None
        if words is not None:  # the user said no: not a failure of the command, and their words are a request
            self.failed_ids.add(ident)
            if words:
                self.recent.user.append(Msg(ts, number, words, REJECTED_KIND))
            return
        failed = block.get("is_error") is True or error_text(block.get("content"))
        if name in EDIT_TOOLS and failed:
            self.failed_ids.add(ident)
        elif name == "Bash" and isinstance(tool_input.get("command"), str):
            command_line = tool_input["command"]
            if failed:
                code, error = exit_error(text)
                self.recent.failed.append(Failed("Bash", command_line, code, error, number))
            else:
                later_ok(self.recent.failed, command_line)

    def _task(
        self, name: str, tool_input: dict[str, Any], result: dict[str, Any], number: int | None, before: bool
    ) -> None:
        """A task tool's successful call, folded into the list (fold_task)."""
        if fold_task(self.tasks, name, tool_input, result):
            items = [(t["subject"], t["status"]) for t in self.tasks.values()]
            self.recent.todos = Todos("task tools", number, before, items)
            self.tool_todos = True

    def done(self) -> None:
        for path, ident in self.edits:
            if ident not in self.failed_ids:
                add_edit(self.recent, path, self.roots)
        if self.recent.todos is None and self.prompt_todos is not None:
            self.recent.todos = self.prompt_todos


def _is_str(value: Any, key: str) -> bool:
    return isinstance(value, dict) and isinstance(value.get(key), str)
