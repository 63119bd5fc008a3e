"""Claude Code session files: ~/.claude/projects/<project>/<session>.jsonl (and subagents' files); its home folder
and the tools that edit files, named here once (the harness's module takes them from here)."""

from __future__ import annotations

import os

from rehydrate.transcripts import (
    Compaction,
    Session,
    ToolCall,
    json_parser,
    label,
    newer_than,
    obj,
    read_blocks,
    records,
)
from rehydrate.transcripts.recent import (
    COMMAND,
    QUEUED,
    Failed,
    Msg,
    Todos,
    add_edit,
    exit_error,
    later_ok,
    named,
    stamp,
)
from rehydrate.transcripts.recent import REJECTED as REJECTED_KIND

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from rehydrate.transcripts.recent import Recent

FILE_KEYS = ("file_path", "notebook_path", "path")
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")  # a tool input's file_path or notebook_path


def home(env: Mapping[str, str] | None = None) -> str:
    """Claude Code's user folder: $CLAUDE_CONFIG_DIR, else ~/.claude. env: the environment to read it
    from (None: this process's; a given one without HOME gives a relative path, which its caller refuses)."""
    if env is None:
        return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or "", ".claude")


TASKS_DIR = "tasks"  # home()/tasks/<session id>/<task id>.json: the task tools' own store (2.1.332)
MAX_TASK_FILES, MAX_TASK_FILE = 200, 64 << 10


def task_order(ident: str) -> tuple[int, int, str]:
    """A task id's place in its list: in order of creation, as Claude Code counts its ids (a TaskList lists them in
    another order); an id that is not a number after them."""
    return (0, int(ident), "") if ident.isdigit() else (1, 0, ident)


def task_store(session_id: object) -> list[tuple[str, str]] | None:
    """The session's task list as Claude Code keeps it on disk (stored_tasks), as (subject, status) pairs."""
    stored = stored_tasks(session_id)
    return None if stored is None else [(t["subject"], t["status"]) for t in stored.values()]


def stored_tasks(session_id: object) -> dict[str, dict[str, Any]] | None:
    """The session's task list as Claude Code keeps it on disk (home()/tasks/<session id>/<id>.json, each {id,
    subject, status, description, blockedBy, ...}), {id: task as fold_task keeps it} in order of creation: the list
    whole, with no transcript to fold; None when there is no such folder (an older version, or no task made). A
    session id that is not a plain name is never a path; at most MAX_TASK_FILES files are read, regular files only
    (a FIFO or a folder is skipped), and a file larger than MAX_TASK_FILE bytes or that does not parse is left out."""
    from rehydrate.safejson import loads  # small files, on the hook path: not the transcripts' optional parser
    from rehydrate.transcripts import open_regular

    if not isinstance(session_id, str) or not session_id or not all(c.isalnum() or c in "-_" for c in session_id):
        return None
    folder = os.path.join(home(), TASKS_DIR, session_id)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))[:MAX_TASK_FILES]
    except OSError:
        return None
    found: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        try:
            with open_regular(os.path.join(folder, name)) as f:
                task = loads(f.read(MAX_TASK_FILE + 1))
        except (OSError, ValueError):
            continue
        if isinstance(task, dict) and task.get("id") is not None and isinstance(task.get("subject"), str):
            entry = {"subject": task["subject"], "status": label(task.get("status"))}
            _task_fields(entry, {k: v for k, v in task.items() if k != "status"})
            found.append((label(task["id"]), entry))
    found.sort(key=lambda t: task_order(t[0]))
    return dict(found)


def fold_task(tasks: dict[str, dict[str, Any]], name: str, tool_input: dict[str, Any], result: dict[str, Any]) -> bool:
    """A task tool's successful call folded into tasks ({id: {subject, status[, description, blockedBy]}}, in order of
    creation): TaskCreate adds a task (its id from the result), TaskUpdate sets its status, subject or description
    (status "deleted" removes it), TaskList's result is the whole list, TaskGet's one task. False: nothing known
    changed (another tool, or a result of another shape)."""
    if name == "TaskList":
        listed = result.get("tasks")
        if not isinstance(listed, list):
            return False
        found = [t for t in listed if isinstance(t, dict) and t.get("id") is not None]
        old = dict(tasks)
        tasks.clear()
        for t in sorted(found, key=lambda t: task_order(label(t["id"]))):
            ident = label(t["id"])
            tasks[ident] = {**old.get(ident, {}), "subject": label(t.get("subject")), "status": label(t.get("status"))}
            _task_fields(tasks[ident], t)
        return True
    if name == "TaskCreate":
        task = obj(result.get("task"))
        made = max((int(k) for k in tasks if k.isdigit()), default=0) + 1  # ids count up, a deleted one is not reused
        ident = label(task["id"]) if isinstance(task.get("id"), (str, int)) else str(made)
        subject = tool_input.get("subject") or task.get("subject") or tool_input.get("description")
        tasks[ident] = {"subject": label(subject) if subject is not None else "", "status": "pending"}
        _task_fields(tasks[ident], {**task, **tool_input})
        return True
    if name == "TaskGet":
        task = obj(result.get("task"))
        if task.get("id") is None:
            return False
        entry = tasks.setdefault(label(task["id"]), {"subject": label(task.get("subject")), "status": "pending"})
        _task_fields(entry, task)
        return True
    if name != "TaskUpdate":
        return False
    value = tool_input.get("taskId", result.get("taskId"))
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        return False
    ident = str(value)
    if tool_input.get("status") == "deleted":
        tasks.pop(ident, None)
        return True
    # a task created before what was read: known by its id and what the update says
    _task_fields(tasks.setdefault(ident, {"subject": f"task #{ident}", "status": "pending"}), tool_input)
    return True


def _task_fields(entry: dict[str, Any], said: dict[str, Any]) -> None:
    """What a tool's input or result says of a task, over what was known: subject, status, description, blockers."""
    for key in ("subject", "status", "description"):
        if isinstance(said.get(key), str):
            entry[key] = said[key]
    blockers = said.get("blockedBy")
    if isinstance(blockers, list):
        entry["blockedBy"] = [label(b) for b in blockers if isinstance(b, (str, int)) and not isinstance(b, bool)]


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
        import re  # not on the hook path (tool_calls_since reads no line this way)

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
                if result_of is not None and (block.get("is_error") is True or _error_text(block.get("content"))):
                    result_of.failed = True
    elif not isinstance(content, str):
        return
    if not results and not rec.get("isCompactSummary") and not rec.get("isMeta"):
        session.user_turns += 1


def _error_text(content: Any) -> bool:
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):
        text = "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return text.lstrip().startswith("<tool_use_error>")


# The transcript's tail since a checkpoint (transcripts.recent.read_since): what a Claude Code file holds of it.
READ_ONLY = ("Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "NotebookRead", "BashOutput", "TodoWrite")
TASK_TOOLS = ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet")  # the task list since 2.1.17, one task a call
NOT_PROMPTS: tuple[str, ...] = ("<command-name>", "<command-message>", "<local-command-", "<system-reminder>")
NOT_PROMPTS += ("Caveat:", "[Request interrupted by user", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
# The names the reader knows: anything else is counted in Recent.unknown (MCP tools, mcp__*, are the user's own).
KNOWN_TYPES: tuple[str, ...] = ("user", "assistant", "system", "summary", "progress", "attachment", "tag")
KNOWN_TYPES += ("file-history-snapshot", "queue-operation", "custom-title", "pr-link", "agent-name", "last-prompt")
KNOWN_SUBTYPES: tuple[str, ...] = ("compact_boundary", "microcompact_boundary", "stop_hook_summary", "turn_duration")
KNOWN_SUBTYPES += ("api_error", "local_command", "informational", "hook_error", "away_summary", "bridge_status")
KNOWN_TOOLS: tuple[str, ...] = (*READ_ONLY, *TASK_TOOLS, *EDIT_TOOLS, "Bash", "KillShell", "KillBash", "TodoRead")
KNOWN_TOOLS += ("TaskStop", "TaskOutput", "Task", "Agent", "Skill", "SlashCommand", "EnterPlanMode", "ExitPlanMode")
KNOWN_TOOLS += ("LSP", "AskUserQuestion", "ToolSearch", "ListMcpResourcesTool", "ReadMcpResourceTool")
KNOWN_TOOLS += ("EnterWorktree",)
# Built-in slash commands that act on the CLI itself, not requests to the model (/init, /review and a skill are).
_LOCAL: tuple[str, ...] = ("exit", "quit", "model", "mcp", "clear", "compact", "config", "settings", "status", "cost")
_LOCAL += ("usage", "help", "ide", "login", "logout", "resume", "context", "permissions", "allowed-tools", "hooks")
_LOCAL += ("doctor", "memory", "vim", "theme", "terminal-setup", "export", "agents", "add-dir", "bashes", "rewind")
_LOCAL += ("statusline", "privacy-settings", "release-notes", "upgrade", "plugin", "plugins", "output-style")
_LOCAL += ("sandbox", "bug", "feedback", "tasks", "copy", "fast", "stats", "keybindings", "rename", "todos")
LOCAL_COMMANDS = frozenset(_LOCAL)
REJECTED = "The user doesn't want to proceed with this tool use"
USER_SAID = "the user said:"
_USED_TYPES = (b"user", b"assistant", b"system", b"queue-operation")
_SKIPPED_TYPES = (b"progress", b"file-history-snapshot")


class _Tail:
    """The Claude Code side of read_since (used through TAIL)."""

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
    TODO_MARKS = (b'"TodoWrite"', b'"Task', b'"task', b'"todos":[{', b'"todos": [{')

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
                    failed = block.get("is_error") is True or _error_text(block.get("content"))
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
        failed = block.get("is_error") is True or _error_text(block.get("content"))
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


def content_text(content: Any) -> str:
    """A message's or tool result's content as text: the string, or its parts' texts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _is_str(value: Any, key: str) -> bool:
    return isinstance(value, dict) and isinstance(value.get(key), str)
