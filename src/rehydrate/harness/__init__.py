"""The agent harnesses: one module each (its events, answer shapes and install targets), named here once.

This registry is what the hook dispatch, `install` and the CLI's choices read. It imports nothing: the hook path
loads only the module of the harness that calls.
"""

from __future__ import annotations

NAMES = ("claude", "codex", "gemini", "cursor", "copilot", "qwen")  # a module each: rehydrate.harness.<name>
HOOKS = ("claude", "codex", "gemini", "copilot", "cursor", "qwen")  # the harnesses that call `rehydrate hook <name>`
TARGETS = (*NAMES, "mcp")  # what `install` can install (mcp: the MCP server, for any client; rehydrate.harness.mcp)
RUNS_PROGRAM = (*HOOKS, "mcp")  # the targets whose files name the `rehydrate` program

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def get(name: str) -> ModuleType:
    """The module of a harness (or of the "mcp" target), imported now: rehydrate.harness.<name>. A name that is not
    in TARGETS is a KeyError (never an import of whatever a caller names)."""
    if name not in TARGETS:
        raise KeyError(name)
    import sys

    __import__(f"{__name__}.{name}")
    return sys.modules[f"{__name__}.{name}"]
