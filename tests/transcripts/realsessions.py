"""An independent, test-side reader of real agent transcripts (Claude Code and Codex CLI), to derive test expectations.

It exists to check rehydrate's own transcript reader, so it imports nothing from `rehydrate`: standard library only,
written from the transcripts themselves (tests/fixtures/transcripts/compactions, see NOTICE.md there). A file whose
name ends in .gz is read through gzip.

- `compactions(path)`: the 0-based line indexes of the compaction boundaries.
- `facts(path, boundary, since_ts)`: what the structured records at lines < boundary show (see `Facts`).
- `error_lines(output)`: the lines of a command's output that name an error.

Choices where the records leave room (all documented here, so a test can say why it expects what it expects):

- Timestamps: a record with no `timestamp` takes the last one seen before it. `since_ts` keeps records stamped strictly
  after it (compared as instants). `last_ts` is the stamp of the last stamped record before the boundary, in line
  order (stamps are not quite monotonic in Claude Code files: a tool result can be stamped a few ms before the
  queue-operation written above it).
- An edit or a failed command is dated by its tool call (the assistant record / function_call), not by its result.
- Claude Code tasks (TaskCreate/TaskUpdate/TaskList/TaskGet) are listed by numeric id ascending, whatever order a
  TaskList snapshot gives (it is not creation order: "#6, #7, #10, #1, ..."). A TaskUpdate of an id not known is
  ignored; a TaskGet result updates (or adds) that one task; only top-level records count (a subagent's TaskUpdate,
  inside a `progress` record, does not, though the next TaskList snapshot shows its effect; `subagent_tasks=True`
  folds those too).
- Claude Code TodoWrite counts from its call, unless its result (before the boundary) is an error; an empty
  `todos: []` in a TodoWrite call clears the list; the `todos` field of user records is ignored.
- Claude Code requests: besides the brief's exclusions (`<system-reminder>`, `<local-command-`, "Caveat:", isMeta,
  isCompactSummary), "[Request interrupted by user...]" markers and the `!` shell mode's `<bash-input>`,
  `<bash-stdout>`, `<bash-stderr>` records are not requests. Every request is stripped. A rejected tool call gives a
  request only when its result is an error and holds "the user said:".
- Codex: a command started by exec_command that is still running ("Process running with session ID N") and that
  later ends non-zero in a write_stdin output counts as a failure of that exec_command's command (dated by the
  write_stdin call), except when that write_stdin sent Ctrl-C (the agent's own interrupt, exit 130).
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

Record = dict[str, Any]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts" / "compactions"

_ERROR = re.compile(
    r"error|fail|fatal|panic|exception|traceback|conflict|denied|not found|cannot|unrecognized|no such file|×|✗|✖",
    re.IGNORECASE,
)
_EXIT_HEADER = re.compile(r"(?:exit code:? -?\d+|process exited with code -?\d+)", re.IGNORECASE)

_EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
_NOT_REQUESTS = (
    "<system-reminder>",
    "<local-command-",
    "Caveat:",
    "[Request interrupted by user",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_REJECTED = "The user doesn't want to proceed"
_USER_SAID = "the user said:"
_CODEX_SHELLS = ("exec_command", "shell", "shell_command", "local_shell")
_CODEX_CONTEXT = ("<environment_context>", "# AGENTS.md")
_PATCH_PATH = re.compile(r"^\*\*\* (?:Update File|Add File|Delete File|Move to): (.+?)\s*$", re.MULTILINE)


class Failed(NamedTuple):
    """A shell command that failed: the command, its exit code (None when the output gives none), its output text."""

    command: str
    exit_code: int | None
    output: str


@dataclass
class Facts:
    """What a transcript's structured records show just before a compaction boundary."""

    tasks: list[tuple[str, str]]  # the task list as it stood, (text, status)
    requests: list[str]  # the user's requests from the file's start, in order
    edited: list[str]  # paths successfully edited since since_ts, first-edit order, unique
    failed: list[Failed]  # shell commands that failed since since_ts, in order
    last_ts: str | None  # the last timestamp before the boundary


def error_lines(output: str) -> list[str]:
    """The output's lines (stripped) that name an error, less exit-code headers and echoed commands ("$ ...")."""
    found = []
    for raw in output.splitlines():
        line = raw.strip()
        if not line or line.startswith("$ ") or _EXIT_HEADER.fullmatch(line):
            continue
        if _ERROR.search(line):
            found.append(line)
    return found


# --- reading -------------------------------------------------------------------------------------------------------


def _lines(path: str | Path) -> list[bytes]:
    """The file's lines, split at newlines only (a JSON string may hold U+2028, which splitlines() would split at)."""
    p = Path(path)
    data = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
    return data.split(b"\n")


def read_records(path: str | Path) -> list[Record | None]:
    """One entry per line: the parsed object, or None for a line that is not a JSON object."""
    out: list[Record | None] = []
    for line in _lines(path):
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        out.append(value if isinstance(value, dict) else None)
    return out


def _dict(value: Any) -> Record:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _instant(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def _after(ts: str | None, since: str | None) -> bool:
    if since is None:
        return True
    if ts is None:
        return False
    a, b = _instant(ts), _instant(since)
    if a is not None and b is not None:
        try:
            return a > b
        except TypeError:  # one naive, one aware
            pass
    return ts > since


def _is_codex(records: list[Record | None]) -> bool:
    kinds = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
    return any(r is not None and r.get("type") in kinds for r in records)


def compactions(path: str | Path) -> list[int]:
    """The 0-based line indexes of each compaction boundary (Claude Code compact_boundary, Codex compacted)."""
    found = []
    for i, r in enumerate(read_records(path)):
        if r is None:
            continue
        claude = r.get("type") == "system" and r.get("subtype") == "compact_boundary"
        if claude or r.get("type") == "compacted":
            found.append(i)
    return found


def facts(path: str | Path, boundary: int, since_ts: str | None, *, subagent_tasks: bool = False) -> Facts:
    """What the records at lines < boundary show; edited and failed count only what is stamped after since_ts.

    subagent_tasks (Claude Code): also fold the TaskUpdate calls that subagents make on the shared task list, which
    appear only inside `progress` records (data.type agent_progress), applied when their result there is no error.
    """
    records = read_records(path)[:boundary]
    reader = _Codex(since_ts) if _is_codex(records) else _Claude(since_ts, subagent_tasks)
    reader.prepare(records)
    ts: str | None = None
    last_ts: str | None = None
    for r in records:
        if r is None:
            continue
        own = _str(r.get("timestamp"))
        if own is not None:
            ts = last_ts = own
        reader.take(r, ts)
    return Facts(reader.tasks(), reader.requests, _unique(reader.edited), reader.failed, last_ts)


def _unique(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def _text(content: Any) -> str:
    """A tool result's or message's content as text: the string, or its text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    parts = []
    for block in _list(content):
        b = _dict(block)
        text = _str(b.get("text"))
        if text is not None:
            parts.append(text)
    return "\n".join(parts)


class _Reader:
    def __init__(self, since: str | None) -> None:
        self.since = since
        self.requests: list[str] = []
        self.edited: list[str] = []
        self.failed: list[Failed] = []

    def prepare(self, records: list[Record | None]) -> None:
        """A look over all the records before the boundary, ahead of `take`."""

    def take(self, record: Record, ts: str | None) -> None:
        raise NotImplementedError

    def tasks(self) -> list[tuple[str, str]]:
        raise NotImplementedError


# --- Claude Code ---------------------------------------------------------------------------------------------------


class _Use(NamedTuple):
    name: str
    input: Record
    ts: str | None


def _task_key(task_id: str) -> tuple[int, int, str]:
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)


# Slash commands that work the CLI itself (switch the model, leave, clear the screen): not requests to the agent.
CLI_COMMANDS = ("/exit", "/quit", "/model", "/clear", "/compact", "/ide", "/mcp", "/config", "/help", "/resume")


def _claude_request(text: str) -> str | None:
    s = text.strip()
    name = re.search(r"<command-name>\s*(.*?)\s*</command-name>", s, re.DOTALL)
    if name:
        args = re.search(r"<command-args>(.*?)</command-args>", s, re.DOTALL)
        command = name.group(1) if name.group(1).startswith("/") else "/" + name.group(1)
        rest = args.group(1).strip() if args else ""
        if command in CLI_COMMANDS:
            return None
        return f"{command} {rest}" if rest else command
    if s.split(" ")[0] in CLI_COMMANDS:
        return None
    if not s or s.startswith(_NOT_REQUESTS):
        return None
    return s


class _Claude(_Reader):
    def __init__(self, since: str | None, subagent_tasks: bool = False) -> None:
        super().__init__(since)
        self.subagent_tasks = subagent_tasks
        self.subagent_updates: dict[str, _Use] = {}
        self.uses: dict[str, _Use] = {}
        self.task_map: dict[str, list[str]] = {}  # id -> [subject, status]
        self.todos: list[tuple[str, str]] = []
        self.last_kind: str | None = None  # "todo" or "task": whichever came last
        self.errored: set[str] = set()  # tool_use ids whose result (before the boundary) is an error
        self.queued: list[str] = []  # queued messages not yet delivered or taken back

    def prepare(self, records: list[Record | None]) -> None:
        for r in records:
            for block in _list(_dict(_dict(r).get("message")).get("content")):
                b = _dict(block)
                if b.get("type") == "tool_result" and b.get("is_error") is True:
                    self.errored.add(str(b.get("tool_use_id")))

    def take(self, record: Record, ts: str | None) -> None:
        kind = record.get("type")
        if kind == "assistant":
            self._assistant(record, ts)
        elif kind == "user":
            self._user(record)
        elif kind == "progress" and self.subagent_tasks:
            self._subagent(record, ts)
        elif kind == "queue-operation" and record.get("operation") == "enqueue":
            content = _str(record.get("content"))
            request = _claude_request(content) if content is not None else None
            if request:
                self.requests.append(request)
                self.queued.append(request)
        elif kind == "queue-operation" and record.get("operation") == "popAll":
            # the queued messages taken back into the input box: what the user then sends is the request
            for text in self.queued:
                if text in self.requests:
                    self.requests.reverse()
                    self.requests.remove(text)
                    self.requests.reverse()
            self.queued = []
        elif kind == "queue-operation" and record.get("operation") == "remove":
            self.queued = self.queued[1:]  # delivered to the agent: it stands as a request

    def _assistant(self, record: Record, ts: str | None) -> None:
        for block in _list(_dict(record.get("message")).get("content")):
            b = _dict(block)
            if b.get("type") != "tool_use":
                continue
            use_id, name = _str(b.get("id")), _str(b.get("name"))
            if use_id is None or name is None:
                continue
            use = _Use(name, _dict(b.get("input")), ts)
            self.uses[use_id] = use
            if name == "TodoWrite" and isinstance(use.input.get("todos"), list) and use_id not in self.errored:
                todos = [_dict(item) for item in _list(use.input.get("todos"))]
                self.todos = [(str(d.get("content", "")), str(d.get("status", ""))) for d in todos]
                self.last_kind = "todo"

    def _user(self, record: Record) -> None:
        content = _dict(record.get("message")).get("content")
        results = [_dict(b) for b in _list(content) if _dict(b).get("type") == "tool_result"]
        if results:
            for result in results:
                self._result(result, record.get("toolUseResult"))
            return
        if record.get("isMeta") or record.get("isCompactSummary"):
            return
        request = _claude_request(_text(content))
        if request:
            self.requests.append(request)

    def _result(self, result: Record, tool_use_result: Any) -> None:
        text = _text(result.get("content"))
        error = result.get("is_error") is True
        if error and _USER_SAID in text:
            said = text.split(_USER_SAID, 1)[1].strip()
            if said:
                self.requests.append(said)
        use_id = _str(result.get("tool_use_id"))
        use = self.uses.get(use_id) if use_id is not None else None
        if use is None:
            return
        outcome = _dict(tool_use_result)
        if use.name in _EDIT_TOOLS:
            path = _str(use.input.get("file_path")) or _str(use.input.get("notebook_path"))
            if path and not error and _after(use.ts, self.since):
                self.edited.append(path)
        elif use.name == "Bash":
            if error and not text.startswith(_REJECTED) and _after(use.ts, self.since):
                code = re.match(r"Exit code (-?\d+)", text)
                command = _str(use.input.get("command")) or ""
                self.failed.append(Failed(command, int(code.group(1)) if code else None, text))
        elif use.name.startswith("Task") and not error and outcome.get("success") is not False:
            self._task(use, outcome)

    def _subagent(self, record: Record, ts: str | None) -> None:
        data = _dict(record.get("data"))
        if data.get("type") != "agent_progress":
            return
        for block in _list(_dict(_dict(data.get("message")).get("message")).get("content")):
            b = _dict(block)
            block_id = _str(b.get("id")) or _str(b.get("tool_use_id"))
            if block_id is None:
                continue
            if b.get("type") == "tool_use" and b.get("name") == "TaskUpdate":
                self.subagent_updates[block_id] = _Use("TaskUpdate", _dict(b.get("input")), ts)
            elif b.get("type") == "tool_result" and block_id in self.subagent_updates and b.get("is_error") is not True:
                self._task(self.subagent_updates[block_id], {})

    def _task(self, use: _Use, outcome: Record) -> None:
        if use.name == "TaskCreate":
            task = _dict(outcome.get("task"))
            task_id = task.get("id")
            if task_id is None:
                return
            subject = _str(use.input.get("subject")) or _str(task.get("subject")) or ""
            self.task_map[str(task_id)] = [subject, "pending"]
        elif use.name == "TaskUpdate":
            task_id = use.input.get("taskId")
            entry = self.task_map.get(str(task_id)) if task_id is not None else None
            if entry is None:
                return
            status, new_subject = _str(use.input.get("status")), _str(use.input.get("subject"))
            if status == "deleted":
                del self.task_map[str(task_id)]
            elif status:
                entry[1] = status
            if new_subject and status != "deleted":
                entry[0] = new_subject
        elif use.name == "TaskList" and isinstance(outcome.get("tasks"), list):
            self.task_map = {}
            for item in _list(outcome.get("tasks")):
                d = _dict(item)
                if d.get("id") is not None:
                    self.task_map[str(d["id"])] = [str(d.get("subject", "")), str(d.get("status", ""))]
        elif use.name == "TaskGet" and _dict(outcome.get("task")).get("id") is not None:
            d = _dict(outcome.get("task"))
            self.task_map[str(d["id"])] = [str(d.get("subject", "")), str(d.get("status", ""))]
        else:
            return
        self.last_kind = "task"

    def tasks(self) -> list[tuple[str, str]]:
        if self.last_kind == "todo":
            return list(self.todos)
        if self.last_kind == "task":
            return [(s, st) for _, (s, st) in sorted(self.task_map.items(), key=lambda kv: _task_key(kv[0]))]
        return []


# --- Codex CLI -----------------------------------------------------------------------------------------------------


def _codex_exit(output: str) -> int | None:
    """The exit code an output shows: its header's "Process exited with code N" or "Exit code: N" line."""
    head = output.split("\nOutput:", 1)[0] if "\nOutput:" in output else output.split("\n", 1)[0]
    code = re.search(r"^(?:Process exited with code|Exit code:?) (-?\d+)\s*$", head, re.MULTILINE)
    return int(code.group(1)) if code else None


def _codex_output(output: Any) -> tuple[str, int | None]:
    """A call output's text and exit code; a JSON string with metadata.exit_code (the older `shell`) is unwrapped."""
    if not isinstance(output, str):
        return _text(output), None
    if output.lstrip().startswith("{"):
        try:
            value = json.loads(output)
        except ValueError:
            value = None
        meta = _dict(_dict(value).get("metadata"))
        if isinstance(meta.get("exit_code"), int):
            return str(_dict(value).get("output", "")), int(meta["exit_code"])
    return output, _codex_exit(output)


def _codex_command(name: str, arguments: Record) -> str:
    if name == "exec_command":
        return _str(arguments.get("cmd")) or ""
    command = arguments.get("command")
    if isinstance(command, list):
        parts = [str(p) for p in command]
        if len(parts) == 3 and parts[1] in ("-lc", "-c"):
            return parts[2]
        return " ".join(parts)
    return _str(command) or ""


class _Call(NamedTuple):
    name: str
    raw: str  # arguments (function_call) or input (custom_tool_call), as written
    ts: str | None


class _Codex(_Reader):
    def __init__(self, since: str | None) -> None:
        super().__init__(since)
        self.calls: dict[str, _Call] = {}
        self.plan: list[tuple[str, str]] = []
        self.sessions: dict[str, str] = {}  # running exec session id -> its command

    def take(self, record: Record, ts: str | None) -> None:
        payload = _dict(record.get("payload"))
        kind = payload.get("type")
        if record.get("type") == "event_msg" and kind == "user_message":
            message = _str(payload.get("message"))
            if message is not None and message.strip() and not message.lstrip().startswith(_CODEX_CONTEXT):
                self.requests.append(message.strip())
        if record.get("type") != "response_item":
            return
        if kind in ("function_call", "custom_tool_call"):
            call_id, name = _str(payload.get("call_id")), _str(payload.get("name"))
            raw = _str(payload.get("arguments" if kind == "function_call" else "input")) or ""
            if call_id is not None and name is not None:
                self.calls[call_id] = _Call(name, raw, ts)
            if name == "update_plan":
                self._plan(raw)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = _str(payload.get("call_id"))
            call = self.calls.get(call_id) if call_id is not None else None
            if call is not None:
                self._output(call, payload.get("output"))

    def _plan(self, raw: str) -> None:
        try:
            arguments = _dict(json.loads(raw))
        except ValueError:
            return
        if isinstance(arguments.get("plan"), list):
            self.plan = [
                (str(_dict(s).get("step", "")), str(_dict(s).get("status", ""))) for s in _list(arguments["plan"])
            ]

    def _output(self, call: _Call, raw_output: Any) -> None:
        output, code = _codex_output(raw_output)
        if call.name == "apply_patch":
            if code == 0 and _after(call.ts, self.since):
                self.edited.extend(_PATCH_PATH.findall(_patch_text(call.raw)))
            return
        try:
            arguments = _dict(json.loads(call.raw))
        except ValueError:
            arguments = {}
        if call.name in _CODEX_SHELLS:
            command = _codex_command(call.name, arguments)
            running = re.search(r"^Process running with session ID (\S+)", output, re.MULTILINE)
            if running:
                self.sessions[running.group(1)] = command
            if code is not None and code != 0 and _after(call.ts, self.since):
                self.failed.append(Failed(command, code, output))
        elif call.name == "write_stdin":
            session = str(arguments.get("session_id"))
            interrupted = "\x03" in (_str(arguments.get("chars")) or "")
            if code is not None and code != 0 and not interrupted and _after(call.ts, self.since):
                self.failed.append(Failed(self.sessions.get(session, f"<exec session {session}>"), code, output))

    def tasks(self) -> list[tuple[str, str]]:
        return list(self.plan)


def _patch_text(raw: str) -> str:
    """The patch a call holds: its input as written, or the `input`/`patch` string (or list) of JSON arguments."""
    if "*** Begin Patch" in raw and not raw.lstrip().startswith(("{", "[")):
        return raw
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(value, dict):
        value = value.get("input", value.get("patch", value.get("command", "")))
    if isinstance(value, list):
        value = "\n".join(str(v) for v in value)
    return value if isinstance(value, str) else raw


# --- for a human to eyeball ----------------------------------------------------------------------------------------


def _short(text: str, width: int = 110) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def _report(path: Path, verbose: bool) -> None:
    records = read_records(path)
    print(f"== {path.name}  ({len(records)} lines)")
    since: str | None = None
    for n, boundary in enumerate(compactions(path), 1):
        f = facts(path, boundary, since)
        print(f"  compaction {n} at line {boundary}  since={since}  last_ts={f.last_ts}")
        print(
            f"    counts: tasks={len(f.tasks)} requests={len(f.requests)} edited={len(f.edited)} failed={len(f.failed)}"
        )
        for text, status in f.tasks:
            print(f"    task [{status}] {_short(text, 100)}")
        with_subagents = facts(path, boundary, since, subagent_tasks=True).tasks
        if with_subagents != f.tasks:
            print("    with subagents' TaskUpdates (subagent_tasks=True):")
            for text, status in with_subagents:
                print(f"      task [{status}] {_short(text, 98)}")
        for request in f.requests[-3:]:
            print(f"    request: {_short(request)}")
        if verbose:
            for p in f.edited:
                print(f"    edited: {p}")
        for fail in f.failed:
            lines = error_lines(fail.output)
            print(f"    failed (exit {fail.exit_code}): {_short(fail.command, 100)}")
            shown = lines if verbose or len(lines) <= 2 else [lines[0], lines[-1]]
            for line in shown:
                print(f"      ! {_short(line, 120)}")
            if not verbose and len(lines) > 2:
                print(f"      ({len(lines)} error lines)")
        boundary_record = records[boundary]
        since = _str(boundary_record.get("timestamp")) if boundary_record is not None else f.last_ts


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    paths = [Path(a) for a in argv if a != "-v"]
    if not paths:
        paths = sorted([*FIXTURES.glob("*.jsonl"), *FIXTURES.glob("*.jsonl.gz")])
    for path in paths:
        _report(path, verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
