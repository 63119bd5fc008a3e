"""Gemini CLI's hook called as Gemini CLI calls it, and what the calls left in the state: shared by the tests of its
module (test_gemini.py) and of the model request's brief (compaction/test_request.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import hook_answer, hook_event
from rehydrate.store.state import State

SESSION = "8e4f2a1c-6b9d-4c3e-a7f0-5d2b8c1e9a46"  # the fixtures' session


def gemini(repo: Path, name: str) -> tuple[int, dict[str, Any] | None, str]:
    """`rehydrate hook gemini` in repo, given the documented input `name` (tests/fixtures/hooks/gemini/)."""
    return hook_answer("gemini", hook_event(repo, "gemini", name), repo)


def ops(state: State) -> list[str]:
    return [json.loads(x)["op"] for x in Path(state.wal_path).read_text().splitlines()]


def noted(repo: Path) -> list[dict[str, Any]]:
    """The worktree journal's records (store/local/journal.py): where PreCompress's notes go, never the committed
    log."""
    journal = repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"
    return [json.loads(x) for x in journal.read_text().splitlines()] if journal.exists() else []


def carried(out: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The messages a BeforeModel answer gives back (its llm_request's)."""
    assert out is not None
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeModel"
    request = out["hookSpecificOutput"]["llm_request"]
    assert set(request) == {"messages"}  # neither model nor config: those would replace the request's
    messages: list[dict[str, Any]] = request["messages"]
    return messages
