"""The agent harnesses: one module each (base.Harness: its name, events, answer shapes and install targets), named
here once, and the MCP server's install target (setup/mcp.py).

This registry is what the hook dispatch, `install` and the CLI's choices read. It imports nothing: the hook path
loads only the module of the harness that calls.
"""

from __future__ import annotations

import sys

NAMES = ("claude", "codex", "gemini", "cursor", "copilot", "qwen")  # a module each: rehydrate.harness.<name>
HOOKS = ("claude", "codex", "gemini", "copilot", "cursor", "qwen")  # the harnesses that call `rehydrate hook <name>`
TARGETS = (*NAMES, "mcp")  # what `install` can install (mcp: the MCP server, for any client)
RUNS_PROGRAM = (*HOOKS, "mcp")  # the targets whose files name the `rehydrate` program
MODULES = {**{name: f"{__name__}.{name}" for name in NAMES}, "mcp": f"{__name__}.setup.mcp"}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.harness import claude, codex, copilot, cursor, gemini, qwen
    from rehydrate.harness.base import Harness, Installs
    from rehydrate.harness.setup import mcp

    # each module holds what its protocol asks for: the type checker says where one does not
    _HARNESSES: tuple[Harness, ...] = (claude, codex, copilot, cursor, gemini, qwen)
    _MCP: Installs = mcp


def get(name: str) -> Harness:
    """The module of a harness, imported now: rehydrate.harness.<name>. A name that is not in NAMES is a KeyError
    (never an import of whatever a caller names)."""
    if name not in NAMES:
        raise KeyError(name)
    return _imported(MODULES[name])  # type: ignore[return-value]  # (a module: __import__ is not followed)


def installer(name: str) -> Installs:
    """What `install` writes for a target (a harness, or the MCP server), imported now. A name that is not in TARGETS
    is a KeyError."""
    if name not in TARGETS:
        raise KeyError(name)
    return _imported(MODULES[name])  # type: ignore[return-value]  # (a module: __import__ is not followed)


def _imported(dotted: str) -> object:
    __import__(dotted)
    return sys.modules[dotted]
