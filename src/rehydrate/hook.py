"""`rehydrate hook HARNESS`: answer a harness's hook call. Whatever happens, it exits 0 and says what it can.

A hook that fails or blocks breaks the agent's session (in Claude Code, exit 2 blocks), so every error becomes text
the agent can read: a reduced brief and the problem. Only the harness's stdin decides what happens; nothing here is
executed from it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys

from rehydrate import layout
from rehydrate.errors import RehydrateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_STDIN = 4 << 20
BRIEF_BUDGET = 9000  # Claude Code cuts a hook's output string at 10,000 characters
COMPACTED = (
    "A context compaction just happened: the conversation above is a lossy summary. The state below was read from "
    "disk and is the ground truth: where the summary and this disagree, trust this. Re-read it before acting."
)
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit", "write_file", "replace")  # Claude Code; Gemini CLI
SHELL_TOOLS = ("Bash", "run_shell_command")  # Claude Code and Codex; Gemini CLI
PATCH_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")  # Codex's apply_patch
CONFIG = "config.json"
GUARD_DECISIONS = ("ask", "deny", "warn")


class Answer:
    """What the hook prints, and its exit code (always 0 unless the user asked for blocking)."""

    def __init__(self, stdout: str = "", stderr: str = "", code: int = 0) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.code = code


def run(harness: str, raw: bytes) -> Answer:
    """Answer one hook call; never raises."""
    try:
        event = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
        if not isinstance(event, dict):
            raise ValueError("the hook's input is not a JSON object")
    except ValueError as e:
        return _reduced(None, f"rehydrate hook {harness}: could not read the hook's input ({e})")
    try:
        return _dispatch(harness, event)
    except Exception as e:  # a hook never breaks the harness, unless the user asked for that
        name = str(event.get("hook_event_name") or "")
        message = str(e) if isinstance(e, RehydrateError) else f"internal error ({type(e).__name__}: {e})"
        if _blocking(event):  # {"block_on_error": true} in state/config.json: exit 2, the harness's "stop"
            return Answer(stderr=f"rehydrate hook {harness}: {message}\n", code=2)
        if name == "SessionStart" or not name:
            return _reduced(event, f"rehydrate hook {harness}: {message}")
        return Answer(stderr=f"rehydrate hook {harness}: {message}\n")


def _blocking(event: dict[str, Any]) -> bool:
    try:
        from rehydrate.state import locate

        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        return _config(locate(None, cwd if cwd and os.path.isdir(cwd) else None)).get("block_on_error") is True
    except Exception:
        return False


def _dispatch(harness: str, event: dict[str, Any]) -> Answer:
    name = event.get("hook_event_name")
    if name == "SessionStart":
        return _session_start(harness, event)
    if name in ("PreCompact", "PreCompress"):
        return _record_compaction(event, "pre")
    if name == "PostCompact":
        return _record_compaction(event, "post")
    if name in ("PreToolUse", "BeforeTool"):
        return _guard(harness, event)
    if name == "BeforeAgent":
        return _after_compression(event)
    if name == "Stop":
        return _stop(event)
    return Answer()  # an event this version does not handle: nothing to say


def _open(event: dict[str, Any] | None) -> Any:
    from rehydrate.state import State, locate

    cwd = event.get("cwd") if event else None
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    return State.open(locate(None, start))


def _context(event_name: str, text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}})


def _session_start(harness: str, event: dict[str, Any]) -> Answer:
    preface = COMPACTED if event.get("source") == "compact" else None
    state = _open(event)
    result = state.resume(BRIEF_BUDGET, preface=preface)
    return Answer(stdout=_context("SessionStart", result.text))


def _after_compression(event: dict[str, Any]) -> Answer:
    """Gemini CLI has no start event after a compression: BeforeAgent injects the brief once after a recorded one."""
    from rehydrate import wal

    state = _open(event)
    tail = wal.read_tail(state.wal_path, 64)
    last_compaction = last_resume = 0
    for _, rec in tail.records:
        if rec["op"] == "compaction":
            last_compaction = rec["seq"]
        elif rec["op"] == "resume":
            last_resume = rec["seq"]
    if last_compaction <= last_resume:
        return Answer()
    result = state.resume(BRIEF_BUDGET, preface=COMPACTED)
    return Answer(stdout=_context("BeforeAgent", result.text))


def _reduced(event: dict[str, Any] | None, problem: str) -> Answer:
    """The brief as far as the files can be read, and the problem, as SessionStart context."""
    from rehydrate.state import locate, reduced_brief, resolve_actor

    cwd = event.get("cwd") if event else None
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    try:
        root = locate(None, start)
        if not os.path.isdir(root):
            where = start or os.getcwd()
            text = f"{problem}\n(no state folder found from {where}: `rehydrate init --goal ...` creates one)"
        else:
            preface = COMPACTED if event and event.get("source") == "compact" else None
            text = reduced_brief(root, resolve_actor(None), problem, BRIEF_BUDGET - 200)
            if preface:
                text = preface + "\n\n" + text
    except Exception as e:
        text = f"{problem}\n(and the state could not be read: {type(e).__name__}: {e})"
    return Answer(stdout=_context("SessionStart", text[:BRIEF_BUDGET]), stderr=problem + "\n")


def _record_compaction(event: dict[str, Any], phase: str) -> Answer:
    data: dict[str, Any] = {"phase": phase}
    for key in ("trigger", "session_id", "transcript_path"):
        if isinstance(event.get(key), str):
            data[key] = layout.clean(event[key], one_line=True)[:1000]
    summary = event.get("compact_summary")
    if isinstance(summary, str):  # its length and hash, never its text
        from rehydrate import wal

        data["summary_chars"] = len(summary)
        data["summary_sha256"] = wal.sha256(summary.encode("utf-8", "replace"))
    instructions = event.get("custom_instructions")
    if isinstance(instructions, str) and instructions:
        data["custom_instructions_chars"] = len(instructions)
    _open(event).record("compaction", data)
    return Answer()


def _stop(event: dict[str, Any]) -> Answer:
    """Never blocks. With `stop_reminder_after: N` in state/config.json, reminds the agent to checkpoint when the
    transcript shows N tool calls or more since the last checkpoint."""
    from rehydrate import wal
    from rehydrate.state import locate

    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    root = locate(None, cwd if cwd and os.path.isdir(cwd) else None)
    limit = _config(root).get("stop_reminder_after")
    transcript = event.get("transcript_path")
    if not isinstance(limit, int) or limit < 1 or not isinstance(transcript, str):
        return Answer()
    state = _open(event)
    since = ""
    for _, rec in wal.read_tail(state.wal_path, 256).records:
        if rec["op"] == "checkpoint":
            since = rec["ts"]
    calls = tool_calls_since(transcript, since)
    if calls < limit:
        return Answer()
    what = f"since the last checkpoint ({since[:16]}Z)" if since else "and no checkpoint in the WAL's recent records"
    text = (
        f"rehydrate: {calls} tool calls {what}. Before you stop, record where you are: "
        "rehydrate checkpoint --done 'WHAT' --next 'NEXT ACTION'"
    )
    return Answer(
        stdout=json.dumps(
            {"systemMessage": text, "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": text}}
        )
    )


def tool_calls_since(transcript: str, since: str) -> int:
    """Tool calls in a Claude Code transcript's assistant records stamped after `since`, read from the end."""
    from rehydrate import transcripts

    count = 0
    try:
        for rec in transcripts.newer_than(transcript, since):
            message = rec.get("message")
            content = message.get("content") if rec.get("type") == "assistant" and isinstance(message, dict) else None
            if isinstance(content, list):
                count += sum(1 for block in content if isinstance(block, dict) and block.get("type") == "tool_use")
    except OSError:
        return 0
    return count


def rejected_guards(invariants: str) -> list[tuple[str, str]]:
    """(guard pattern, the whole line) for each rejected approach in 10_invariants.md that names a guard."""
    out = []
    for line in invariants.split("\n"):
        ident = layout.entry_id(line)
        if ident and ident.startswith("R-") and " guard: " in line:
            guard = line.rsplit(" guard: ", 1)[1].strip()
            if guard:
                out.append((guard, line))
    return out


def matches(guard: str, path: str | None, rel_path: str | None, command: str | None) -> bool:
    """A guard is a path glob or a command pattern: it matches a target path, a command, or a word of it."""
    for target in (path, rel_path):
        if target and (fnmatch.fnmatchcase(target, guard) or fnmatch.fnmatchcase(os.path.basename(target), guard)):
            return True
    if command:
        if guard in command or fnmatch.fnmatchcase(command, guard):
            return True
        return any(fnmatch.fnmatchcase(word.strip("'\""), guard) for word in command.split())
    return False


def _config(root: str) -> dict[str, Any]:
    try:
        with open(os.path.join(root, CONFIG), encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _targets(tool: object, tool_input: dict[str, Any]) -> tuple[list[str], str | None]:
    """The paths a tool call edits and the command it runs, from the harness's tool input."""
    if tool in EDIT_TOOLS:
        target = tool_input.get("file_path") or tool_input.get("notebook_path")
        return ([target] if isinstance(target, str) else []), None
    command = tool_input.get("command")
    if not isinstance(command, str):
        return [], None
    if tool == "apply_patch":
        paths = [ln[len(h) :].strip() for ln in command.split("\n") for h in PATCH_HEADERS if ln.startswith(h)]
        return paths, None
    if tool in SHELL_TOOLS:
        return [], command
    return [], None


def _guard(harness: str, event: dict[str, Any]) -> Answer:
    """Before a tool runs: an edit or command that matches a rejected approach's guard gets the configured decision."""
    from rehydrate.state import locate

    tool = event.get("tool_name")
    tool_input = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    assert isinstance(tool_input, dict)
    paths, command = _targets(tool, tool_input)
    if not paths and command is None:
        return Answer()
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    root = locate(None, cwd if cwd and os.path.isdir(cwd) else None)
    from rehydrate import fsio

    try:
        data = fsio.read_bytes(os.path.join(root, layout.INVARIANTS), 4 << 20)
    except RehydrateError:
        return Answer()
    if not data:
        return Answer()
    project = os.path.dirname(root)
    guards = rejected_guards(data.decode("utf-8", "replace"))
    hits: list[str] = []
    what = f"the command {command!r}"[:300]
    for path in paths or [""]:
        absolute = os.path.normpath(os.path.join(cwd or project, path)) if path else None
        rel = os.path.relpath(absolute, project) if absolute else None
        found = [line for guard, line in guards if matches(guard, absolute, rel, command) and line not in hits]
        if found and rel:
            what = f"{tool} on {rel}"
        hits += found
    if not hits:
        return Answer()
    decision = _config(root).get("guard", "ask")
    if decision not in GUARD_DECISIONS:
        decision = "ask"
    quoted = "\n".join(layout.clean(h, one_line=True)[:600] for h in hits[:5])
    reason = (
        f"rehydrate: {what} matches an approach rejected in {os.path.basename(root)}/{layout.INVARIANTS}:\n{quoted}\n"
        "A rejected approach stays rejected: do not retry it unless the human says the reason no longer holds."
    )
    return Answer(stdout=json.dumps(_decision(harness, str(event.get("hook_event_name")), decision, reason)))


def _decision(harness: str, event_name: str, decision: str, reason: str) -> dict[str, Any]:
    """The harness's way of saying deny, ask or warn. Codex and Gemini CLI have no `ask`: it becomes a warning."""
    warn = {"systemMessage": reason, "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": reason}}
    if harness == "gemini":
        return {"decision": "deny", "reason": reason} if decision == "deny" else {"systemMessage": reason}
    if decision == "warn" or (decision == "ask" and harness == "codex"):
        return warn
    return {
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def main(harness: str) -> int:
    raw = sys.stdin.buffer.read(MAX_STDIN) if sys.stdin is not None else b""
    answer = run(harness, raw)
    if answer.stdout:
        sys.stdout.write(answer.stdout if answer.stdout.endswith("\n") else answer.stdout + "\n")
    if answer.stderr:
        sys.stderr.write(answer.stderr)
    return answer.code
