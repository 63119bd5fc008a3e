"""`rehydrate mcp`, started as a subprocess and driven over stdio by the official SDK's own client."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from rehydrate.store.state import State

mcp = pytest.importorskip("mcp")  # the test extra installs it; the hook path never imports it

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def _drive(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[Any]]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "rehydrate", "mcp"], env=dict(os.environ), cwd=str(cwd)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = sorted(t.name for t in (await session.list_tools()).tools)
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def test_every_tool_works_over_stdio(repo: Path, state: State) -> None:
    calls = [
        ("resume", {}),
        ("invariant", {"text": "Talk MCP over stdio", "because": "the harness starts the server"}),
        ("reject", {"approach": "An HTTP server", "because": "nothing to bind", "guard": "server.py"}),
        ("checkpoint", {"done": "wired the server", "next": "test it", "claims": [{"text": "it starts"}]}),
        ("handoff", {"text": "The MCP server works."}),
        ("verify", {}),
        ("status", {}),
        ("recover", {}),
        ("log", {"grep": "STDIO"}),
        ("log", {"op": "checkpoint"}),
    ]
    tools, results = asyncio.run(_drive(repo, calls))
    assert tools == [
        *("checkpoint", "handoff", "invariant", "log", "recover", "reject", "resume", "status", "verify", "withdraw")
    ]
    assert not any(r.is_error for r in results), [_text(r) for r in results]
    assert "Ship the parser" in _text(results[0]) and "confidence: recovered" in _text(results[0])
    assert json.loads(_text(results[1]))["id"].startswith("D-")
    assert json.loads(_text(results[3]))["claims"] == [{"text": "it starts"}]
    assert "claim: it starts (no receipt: unverified)" in Path(state.path("99_next.md")).read_text()
    assert json.loads(_text(results[5]))["ok"] is True
    assert json.loads(_text(results[6]))["next"]["next"] == "test it"
    assert Path(state.path("20_handoff.md")).read_text() == "The MCP server works.\n"
    assert state.verify().ok
    ledger = json.loads(_text(results[7]))
    assert "recovered" in ledger and ledger["checks"] and "confidence" in ledger, ledger
    grep = json.loads(_text(results[8]))  # any case, every record's data
    assert [r["op"] for r in grep["records"]] == ["invariant"] and grep["left_out"] == 0
    assert {r["op"] for r in json.loads(_text(results[9]))["records"]} == {"checkpoint"}


def test_entries_are_superseded_and_withdrawn_over_stdio(repo: Path, state: State) -> None:
    """A rejected approach superseded by a decision and a decision withdrawn, by the model through the tools: the
    brief it reads next shows only what is in force, and taking an entry out twice is said in the tool's words."""
    mistaken = state.invariant("Vendor the parser", "one less dependency").record["data"]["id"]
    ruled_out = state.reject("Use the C parser", "no compiler on CI", guard="*cparser*").record["data"]["id"]
    calls = [
        ("invariant", {"text": "Use the C parser", "because": "CI has a compiler now", "supersedes": ruled_out}),
        ("withdraw", {"id": mistaken, "because": "recorded by mistake"}),
        ("withdraw", {"id": mistaken, "because": "again"}),
        ("reject", {"approach": "x", "because": "y", "supersedes": "R-000000"}),
        ("resume", {}),
    ]
    _, results = asyncio.run(_drive(repo, calls))
    new = json.loads(_text(results[0]))
    assert f"decision, superseding {ruled_out}: Use the C parser" in new["line"]
    assert json.loads(_text(results[1]))["line"].endswith(f"withdrawn: {mistaken} because: recorded by mistake")
    assert results[2].is_error and f"{mistaken} is no longer in force" in _text(results[2])
    assert results[3].is_error and "no entry R-000000" in _text(results[3])
    brief = _text(results[4])
    assert new["id"] in brief and "Vendor the parser" not in brief and "no compiler on CI" not in brief
    assert f"(no longer in force): {ruled_out}, {mistaken} (state/10_invariants.md)" in brief
    assert state.verify().ok


def test_argument_errors_are_said_in_the_tool_s_words(repo: Path, state: State) -> None:
    """pydantic's report (and its link) was what the model read; now: which argument, what it must be, and the
    tool's arguments. A mistyped op for the log names the closest."""
    calls = [
        ("checkpoint", {"done": "x"}),
        ("resume", {"budget": "lots"}),
        ("log", {"op": "chekpoint"}),
    ]
    _, results = asyncio.run(_drive(repo, calls))
    assert all(r.is_error for r in results)
    said = [_text(r) for r in results]
    assert said[0].startswith("checkpoint: `next` is required (its arguments: done, next, goal (optional)"), said[0]
    assert said[1].startswith("resume: `budget` must be a whole number"), said[1]
    assert "pydantic" not in said[0] + said[1] and "http" not in said[0] + said[1]
    assert "no record has the op 'chekpoint'; did you mean 'checkpoint'?" in said[2], said[2]


def test_errors_come_back_as_tool_errors(repo: Path, tmp_path: Path) -> None:
    empty = tmp_path / "no-state"
    empty.mkdir()
    _, results = asyncio.run(_drive(empty, [("status", {}), ("checkpoint", {"done": "", "next": ""})]))
    assert all(r.is_error for r in results)
    assert "rehydrate init" in _text(results[0])
