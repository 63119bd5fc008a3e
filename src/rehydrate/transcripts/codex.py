"""Codex CLI rollouts: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl; its home folder and the tools that
edit files (the harness's module holds a copy, kept equal by its tests)."""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.transcripts.failures import exit_error, later_ok
from rehydrate.transcripts.jsonl import canonical, label, lines_backwards, loads, obj, records
from rehydrate.transcripts.model import Compaction, Failed, Msg, Session, Todos, ToolCall, add_edit, named, stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from re import Pattern
    from typing import Any

    from rehydrate.transcripts.model import Recent

PATCH_FILE = r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$"  # compiled by _patterns()
EXIT_CODE = r"(?:Process exited with code|exit code:?) (-?\d+)"
EDIT_TOOLS = ("apply_patch",)
_compiled: tuple[Pattern[str], Pattern[str]] | None = None


def _patterns() -> tuple[Pattern[str], Pattern[str]]:
    """PATCH_FILE and EXIT_CODE compiled, when the audit first needs them (re stays off the hook path, where
    read_since reads the same things with str methods)."""
    global _compiled
    if _compiled is None:
        import re  # here only: the hook path reads this module's tail, where re is not loaded

        _compiled = re.compile(PATCH_FILE, re.MULTILINE), re.compile(EXIT_CODE, re.IGNORECASE)
    return _compiled


def home(env: Mapping[str, str] | None = None) -> str:
    """Codex CLI's user folder: $CODEX_HOME, else ~/.codex. env: the environment to read it from
    (None: this process's; a given one without HOME gives a relative path, which its caller refuses)."""
    if env is None:
        return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return env.get("CODEX_HOME") or os.path.join(env.get("HOME") or "", ".codex")


def starts_turn(rec: dict[str, Any]) -> bool:
    """A user's prompt: the event_msg user_message of Codex up to 0.16x; from 0.171 (no user_message any more), the
    event_msg item_completed of a UserMessage item."""
    payload = obj(rec.get("payload"))
    if rec.get("type") != "event_msg":
        return False
    return payload.get("type") == "user_message" or _item(payload, "UserMessage") is not None


def _item(payload: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """An item_completed event's item of that kind (Codex 0.171: UserMessage, AgentMessage, FileChange, ...)."""
    if payload.get("type") != "item_completed":
        return None
    item = obj(payload.get("item"))
    return item if item.get("type") == kind else None


def _item_text(item: dict[str, Any]) -> str:
    """The text of a UserMessage or AgentMessage item: its content's text parts, joined."""
    content = item.get("content")
    parts = [c.get("text") for c in content if isinstance(c, dict)] if isinstance(content, list) else []
    return "\n".join(t for t in parts if isinstance(t, str))


def _files(name: str, arguments: Any) -> list[str]:
    text = arguments if isinstance(arguments, str) else ""
    if name == "apply_patch" or "*** Begin Patch" in text:
        return [a or b for a, b in _patterns()[0].findall(text)]
    try:
        args = loads(text) if text else {}
    except ValueError:  # not JSON, or nested too deeply
        return []
    if isinstance(args, dict):
        return [str(args[k]) for k in ("path", "file_path") if isinstance(args.get(k), str)]
    return []


def _failed(output: Any) -> bool:
    text = output if isinstance(output, str) else canonical(output)
    try:
        data = loads(text)
        meta = data.get("metadata") if isinstance(data, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
            return bool(meta["exit_code"] != 0)
    except ValueError:
        pass
    m = _patterns()[1].search(text)
    return bool(m and int(m.group(1)) != 0)


def read(path: str, audit: bool = False, prefilter: bool = True) -> Session:
    """What a Codex rollout says; audit and prefilter change nothing (a rollout is read whole, its types counted)."""
    session = Session(path, "codex")
    calls: dict[str, ToolCall] = {}
    last_total: int | None = None
    for number, rec in records(path, session):
        kind = label(rec.get("type"))
        payload = obj(rec.get("payload"))
        ptype = payload.get("type")
        session.count(f"{kind}:{label(ptype)}" if ptype else kind)
        time = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if kind == "compacted":
            before = session.turns[-1].context if session.turns else None
            session.compactions.append(Compaction(None, before, number, time))
        elif kind == "event_msg" and ptype == "token_count":
            info = obj(payload.get("info")) or None
            if info is None:
                continue
            total = (
                info.get("total_token_usage", {}).get("total_tokens")
                if isinstance(info.get("total_token_usage"), dict)
                else None
            )
            total = total if isinstance(total, int) else None  # compared below: never a nested value
            if total is not None and total == last_total:
                continue  # the same usage reported again
            last_total = total
            last = obj(info.get("last_token_usage"))
            context = last.get("input_tokens") if isinstance(last.get("input_tokens"), int) else None  # cached included
            session.usage(number, time, context)
        elif kind == "event_msg" and starts_turn(rec):
            session.user_turns += 1
        elif kind == "response_item" and ptype in ("function_call", "custom_tool_call", "local_shell_call"):
            name = label(payload.get("name") or ptype)
            arguments = payload.get("arguments", payload.get("input"))
            key = name + " " + (arguments if isinstance(arguments, str) else canonical(arguments))
            ident = payload.get("call_id")
            call = ToolCall(ident if isinstance(ident, str) else None, name, _files(name, arguments), key, number, time)
            session.tool_calls.append(call)
            if isinstance(call.ident, str):
                calls[call.ident] = call
        elif kind == "response_item" and ptype in ("function_call_output", "custom_tool_call_output"):
            result_of = calls.get(label(payload.get("call_id")))
            if result_of is not None and _failed(payload.get("output")):
                result_of.failed = True
    return session


# The transcript's tail since a checkpoint (transcripts.recent.read_since): what a Codex rollout holds of it.
READ_ONLY = ("update_plan", "view_image", "read_file", "list_dir", "grep_files", "web_search")
SHELLS = ("exec_command", "shell", "local_shell_call", "container.exec", "shell_command")
CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def patch_files(text: str) -> list[str]:
    """The files a patch names (its Update/Add/Delete File and Move to headers), with str methods."""
    found = []
    for line in text.split("\n"):
        for prefix in ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "):
            if line.startswith(prefix) and line[len(prefix) :].strip():
                found.append(line[len(prefix) :].strip())
    return found


def _arguments(payload: dict[str, Any], loads: Callable[[str | bytes], Any]) -> Any:
    raw = payload.get("arguments", payload.get("input"))
    if isinstance(raw, str) and raw[:1] == "{":
        try:
            return loads(raw)
        except (ValueError, RecursionError):
            return raw
    return raw


def _command(name: str, args: Any, payload: dict[str, Any]) -> str | None:
    """A shell call's command: exec_command's cmd, shell's command list (a `bash -lc X` as X), local_shell_call's
    action.command."""
    value = obj(args).get("cmd", obj(args).get("command"))
    if name == "local_shell_call":
        value = obj(payload.get("action")).get("command")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) == 3 and value[1] in ("-lc", "-c"):
            return str(value[2])
        return " ".join(value)
    return value if isinstance(value, str) else None


def _outcome(output: Any, loads: Callable[[str | bytes], Any]) -> tuple[int | None, str]:
    """A call output's exit code (metadata.exit_code, else "Process exited with code N") and first error line."""
    text = output if isinstance(output, str) else ""
    if text[:1] == "{":
        try:
            data = obj(loads(text))
        except (ValueError, RecursionError):
            data = {}
        code = obj(data.get("metadata")).get("exit_code")
        inner = data.get("output")
        if isinstance(code, int) and not isinstance(code, bool):
            return code, exit_error(inner)[1] if isinstance(inner, str) and code != 0 else ""
    return exit_error(text)


class _Tail:
    """The Codex side of read_since (transcripts.model.Tail, through TAIL)."""

    @staticmethod
    def refused(raw: bytes) -> bool:
        return b'"token_count"' in raw and b'"event_msg"' in raw and raw.count(b'"type"') == 2

    @staticmethod
    def stamp(rec: dict[str, Any]) -> Any:
        return rec.get("timestamp")

    @staticmethod
    def names_other(head: list[dict[str, Any]], roots: tuple[str, ...]) -> bool:
        """Whether the rollout's session_meta names another project (none in its first records: another's too)."""
        for rec in head:
            if rec.get("type") == "session_meta":
                cwd = obj(rec.get("payload")).get("cwd")
                return not (isinstance(cwd, str) and named(cwd, roots))
        return True

    @staticmethod
    def version(head: list[dict[str, Any]]) -> str | None:
        for rec in head:
            if rec.get("type") == "session_meta":
                value = obj(rec.get("payload")).get("cli_version")
                return value if isinstance(value, str) else None
        return None

    TODO_MARKS: tuple[bytes, ...] = (b'"update_plan"',)  # a block holding none holds no task list

    @staticmethod
    def may_hold_todos(raw: bytes) -> bool:
        return b'"update_plan"' in raw

    @staticmethod
    def holds_todos(rec: dict[str, Any]) -> bool:
        """An update_plan call: it holds the whole plan."""
        payload = obj(rec.get("payload"))
        return payload.get("type") == "function_call" and payload.get("name") == "update_plan"

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
        calls: dict[str, tuple[str, Any, str | None]] = {}  # call_id: name, arguments, command
        running: dict[str, str] = {}  # a command still running (exec_command's session id): its command line
        for number, rec in before:
            _plan(recent, number, _arguments(obj(rec.get("payload")), loads), True)
        for number, rec in window:
            kind, payload = rec.get("type"), obj(rec.get("payload"))
            ptype = payload.get("type")
            ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
            _known(recent, kind, ptype)
            if kind == "event_msg" and ptype == "user_message" and isinstance(payload.get("message"), str):
                if payload["message"].strip():
                    recent.user.append(Msg(ts, number, payload["message"].strip()))
            elif kind == "event_msg" and ptype == "agent_message" and isinstance(payload.get("message"), str):
                recent.assistant = Msg(ts, number, payload["message"])
            elif kind == "event_msg" and ptype == "item_completed":  # Codex 0.171: the prompt and the answer
                _completed(recent, number, ts, payload)
            elif kind == "compacted" and ts is not None:
                recent.compacted_at.append(stamp(ts) or ts)
            elif kind == "response_item" and ptype in CALLS:
                _call(recent, number, payload, loads, calls, running)
            elif kind == "response_item" and ptype in OUTPUTS:
                call = calls.get(label(payload.get("call_id")))
                _output(recent, number, call, payload.get("output"), roots, loads, running)


def _call(
    recent: Recent,
    number: int,
    payload: dict[str, Any],
    loads: Callable[[str | bytes], Any],
    calls: dict[str, tuple[str, Any, str | None]],
    running: dict[str, str],
) -> None:
    """A tool call: counted, a plan read, a shell call's command kept for its output."""
    name = label(payload.get("name") or payload.get("type"))
    args = _arguments(payload, loads)
    recent.tool_calls += 1
    recent.changing_calls += name not in READ_ONLY
    if name not in KNOWN_TOOLS and "__" not in name:  # server__tool: an MCP server's, the user's own
        recent.unknown_one("tool:" + name)
    if name == "update_plan":
        _plan(recent, number, args, False)
    command = _command(name, args, payload) if name in SHELLS else None
    if name == "write_stdin":  # more input to a command still running: its outcome is that command's, unless
        chars = obj(args).get("chars")  # the agent stopped it itself (Ctrl-C): no failure of the command
        command = (
            None if isinstance(chars, str) and "\x03" in chars else running.get(label(obj(args).get("session_id")))
        )
    if isinstance(payload.get("call_id"), str):
        calls[payload["call_id"]] = (name, args, command)


def _completed(recent: Recent, number: int, ts: str | None, payload: dict[str, Any]) -> None:
    """A UserMessage item (the user's prompt, which 0.171 no longer records as user_message) or an AgentMessage
    item. The prompt's role-user response_item is not read: it shares that role with AGENTS.md's text."""
    user, agent = _item(payload, "UserMessage"), _item(payload, "AgentMessage")
    if user is not None and _item_text(user).strip():
        text = _item_text(user).strip()
        last = recent.user[-1] if recent.user else None
        if last is None or last.text != text or number - last.line > 3:  # not the user_message just read again
            recent.user.append(Msg(ts, number, text))
    elif agent is not None and _item_text(agent).strip():
        recent.assistant = Msg(ts, number, _item_text(agent))


def _output(
    recent: Recent,
    number: int,
    call: tuple[str, Any, str | None] | None,
    output: Any,
    roots: tuple[str, ...],
    loads: Callable[[str | bytes], Any],
    running: dict[str, str],
) -> None:
    if call is None:
        return
    name, args, command = call
    code, error = _outcome(output, loads)
    session = _running(output) if command is not None and code is None else None
    if session is not None:
        running[session] = command  # type: ignore[assignment]
    if name == "apply_patch" and code == 0:
        text = args if isinstance(args, str) else obj(args).get("input")
        for path in patch_files(text if isinstance(text, str) else ""):
            add_edit(recent, path, roots)
    elif command is not None and code is not None:
        if code != 0:
            recent.failed.append(Failed(name, command, code, error, number))
        else:
            later_ok(recent.failed, command)


_RUNNING = "Process running with session ID "


def _running(output: Any) -> str | None:
    """The session id of a command still running when exec_command returned (its later output comes to
    write_stdin calls that name it)."""
    text = output if isinstance(output, str) else ""
    at = text.find(_RUNNING, 0, 400)
    if at < 0:
        return None
    ident = text[at + len(_RUNNING) :].split("\n", 1)[0].strip()
    return ident if ident.isdigit() else None


# The names the reader knows: anything else is counted in Recent.unknown.
KNOWN_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
KNOWN_ITEMS: tuple[str, ...] = ("message", "reasoning", "function_call", "function_call_output", "custom_tool_call")
KNOWN_ITEMS += ("custom_tool_call_output", "local_shell_call", "web_search_call", "ghost_snapshot", "compaction")
KNOWN_EVENTS: tuple[str, ...] = ("token_count", "agent_message", "user_message", "agent_reasoning")
KNOWN_EVENTS += ("agent_reasoning_raw_content",)
KNOWN_EVENTS += ("task_started", "task_complete", "turn_aborted", "context_compacted", "web_search_begin")
KNOWN_EVENTS += ("web_search_end", "patch_apply_begin", "patch_apply_end", "exec_command_begin", "exec_command_end")
KNOWN_EVENTS += ("item_started", "item_completed", "turn_diff", "entered_review_mode", "exited_review_mode")
KNOWN_EVENTS += ("mcp_tool_call_begin", "mcp_tool_call_end", "view_image_tool_call", "plan_update", "error")
KNOWN_EVENTS += ("stream_error", "background_event", "agent_reasoning_section_break", "undo_started", "undo_completed")
KNOWN_TOOLS = (*READ_ONLY, *SHELLS, *EDIT_TOOLS, "write_stdin", "update_plan", "request_user_input", "spawn_agent")


def _known(recent: Recent, kind: Any, ptype: Any) -> None:
    """Counts a record type, or a response item's or event's type, that the reader does not know."""
    if kind not in KNOWN_TYPES:
        recent.unknown_one("type:" + label(kind))
    elif kind == "response_item" and ptype not in KNOWN_ITEMS:
        recent.unknown_one("type:response_item:" + label(ptype))
    elif kind == "event_msg" and ptype not in KNOWN_EVENTS:
        recent.unknown_one("type:event_msg:" + label(ptype))


def _plan(recent: Recent, number: int | None, args: Any, before: bool) -> None:
    plan = obj(args).get("plan")
    if isinstance(plan, list):
        items = [(label(p.get("step")), label(p.get("status"))) for p in plan if isinstance(p, dict)]
        recent.todos = Todos("update_plan", number, before, items)


TAIL = _Tail()


COMPACTION_LOOK_BACK = 8 << 20  # the bytes read back from a rollout's end for its last `compacted` line


def last_compaction(path: str) -> tuple[str, str] | None:
    """What stands for the summary of a rollout's last compaction, and where it was found: the `compacted` line's
    `message` when Codex wrote one ("message"), else the text of the last item of its `replacement_history` (the
    summary a local compaction leaves as a user message: "replacement_history"), else that item's canonical JSON (a
    remote compaction's item, whose summary is encrypted: "replacement_history item"). None when the last
    COMPACTION_LOOK_BACK bytes hold no such line, or the file cannot be read. Its hash is the compaction's
    fingerprint (Codex's PostCompact event carries no summary, unlike Claude Code's)."""
    read = 0
    try:
        for raw in lines_backwards(path):
            read += len(raw) + 1
            if read > COMPACTION_LOOK_BACK:
                return None
            if b'"compacted"' not in raw:
                continue
            try:
                rec = safejson.loads(raw)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("type") != "compacted":
                continue
            payload = obj(rec.get("payload"))
            message = payload.get("message")
            if isinstance(message, str) and message:
                return message, "message"
            history = payload.get("replacement_history")
            last = history[-1] if isinstance(history, list) and history else None
            if not isinstance(last, dict):
                return None
            text = _item_text(last) if last.get("type") == "message" else ""
            return (
                (text, "replacement_history") if text else (safejson.canonical_text(last), "replacement_history item")
            )
    except (OSError, ValueError):
        return None
    return None
