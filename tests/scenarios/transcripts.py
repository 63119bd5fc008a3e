"""Real-shaped transcripts of Claude Code, Codex CLI and Gemini CLI, written where each harness writes them.

Each builder writes one file under a temporary HOME, in its harness's own layout (shared HARNESSES.md):
- Claude Code: `~/.claude/projects/<slug>/<session-id>.jsonl` (`CLAUDE_CONFIG_DIR` replaces `~/.claude`; the slug is
  the working directory with every character outside `[A-Za-z0-9-]` replaced by `-`);
- Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<uuid>.jsonl` (`CODEX_HOME` replaces
  `~/.codex`), each line `{"timestamp", "type", "payload"}`;
- Gemini CLI 0.61: `~/.gemini/tmp/<project>/chats/session-YYYY-MM-DDTHH-MM-<id8>.jsonl`, a metadata line, then
  messages (re-appended with the same id when they change: the last wins), `{"$set": ...}` and `{"$rewindTo": id}`.

The record shapes are those of the real files in the shared fixtures (claude-code-2.1.39-manual-compact.jsonl,
codex-0.89.0-exec.jsonl; their NOTICE.md names their origin and licence) and of the pinned CLIs (TodoWrite,
TaskCreate, update_plan, write_todos). Every method appends one or more lines at once and returns the 1-based line
number of the record that matters (the tool call, the message), so that a test can name it. Stamps come from the
builder's clock (`at`, advanced one second per record) unless given: a test places records before or after a
checkpoint with `stamp(checkpoint_ts, seconds)`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from conftest import REAL_TRANSCRIPTS

CLAUDE_FIXTURE = "claude-code-2.1.39-manual-compact.jsonl"


def stamp(base: str, seconds: float) -> str:
    """base (an ISO 8601 UTC stamp, as records carry it) moved by seconds, as `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    when = dt.datetime.fromisoformat(base.replace("Z", "+00:00")) + dt.timedelta(seconds=seconds)
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def claude_slug(cwd: Path | str) -> str:
    """Claude Code's project folder name for a working directory."""
    return "".join(c if c.isascii() and (c.isalnum() or c == "-") else "-" for c in str(cwd))


def gemini_hash(root: Path | str) -> str:
    """Gemini CLI's projectHash: the sha256 of the project root, in hex."""
    return hashlib.sha256(str(root).encode()).hexdigest()


class _Builder:
    path: Path

    def __init__(self, start: str) -> None:
        self.clock = start
        self.lines = 0

    def at(self, ts: str) -> _Builder:
        """The next record's stamp (then one second more per record)."""
        self.clock = ts
        return self

    def _ts(self, ts: str | None) -> str:
        if ts is not None:
            self.clock = ts
        now = self.clock
        self.clock = stamp(now, 1)
        return now

    def raw(self, line: bytes | str) -> int:
        """A line as it is (a torn or hostile line, a line from a real file); its line number."""
        data = line.encode() if isinstance(line, str) else line
        with self.path.open("ab") as f:
            f.write(data.rstrip(b"\n") + b"\n")
        self.lines += 1
        return self.lines

    def _add(self, record: dict[str, Any]) -> int:
        return self.raw(json.dumps(record, ensure_ascii=False, separators=(",", ":")))


# ------------------------------------------------------------------------------------------------ Claude Code


class Claude(_Builder):
    """A Claude Code session file: ~/.claude/projects/<slug(cwd)>/<session>.jsonl (or under config_dir)."""

    def __init__(
        self,
        home: Path,
        cwd: Path,
        *,
        start: str = "2026-11-29T22:00:00.000Z",
        session: str | None = None,
        config_dir: Path | None = None,
        version: str = "2.1.39",
    ) -> None:
        super().__init__(start)
        self.cwd = str(cwd)
        self.session = session or str(uuid.uuid4())
        self.version = version
        folder = (config_dir or home / ".claude") / "projects" / claude_slug(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{self.session}.jsonl"
        self.path.touch()
        self._parent: str | None = None

    def _base(self, kind: str, ts: str | None, **fields: Any) -> dict[str, Any]:
        me = str(uuid.uuid4())
        rec: dict[str, Any] = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": self.version,
            "gitBranch": "main",
            "type": kind,
            **fields,
            "uuid": me,
            "timestamp": self._ts(ts),
        }
        self._parent = me
        return rec

    def user(self, text: str, ts: str | None = None, *, todos: list[Any] | None = None) -> int:
        """A prompt the user typed (2.1.39 l.7 shape; `todos` is the field that line carries)."""
        fields: dict[str, Any] = {"message": {"role": "user", "content": text}}
        if todos is not None:
            fields.update(thinkingMetadata={"maxThinkingTokens": 31999}, todos=todos, permissionMode="default")
        return self._add(self._base("user", ts, **fields))

    def assistant(self, content: list[dict[str, Any]], ts: str | None = None) -> int:
        message = {
            "model": "claude-sonnet-4-5",
            "id": "msg_" + uuid.uuid4().hex[:24],
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }
        return self._add(self._base("assistant", ts, message=message, requestId="req_" + uuid.uuid4().hex[:24]))

    def assistant_text(self, text: str, ts: str | None = None) -> int:
        """The assistant's words (2.1.39 l.1473 shape)."""
        return self.assistant([{"type": "text", "text": text}], ts)

    def tool_use(self, name: str, tool_input: dict[str, Any], ts: str | None = None) -> tuple[int, str]:
        """An assistant tool call: (its line, its tool_use id)."""
        tid = "toolu_" + uuid.uuid4().hex[:24]
        return self.assistant([{"type": "tool_use", "id": tid, "name": name, "input": tool_input}], ts), tid

    def tool_result(
        self, tid: str, content: str, *, is_error: bool = False, result: Any = None, ts: str | None = None
    ) -> int:
        """The tool's answer, in a user record (l.259, l.661 shapes; `toolUseResult` as given, else the content)."""
        block: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        extra = result if result is not None else (f"Error: {content}" if is_error else content)
        rec = self._base("user", ts, message={"role": "user", "content": [block]}, toolUseResult=extra)
        return self._add(rec)

    def call(self, name: str, tool_input: dict[str, Any], output: str = "", *, is_error: bool = False) -> int:
        """A tool call and its result: the call's line."""
        line, tid = self.tool_use(name, tool_input)
        self.tool_result(tid, output, is_error=is_error)
        return line

    def edit(self, path: str, *, ok: bool = True) -> int:
        """An Edit of path (l.129/l.140); ok False: the l.258/l.259 failure ("String to replace not found")."""
        line, tid = self.tool_use(
            "Edit", {"replace_all": False, "file_path": path, "old_string": "a", "new_string": "b"}
        )
        if ok:
            result = {
                "filePath": path,
                "oldString": "a",
                "newString": "b",
                "originalFile": "a\n",
                "structuredPatch": [],
            }
            self.tool_result(tid, f"The file {path} has been updated.", result=result)
        else:
            self.tool_result(
                tid, "<tool_use_error>String to replace not found in file.</tool_use_error>", is_error=True
            )
        return line

    def write(self, path: str, content: str = "x = 1\n") -> int:
        """A Write of path (l.152)."""
        return self.call("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}")

    def bash(self, command: str, output: str = "", *, exit_code: int = 0) -> int:
        """A Bash call; a failure as Claude Code records it: is_error and "Exit code N" first (l.916)."""
        if exit_code:
            return self.call("Bash", {"command": command}, f"Exit code {exit_code}\n{output}", is_error=True)
        return self.call("Bash", {"command": command, "description": "run"}, output)

    def todo_write(self, items: list[tuple[str, str]]) -> int:
        """The TodoWrite tool: `{"todos": [{"content", "status", "activeForm"}]}`."""
        todos = [{"content": c, "status": s, "activeForm": c} for c, s in items]
        return self.call("TodoWrite", {"todos": todos}, "Todos have been modified successfully.")

    def task_create(self, subject: str, description: str = "") -> int:
        """The TaskCreate tool of newer versions (`CLAUDE_CODE_ENABLE_TASKS`)."""
        return self.call("TaskCreate", {"subject": subject, "description": description or subject}, "Task created")

    def task_update(self, task_id: str, status: str) -> int:
        return self.call("TaskUpdate", {"taskId": task_id, "status": status}, "Task updated")

    def compact_boundary(self, trigger: str = "auto", ts: str | None = None, pre_tokens: int = 170251) -> int:
        """A compaction (l.1481), then the summary record (l.1482): the boundary's line."""
        line = self._add(
            self._base(
                "system",
                ts,
                subtype="compact_boundary",
                content="Conversation compacted",
                isMeta=False,
                level="info",
                compactMetadata={"trigger": trigger, "preTokens": pre_tokens},
            )
        )
        summary = "This session is being continued from a previous conversation that ran out of context."
        self._add(self._base("user", None, message={"role": "user", "content": summary}, isCompactSummary=True))
        return line

    def meta_command(self, ts: str | None = None) -> int:
        """What `/compact` typed by hand leaves (l.1483-1485): the caveat, the command, its stdout with raw ANSI
        escapes. None of them is a prompt. The first line's number."""
        caveat = "<local-command-caveat>Caveat: The messages below were generated by the user while running local "
        line = self._add(
            self._base(
                "user",
                ts,
                message={"role": "user", "content": caveat + "commands.</local-command-caveat>"},
                isMeta=True,
            )
        )
        command = "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args>"
        self._add(self._base("user", None, message={"role": "user", "content": command + "</command-args>"}))
        out = "<local-command-stdout>\x1b[2mCompacted (ctrl+o to see full summary)\x1b[22m</local-command-stdout>"
        self._add(self._base("user", None, message={"role": "user", "content": out}))
        return line

    def hook_context(self, text: str, ts: str | None = None) -> int:
        """Our own brief echoed back as Claude Code records a SessionStart hook's context: a `<system-reminder>`."""
        content = f"<system-reminder>\nSessionStart hook additional context: {text}\n</system-reminder>"
        return self._add(self._base("user", ts, message={"role": "user", "content": content}, isMeta=True))

    def progress(self, ts: str | None = None, size: int = 200) -> int:
        """A hook progress record (most of the 2.1.39 file): nothing a recovery uses."""
        data = {
            "type": "hook_progress",
            "hookEvent": "PreToolUse",
            "hookName": "PreToolUse:Bash",
            "command": "x" * size,
        }
        return self._add(self._base("progress", ts, data=data, toolUseID="toolu_x", parentToolUseID="toolu_x"))

    def noise_from_fixture(self, n: int, before_ts: str) -> int:
        """The first n lines of the real 2.1.39 file (progress records, snapshots, tool traffic, prompts), made this
        session's (cwd, sessionId) and stamped one millisecond apart, the last at before_ts; the last line's number.
        The file is read in place (conftest.REAL_TRANSCRIPTS): a test using it is marked needs_real_transcripts()."""
        with (REAL_TRANSCRIPTS / CLAUDE_FIXTURE).open("rb") as f:
            raw = [next(f) for _ in range(n)]
        for i, line in enumerate(raw):
            rec = json.loads(line)
            if "cwd" in rec:
                rec["cwd"] = self.cwd
            if "sessionId" in rec:
                rec["sessionId"] = self.session
            if "timestamp" in rec:
                rec["timestamp"] = stamp(before_ts, (i - len(raw) + 1) / 1000)
            self._add(rec)
        return self.lines


# ------------------------------------------------------------------------------------------------ Codex CLI


class Codex(_Builder):
    """A Codex rollout: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl (or under codex_home), its first
    line the session_meta naming cwd."""

    def __init__(
        self,
        home: Path,
        cwd: Path,
        *,
        start: str = "2026-11-29T22:00:00.000Z",
        session: str | None = None,
        codex_home: Path | None = None,
        version: str = "0.171.0",
    ) -> None:
        super().__init__(start)
        self.session = session or str(uuid.uuid4())
        day = start[:10].replace("-", "/")
        folder = (codex_home or home / ".codex") / "sessions" / day
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"rollout-{start[:19].replace(':', '-')}-{self.session}.jsonl"
        self.path.touch()
        meta: dict[str, Any] = {"id": self.session, "timestamp": start, "cwd": str(cwd), "originator": "codex_exec"}
        meta.update(cli_version=version, source="exec", model_provider="mock", base_instructions={"text": "Codex"})
        self._line("session_meta", meta)
        self._line("response_item", _codex_msg("user", "# AGENTS.md instructions\n\nkeep it short"))
        self._line("response_item", _codex_msg("user", "<environment_context>\n  <cwd>" + str(cwd) + "</cwd>"))

    def _line(self, kind: str, payload: dict[str, Any], ts: str | None = None) -> int:
        return self._add({"timestamp": self._ts(ts), "type": kind, "payload": payload})

    def user_message(self, text: str, ts: str | None = None) -> int:
        """The prompt (l.6): an event_msg user_message, with its response_item twin."""
        self._line("response_item", _codex_msg("user", text), ts)
        return self._line("event_msg", {"type": "user_message", "message": text, "images": [], "local_images": []})

    def agent_message(self, text: str, ts: str | None = None) -> int:
        """The assistant's words (l.36 and l.37): the event_msg's line."""
        line = self._line("event_msg", {"type": "agent_message", "message": text}, ts)
        self._line("response_item", _codex_msg("assistant", text, "output_text"))
        return line

    def function_call(self, name: str, arguments: dict[str, Any], ts: str | None = None) -> tuple[int, str]:
        cid = "call_" + uuid.uuid4().hex[:24]
        payload = {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": cid}
        return self._line("response_item", payload, ts), cid

    def function_call_output(self, cid: str, output: str) -> int:
        return self._line("response_item", {"type": "function_call_output", "call_id": cid, "output": output})

    def exec_command(self, cmd: str, *, exit_code: int = 0, output: str = "") -> int:
        """exec_command (l.11) and its output "Process exited with code N" (l.13)."""
        line, cid = self.function_call("exec_command", {"cmd": cmd})
        text = f"Chunk ID: dd6d89\nWall time: 0.0510 seconds\nProcess exited with code {exit_code}\n"
        self.function_call_output(cid, text + f"Original token count: 0\nOutput:\n{output}")
        return line

    def shell(self, command: list[str], *, exit_code: int = 0, output: str = "") -> int:
        """The older `shell` tool: `command` an argv, output JSON with metadata.exit_code."""
        line, cid = self.function_call("shell", {"command": command, "workdir": "."})
        meta = {"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": 0.1}}
        self.function_call_output(cid, json.dumps(meta))
        return line

    def apply_patch(self, files: list[str], *, exit_code: int = 0, add: bool = False) -> int:
        """apply_patch as a custom tool call (l.24) and its output with metadata.exit_code (l.26)."""
        verb = "Add" if add else "Update"
        body = "".join(f"*** {verb} File: {f}\n@@\n-a\n+b\n" for f in files)
        cid = "call_" + uuid.uuid4().hex[:24]
        payload = {"type": "custom_tool_call", "status": "completed", "call_id": cid, "name": "apply_patch"}
        line = self._line("response_item", {**payload, "input": f"*** Begin Patch\n{body}*** End Patch"})
        done = "Success. Updated the following files:\n" + "".join(f"M {f}\n" for f in files)
        out = {"output": done if not exit_code else "patch failed", "metadata": {"exit_code": exit_code}}
        self._line("response_item", {"type": "custom_tool_call_output", "call_id": cid, "output": json.dumps(out)})
        return line

    def update_plan(self, plan: list[tuple[str, str]], explanation: str | None = None) -> int:
        """update_plan: `{"explanation"?, "plan": [{"step", "status"}]}`."""
        args: dict[str, Any] = {"plan": [{"step": s, "status": st} for s, st in plan]}
        if explanation is not None:
            args["explanation"] = explanation
        line, cid = self.function_call("update_plan", args)
        self.function_call_output(cid, "Plan updated")
        return line

    def compacted(self, ts: str | None = None) -> int:
        """A compaction: a `compacted` line with its replacement history, then event_msg context_compacted."""
        line = self._line("compacted", {"message": "", "replacement_history": []}, ts)
        self._line("event_msg", {"type": "context_compacted"})
        return line


def _codex_msg(role: str, text: str, kind: str = "input_text") -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


# ------------------------------------------------------------------------------------------------ Gemini CLI


class Gemini(_Builder):
    """A Gemini CLI 0.61 chat file: ~/.gemini/tmp/<folder>/chats/session-<time>-<id8>.jsonl. folder: the project's
    identifier (its short name by default, as the hook fixtures show), root: the project root (projectHash)."""

    def __init__(
        self,
        home: Path,
        root: Path,
        *,
        start: str = "2026-11-29T22:00:00.000Z",
        session: str | None = None,
        folder: str | None = None,
    ) -> None:
        super().__init__(start)
        self.session = session or str(uuid.uuid4())
        chats = home / ".gemini" / "tmp" / (folder or Path(root).name) / "chats"
        chats.mkdir(parents=True, exist_ok=True)
        self.path = chats / f"session-{start[:16].replace(':', '-')}-{self.session[:8]}.jsonl"
        self.path.touch()
        self.root = str(root)
        meta = {"sessionId": self.session, "projectHash": gemini_hash(root), "startTime": start}
        self._add({**meta, "lastUpdated": start, "kind": "main"})

    def _message(self, kind: str, content: Any, ts: str | None, mid: str | None = None, **extra: Any) -> int:
        rec = {"id": mid or str(uuid.uuid4()), "timestamp": self._ts(ts), "type": kind, "content": content, **extra}
        return self._add(rec)

    def user(self, text: str, ts: str | None = None, *, hook_context: str | None = None) -> int:
        """A prompt; with hook_context, our own brief before it in the same part, as `-p` mode sends it."""
        if hook_context is not None:
            text = f"<hook_context>{hook_context}</hook_context>\n\n{text}"
        return self._message("user", [{"text": text}], ts)

    def gemini(
        self,
        text: str = "",
        tool_calls: list[dict[str, Any]] | None = None,
        ts: str | None = None,
        mid: str | None = None,
    ) -> int:
        """A model message (its tool calls as `tool_call` builds them); the same mid again: re-appended, last wins."""
        extra: dict[str, Any] = {"thoughts": [], "model": "gemini-2.5-pro"}
        if tool_calls is not None:
            extra["toolCalls"] = tool_calls
        return self._message("gemini", text, ts, mid, **extra)

    def tool_call(
        self, name: str, args: dict[str, Any], *, status: str = "success", output: str = ""
    ) -> dict[str, Any]:
        cid = f"{name}-{uuid.uuid4().hex[:12]}"
        response = {"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}
        return {
            "id": cid,
            "name": name,
            "args": args,
            "result": [response],
            "status": status,
            "timestamp": self.clock,
            "displayName": name,
        }

    def write_file(self, path: str, *, ok: bool = True) -> int:
        call = self.tool_call(
            "write_file", {"file_path": path, "content": "x = 1\n"}, status="success" if ok else "error"
        )
        return self.gemini("", [call])

    def run_shell(self, command: str, *, exit_code: int = 0) -> int:
        status = "error" if exit_code else "success"
        call = self.tool_call(
            "run_shell_command", {"command": command}, status=status, output=f"Exit Code: {exit_code}"
        )
        return self.gemini("", [call])

    def write_todos(self, items: list[tuple[str, str]]) -> int:
        todos = [{"description": d, "status": s} for d, s in items]
        return self.gemini("", [self.tool_call("write_todos", {"todos": todos})])

    def set_(self, **fields: Any) -> int:
        return self._add({"$set": fields})

    def rewind(self, mid: str) -> int:
        return self._add({"$rewindTo": mid})
