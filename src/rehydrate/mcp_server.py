"""`rehydrate mcp`: the state store as an MCP server over stdio, built on the official `mcp` SDK.

Optional (`pip install 'rehydrate[mcp]'`) and imported only by this command: the hook path never pays for it.
Each tool opens the state afresh, so the server always answers from disk; errors come back as tool errors.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from rehydrate import __version__, brief
from rehydrate.brief.recover import recover as recover_ledger
from rehydrate.errors import RehydrateError
from rehydrate.store.locate import locate
from rehydrate.store.session import Outcome
from rehydrate.store.state import State
from rehydrate.store.wal import history

INSTRUCTIONS = (
    "rehydrate keeps this task's working state on disk. Call `resume` first and after any context compaction; "
    "trust what it says over your memory. Record each decision with `invariant` and each abandoned approach with "
    "`reject` (never retry a rejected one), call `checkpoint` after each step, and `handoff` before stopping."
)


def _entry(out: Any) -> dict[str, Any]:
    """What an entry's tool answers: its id and line, and the problems found on the way."""
    return {"id": out.record["data"]["id"], "line": out.record["data"]["line"], "problems": _problems(out)}


def _problems(out: Outcome) -> list[dict[str, Any]]:
    return [p.as_dict() for p in out.problems]


# how an argument of the wrong kind is named (pydantic's error type, before its first "_")
KINDS = {"string": "text", "int": "a whole number", "bool": "true or false", "list": "a list", "dict": "an object"}
MAX_LOG = 200  # the most records the log tool returns (the newest): the rest stay on disk for `rehydrate log`


class _Server(MCPServer[Any]):
    """The SDK's server, with argument errors said in the tool's own words: which argument, what it must be, and
    the tool's arguments, instead of pydantic's report and its link."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(e, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(argument_error(name, cause, self._tool_input_schema(name))) from cause


def argument_error(tool: str, error: ValidationError, schema: dict[str, Any] | None) -> str:
    """What was wrong with a tool's arguments, in words: "checkpoint: `next` is required (its arguments: done, ...)"."""
    said = []
    for err in error.errors():
        field = ".".join(str(part) for part in err["loc"]) or "the arguments"
        kind = str(err["type"])
        base = kind.split("_", 1)[0]
        if kind == "missing":
            said.append(f"`{field}` is required")
        elif base in KINDS:
            said.append(f"`{field}` must be {KINDS[base]}")
        else:
            said.append(f"`{field}`: {err['msg']}")
    properties = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or ())
    names = ", ".join(n if n in required else f"{n} (optional)" for n in properties)
    return f"{tool}: {'; '.join(said)}" + (f" (its arguments: {names})" if names else "")


def build(state_dir: str | None, actor: str | None) -> MCPServer[Any]:
    server: MCPServer[Any] = _Server(name="rehydrate", version=__version__, instructions=INSTRUCTIONS)

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

    @server.tool(
        description="Record a decision in 10_invariants.md, with the reason a later session must respect; supersedes: "
        "the id of an earlier entry (D-xxxxxx or R-xxxxxx) this one replaces, out of force from then on."
    )
    def invariant(text: str, because: str, supersedes: str | None = None) -> dict[str, Any]:
        return _entry(guarded(lambda: state().invariant(text, because, supersedes)))

    @server.tool(
        description="Record an approach that was ruled out, and why; guard is a path glob or command pattern, contains "
        "a text the hooks watch for in what is written or run (with both, both must match); supersedes as for "
        "invariant."
    )
    def reject(
        approach: str,
        because: str,
        guard: str | None = None,
        contains: str | None = None,
        supersedes: str | None = None,
    ) -> dict[str, Any]:
        return _entry(guarded(lambda: state().reject(approach, because, guard, contains, supersedes)))

    @server.tool(
        description="Take a decision or rejected approach recorded by mistake out of force (id: D-xxxxxx or "
        "R-xxxxxx): the log keeps it, the brief no longer shows it and its guard no longer watches."
    )
    def withdraw(id: str, because: str) -> dict[str, Any]:
        return _entry(guarded(lambda: state().withdraw(id, because)))

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

    @server.tool(
        description="The recovery ledger, read-only: every check in full (git, gh, your own checks), the "
        "confidence, and the next safe action or the one question for a human. Use it when the brief said degraded."
    )
    def recover() -> dict[str, Any]:
        got = guarded(lambda: recover_ledger(state_dir, actor))
        if got.state is None and got.error is not None:
            raise ToolError(str(got.error))
        return {"recovered": got.recovered, **got.summed.as_json()}

    @server.tool(
        description="The history of records, oldest first: every actor's log and the archives. op and actor keep "
        f"only those; grep keeps the records whose data holds that text (any case). At most {MAX_LOG}, the newest."
    )
    def log(op: str | None = None, actor: str | None = None, grep: str | None = None) -> dict[str, Any]:
        def read() -> history.History:
            root = locate(state_dir)
            missing = history.unknown_op(root, [op] if op else [])
            if missing is not None:
                close = f"; did you mean {missing[1]!r}?" if missing[1] else ""
                raise ToolError(f"log: no record has the op {missing[0]!r}{close}")
            return history.read(root, ops=[op] if op else None, actors=[actor] if actor else None, grep=grep)

        found = guarded(read)
        shown = found.entries[-MAX_LOG:]
        return {
            "records": [e.as_dict() for e in shown],
            "left_out": len(found.entries) - len(shown),
            "damaged": [str(d) for d in found.damaged],
        }

    return server


def serve(state_dir: str | None, actor: str | None) -> int:
    build(state_dir, actor).run("stdio")
    return 0
