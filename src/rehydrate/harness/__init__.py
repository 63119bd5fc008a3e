"""The agent harnesses: one module each (its events, answer shapes and install targets), named here once.

This registry is what the hook dispatch, `install` and the CLI's choices read. It imports nothing: the hook path
loads only the module of the harness that calls.
"""

from __future__ import annotations

NAMES = ("claude", "codex", "gemini", "cursor", "copilot")  # a module each: rehydrate.harness.<name>
HOOKS = ("claude", "codex", "gemini")  # the harnesses that call `rehydrate hook <name>`
TARGETS = (*NAMES, "mcp")  # what `install` can install (mcp: the MCP server, for any client)
