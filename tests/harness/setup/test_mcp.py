"""The MCP server's registration (harness/setup/mcp.py): in Claude Code's .mcp.json, Codex's config.toml and Gemini
CLI's settings.json, beside the user's own servers, taken out byte for byte; in the project only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate.errors import UsageError
from rehydrate.harness.setup import mcp
from rehydrate.harness.setup.program import Program


def test_the_three_clients_files_and_never_user_wide(tmp_path: Path) -> None:
    prog = Program(None, True, None)
    files = [path for path, _, _ in mcp.targets(str(tmp_path), "state", False, prog)]
    assert files == [str(tmp_path / ".mcp.json"), str(tmp_path / ".codex" / "config.toml"),
                     str(tmp_path / ".gemini" / "settings.json")]  # fmt: skip
    with pytest.raises(UsageError) as refused:
        mcp.targets(str(tmp_path), "state", True, prog)
    assert refused.value.field == "user"


@pytest.mark.usefixtures("rehydrate_on_the_path")
def test_mcp_registration_keeps_the_users_servers_and_toml(repo: Path) -> None:
    (repo / ".codex").mkdir()
    toml = b'model = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n'
    (repo / ".codex" / "config.toml").write_bytes(toml)
    (repo / ".mcp.json").write_text('{"mcpServers": {"docs": {"command": "docs-server"}}}')
    assert rehydrate("install", "mcp").code == 0
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"docs": {"command": "docs-server"}, "rehydrate": {"command": "rehydrate", "args": ["mcp"]}}
    text = (repo / ".codex" / "config.toml").read_bytes()
    assert text.startswith(toml) and text.count(b"[mcp_servers.rehydrate]") == 1
    assert rehydrate("install", "mcp").code == 0 and (repo / ".codex" / "config.toml").read_bytes() == text
    # changed by hand since: only our parts go
    (repo / ".codex" / "config.toml").write_bytes(text + b"\n[tui]\nnotifications = true\n")
    assert rehydrate("install", "mcp", "--uninstall").code == 0
    assert (repo / ".codex" / "config.toml").read_bytes() == toml + b"\n[tui]\nnotifications = true\n"
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"docs": {"command": "docs-server"}}}
