"""`rehydrate mcp`: the state store as an MCP server over stdio, built on the official `mcp` SDK.

Optional (`pip install 'rehydrate[mcp]'`) and imported only by this command: the hook path never pays for it.
Each tool opens the state afresh, so the server always answers from disk; errors come back as tool errors.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from rehydrate import __version__, brief
from rehydrate.errors import RehydrateError
from rehydrate.store.session import Outcome
from rehydrate.store.state import State

INSTRUCTIONS = (
    "rehydrate keeps this task's working state on disk. Call `resume` first and after any context compaction; "
    "trust what it says over your memory. Record each decision with `invariant` and each abandoned approach with "
    "`reject` (never retry a rejected one), call `checkpoint` after each step, and `handoff` before stopping."
)


def _problems(out: Outcome) -> list[dict[str, Any]]:
    return [p.as_dict() for p in out.problems]


def build(state_dir: str | None, actor: str | None) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="rehydrate", version=__version__, instructions=INSTRUCTIONS)

    def state() -> State:
        try:
            return State.open(state_dir, actor)
        except RehydrateError as e:
            raise ToolError(str(e)) from None

    def guarded(call: Any) -> Any:
        try:
            return call()
        except RehydrateError as e:
            raise ToolError(str(e)) from None

    @server.tool(description="The brief to read first, and again after any compaction: the state in boot order.")
    def resume(budget: int = brief.DEFAULT_BUDGET) -> str:
        return str(guarded(lambda: brief.resume(state(), budget).text))

    @server.tool(
        description="Record the step just finished and the next allowed action (binds git HEAD). claims: what it "
        'claims, each {"text": ..., "receipt": "rc-..." (what `rehydrate run` printed; optional)}; the brief then '
        "says whether each is verified, stale, failed or unverified."
    )
    def checkpoint(
        done: str, next: str, goal: str | None = None, claims: list[dict[str, str]] | None = None
    ) -> dict[str, Any]:
        given = [(str(c.get("text", "")), c.get("receipt") or None) for c in claims or []]
        out = guarded(lambda: state().checkpoint(done, next, goal, given))
        found = out.record["data"].get("claims", [])
        return {"seq": out.record["seq"], "claims": found, "repaired": out.repaired, "problems": _problems(out)}

    @server.tool(description="Record a decision in 10_invariants.md, with the reason a later session must respect.")
    def invariant(text: str, because: str) -> dict[str, Any]:
        out = guarded(lambda: state().invariant(text, because))
        return {"id": out.record["data"]["id"], "line": out.record["data"]["line"], "problems": _problems(out)}

    @server.tool(
        description="Record an approach that was ruled out, and why; guard is a path glob or command pattern, contains "
        "a text the hooks watch for in what is written or run (with both, both must match)."
    )
    def reject(approach: str, because: str, guard: str | None = None, contains: str | None = None) -> dict[str, Any]:
        out = guarded(lambda: state().reject(approach, because, guard, contains))
        return {"id": out.record["data"]["id"], "line": out.record["data"]["line"], "problems": _problems(out)}

    @server.tool(description="Replace 20_handoff.md, the note the next session reads in full.")
    def handoff(text: str) -> dict[str, Any]:
        out = guarded(lambda: state().handoff(text))
        return {"seq": out.record["seq"], "problems": _problems(out)}

    @server.tool(description="Check the WAL chain, the latches and the views; repair=true applies the safe repairs.")
    def verify(repair: bool = False) -> dict[str, Any]:
        out = guarded(lambda: state().verify(repair=repair))
        return {"ok": out.ok, "problems": _problems(out), "repaired": out.repaired}

    @server.tool(description="The goal, the last checkpoint, the next action and any problem.")
    def status() -> dict[str, Any]:
        out = guarded(lambda: state().status())
        return {"ok": out.ok, **out.extra, "problems": _problems(out), "repaired": out.repaired}

    return server


def serve(state_dir: str | None, actor: str | None) -> int:
    build(state_dir, actor).run("stdio")
    return 0
