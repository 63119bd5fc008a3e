"""Transcript tails for the readers' tests: a bounded read_since, and files built from the records Claude Code
writes (a user message, a tool call, its result)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rehydrate import safejson
from rehydrate.transcripts.model import Recent
from rehydrate.transcripts.recent import read_since

BIG = 64 << 20


def read(path: Path, since: str | None = None, **kw: Any) -> Recent:
    kw.setdefault("max_bytes", BIG)
    return read_since(str(path), since, loads=safejson.loads, **kw)


def jsonl_file(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def user(ts: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "timestamp": ts, "message": {"content": content}, **extra}


def call(ts: str, ident: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": ident, "name": name, "input": tool_input}
    return {"type": "assistant", "timestamp": ts, "message": {"content": [block]}}


def result(ts: str, ident: str, text: str, error: bool = False, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": ident, "content": text, "is_error": error}
    return user(ts, [block], **extra)
