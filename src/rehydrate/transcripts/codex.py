"""Codex CLI rollouts: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl; its home folder and the tools that
edit files, named here once (the harness's module takes them from here)."""

from __future__ import annotations

import os
import re

from rehydrate.transcripts import Compaction, Session, ToolCall, canonical, label, loads, obj, records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.MULTILINE)
EXIT_CODE = re.compile(r"(?:Process exited with code|exit code:?) (-?\d+)", re.IGNORECASE)
EDIT_TOOLS = ("apply_patch",)


def home(env: Mapping[str, str] | None = None) -> str:
    """Codex CLI's user folder: $CODEX_HOME, else ~/.codex. env: the environment to read it from
    (None: this process's; a given one without HOME gives a relative path, which its caller refuses)."""
    if env is None:
        return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return env.get("CODEX_HOME") or os.path.join(env.get("HOME") or "", ".codex")


def starts_turn(rec: dict[str, Any]) -> bool:
    payload = obj(rec.get("payload"))
    return rec.get("type") == "event_msg" and payload.get("type") == "user_message"


def _files(name: str, arguments: Any) -> list[str]:
    text = arguments if isinstance(arguments, str) else ""
    if name == "apply_patch" or "*** Begin Patch" in text:
        return [a or b for a, b in PATCH_FILE.findall(text)]
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
    m = EXIT_CODE.search(text)
    return bool(m and int(m.group(1)) != 0)


def read(path: str) -> Session:
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
        elif kind == "event_msg" and ptype == "user_message":
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
