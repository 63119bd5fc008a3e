"""`rehydrate install claude`: merged into the user's settings, idempotent, and taken out byte for byte."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import rehydrate


@pytest.fixture(autouse=True)
def rehydrate_on_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rehydrate` found on the PATH outside any virtual environment (as pipx installs it): hooks name it bare."""
    own = Path(sys.executable).absolute().parent / "rehydrate"
    if not own.is_file():
        pytest.skip("rehydrate is not installed beside this interpreter")
    folder = tmp_path / "on-path"
    folder.mkdir()
    (folder / "rehydrate").symlink_to(own)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin")


USERS = b"""{
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./my-lint.sh"}]}]
    }
}
"""


def _settings(repo: Path) -> Path:
    return repo / ".claude" / "settings.json"


def test_install_into_a_fresh_project_and_out_again(repo: Path) -> None:
    r = rehydrate("install", "claude")
    assert r.code == 0, r.err
    settings = json.loads(_settings(repo).read_text())
    hooks = settings["hooks"]
    assert set(hooks) == {"SessionStart", "PreCompact", "PostCompact", "PreToolUse", "Stop"}
    assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert hooks["SessionStart"][0]["hooks"][0] == {
        "type": "command",
        "command": "rehydrate hook claude",
        "timeout": 30,
    }
    before = _settings(repo).read_bytes()
    assert rehydrate("install", "claude").code == 0
    assert _settings(repo).read_bytes() == before  # twice changes nothing
    assert rehydrate("install", "claude", "--uninstall").code == 0
    assert not _settings(repo).exists() and not _settings(repo).parent.exists()


def test_a_users_settings_survive_and_come_back_byte_for_byte(repo: Path) -> None:
    _settings(repo).parent.mkdir()
    _settings(repo).write_bytes(USERS)
    assert rehydrate("install", "claude").code == 0
    merged = json.loads(_settings(repo).read_text())
    assert merged["permissions"] == {"allow": ["Bash(npm test)"]}
    pre = merged["hooks"]["PreToolUse"]
    assert pre[0]["hooks"][0]["command"] == "./my-lint.sh" and pre[1]["hooks"][0]["command"] == "rehydrate hook claude"
    assert rehydrate("install", "claude", "--uninstall").code == 0
    assert _settings(repo).read_bytes() == USERS


def test_a_file_changed_after_install_loses_only_our_hooks(repo: Path) -> None:
    _settings(repo).parent.mkdir()
    _settings(repo).write_bytes(USERS)
    rehydrate("install", "claude")
    merged = json.loads(_settings(repo).read_text())
    merged["model"] = "opus"
    _settings(repo).write_text(json.dumps(merged))
    assert rehydrate("install", "claude", "--uninstall").code == 0
    left = json.loads(_settings(repo).read_text())
    assert left == {**json.loads(USERS), "model": "opus"}


def test_dry_run_prints_the_diff_and_changes_nothing(repo: Path) -> None:
    r = rehydrate("install", "claude", "--dry-run")
    assert r.code == 0 and "+++ " in r.out and '"rehydrate hook claude"' in r.out
    assert not _settings(repo).exists()


def test_user_settings_go_to_the_claude_config_folder(repo: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    r = rehydrate("install", "claude", "--user", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert r.code == 0, r.err
    assert "rehydrate hook claude" in (config / "settings.json").read_text()
    assert not _settings(repo).exists()


def test_broken_settings_are_refused_untouched(repo: Path) -> None:
    _settings(repo).parent.mkdir()
    _settings(repo).write_bytes(b"{ not json")
    r = rehydrate("install", "claude")
    assert r.code == 3 and "not valid JSON" in r.err and "Traceback" not in r.err
    assert _settings(repo).read_bytes() == b"{ not json"


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
