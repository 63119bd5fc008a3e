"""`rehydrate mcp`: the MCP server over stdio (the official SDK, an optional extra)."""

from __future__ import annotations

from rehydrate.cli import extra_hint
from rehydrate.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def args_mcp(p: argparse.ArgumentParser) -> None:
    p.description = (
        "An MCP server over stdio with the tools resume, checkpoint, invariant, reject, handoff, "
        "verify and status. Needs the mcp extra (the official MCP SDK: `pip install '.[mcp]'` in a clone, or "
        "`pip install 'mcp>=2.3,<3'` into rehydrate's environment); `rehydrate install mcp` registers it."
    )
    p.add_argument("--dir", metavar="DIR", help="the state folder (default: found as for every command)")
    p.add_argument("--actor", metavar="NAME", help="whose WAL to write (default: $REHYDRATE_ACTOR, else 'agent')")


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from rehydrate import mcp_server
    except ImportError as e:
        raise UsageError(
            f"the MCP server needs the official mcp SDK, which is not installed ({e})",
            extra_hint("mcp", "mcp>=2.3,<3"),
        ) from None
    return mcp_server.serve(args.dir, args.actor)
