"""The MCP server, for any client that reads these files: Claude Code's .mcp.json, Codex's config.toml, Gemini CLI's
settings.json. In the project only."""

from __future__ import annotations

import os

from rehydrate.errors import UsageError
from rehydrate.harness.setup.settings import merge_mcp_json, merge_mcp_toml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.harness.setup.install import Target
    from rehydrate.harness.setup.program import Program


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    if user:
        raise UsageError(
            "a user-wide install is not available for mcp", "install it into the project instead", field="user"
        )
    command = prog.argv0
    return [
        (
            os.path.join(project, ".mcp.json"),
            lambda old, rm: merge_mcp_json(old, remove=rm, command=command),
            "MCP server",
        ),
        (
            os.path.join(project, ".codex", "config.toml"),
            lambda old, rm: merge_mcp_toml(old, remove=rm, command=command),
            "MCP server",
        ),
        (
            os.path.join(project, ".gemini", "settings.json"),
            lambda old, rm: merge_mcp_json(old, remove=rm, command=command, comments=True),
            "MCP server",
        ),
    ]
