"""`rehydrate install` (harness/setup/install.py): merged into the user's settings, idempotent, and taken out byte for
byte; every harness at once; and the JSON files install reads (a harness's settings, the install record): hostile
ones are named, never a traceback, and nothing is written; files install leaves alone keep their bytes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import rehydrate, tree

USERS = b"""{
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./my-lint.sh"}]}]
    }
}
"""


def _settings(repo: Path) -> Path:
    return repo / ".claude" / "settings.json"


@pytest.mark.usefixtures("rehydrate_on_the_path")
def test_install_into_a_fresh_project_and_out_again(repo: Path) -> None:
    r = rehydrate("install", "claude")
    assert r.code == 0, r.err
    settings = json.loads(_settings(repo).read_text())
    hooks = settings["hooks"]
    assert set(hooks) == {"SessionStart", "PreCompact", "PostCompact", "PreToolUse", "PostToolUse", "Stop"}
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


@pytest.mark.usefixtures("rehydrate_on_the_path")
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


@pytest.mark.usefixtures("rehydrate_on_the_path")
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


@pytest.mark.usefixtures("rehydrate_on_the_path")
def test_dry_run_prints_the_diff_and_changes_nothing(repo: Path) -> None:
    r = rehydrate("install", "claude", "--dry-run")
    assert r.code == 0 and "+++ " in r.out and '"rehydrate hook claude"' in r.out
    assert not _settings(repo).exists()


@pytest.mark.usefixtures("rehydrate_on_the_path")
def test_user_settings_go_to_the_claude_config_folder(repo: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    r = rehydrate("install", "claude", "--user", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert r.code == 0, r.err
    assert "rehydrate hook claude" in (config / "settings.json").read_text()
    assert not _settings(repo).exists()


@pytest.mark.usefixtures("rehydrate_on_the_path")
def test_broken_settings_are_refused_untouched(repo: Path) -> None:
    _settings(repo).parent.mkdir()
    _settings(repo).write_bytes(b"{ not json")
    r = rehydrate("install", "claude")
    assert r.code == 3 and "not valid JSON" in r.err and "Traceback" not in r.err
    assert _settings(repo).read_bytes() == b"{ not json"


def test_install_all_writes_every_harness_and_uninstall_restores(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Agents\n\nBe brief.\n")
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert rehydrate("init", "--goal", "g").code == 0  # (its boot rule in AGENTS.md goes with the uninstall too)
    r = rehydrate("install", "all")
    assert r.code == 0, r.err
    claude = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    codex = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    gemini = json.loads((repo / ".gemini" / "settings.json").read_text())["hooks"]
    # `rehydrate`, or this installation's full path where a harness started outside the venv would not find it
    program = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["rehydrate"]["command"]
    assert program == "rehydrate" or (Path(program).is_absolute() and Path(program).name == "rehydrate")
    assert codex["SessionStart"][0]["hooks"][0]["command"] == f"{program} hook codex"
    assert "matcher" not in gemini["SessionStart"][0] and gemini["BeforeTool"][0]["hooks"][0]["timeout"] == 10000
    assert claude["PreToolUse"][0]["hooks"][0]["command"] == f"{program} hook claude"
    assert "alwaysApply: true" in (repo / ".cursor" / "rules" / "rehydrate.mdc").read_text()
    server = {"command": program, "args": ["mcp"]}
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"rehydrate": server}}
    assert json.loads((repo / ".gemini" / "settings.json").read_text())["mcpServers"] == {"rehydrate": server}
    assert (
        f'[mcp_servers.rehydrate]\ncommand = "{program}"\nargs = ["mcp"]'
        in (repo / ".codex" / "config.toml").read_text()
    )
    for name in ("AGENTS.md", "GEMINI.md", ".github/copilot-instructions.md"):
        assert (repo / name).read_text().count("rehydrate resume") == 1, name
    assert (repo / "AGENTS.md").read_text().startswith("# Agents\n\nBe brief.\n")
    again = rehydrate("install", "all", "--json")
    assert again.code == 0 and not any(f["changed"] for f in json.loads(again.out)["files"])
    assert rehydrate("install", "all", "--uninstall").code == 0
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    after = {p: b for p, b in after.items() if p.parent.name != "state" and "wal" not in p.parts}
    assert after == {p: b for p, b in before.items() if p.parent.name != "state" and "wal" not in p.parts}
    for folder in (".claude", ".codex", ".gemini", ".cursor", ".github"):  # what the install made, it took back
        assert not (repo / folder).exists(), folder


# ------------------------------------------------------------------------------------------------ hostile JSON

DEEP = b"[" * 100_000  # far past the standard parser's recursion limit


def _record() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "rehydrate" / "installs.json"


@pytest.mark.parametrize(
    ("harness", "name"),
    [
        ("claude", ".claude/settings.json"),
        ("codex", ".codex/hooks.json"),
        ("gemini", ".gemini/settings.json"),
        ("mcp", ".mcp.json"),
        ("mcp", ".gemini/settings.json"),
    ],
)
def test_deeply_nested_settings_are_named_and_nothing_is_written(repo: Path, harness: str, name: str) -> None:
    (repo / name).parent.mkdir(exist_ok=True)
    (repo / name).write_bytes(DEEP)
    before = tree(repo)
    for args in ([], ["--uninstall"], ["--dry-run"]):
        r = rehydrate("install", harness, *args)
        assert r.code == 3, (args, r.out, r.err)
        assert f"{repo / name}: the file is not valid JSON (JSON nested too deeply)" in r.err
        assert "Traceback" not in r.err and "crash log" not in r.err
        assert tree(repo) == before
        assert not _record().exists()


@pytest.mark.parametrize("content", [DEEP, b"{ not json", b"[1, 2]"])
def test_a_broken_install_record_is_named_never_overwritten(repo: Path, content: bytes) -> None:
    _record().parent.mkdir(parents=True)
    _record().write_bytes(content)
    r = rehydrate("install", "claude")
    assert r.code == 3, (r.out, r.err)
    assert f"the install record {_record()}" in r.err and "move it away" in r.err and "Traceback" not in r.err
    assert _record().read_bytes() == content  # the originals of other installs are still in it
    assert not (repo / ".claude").exists()


def test_uninstalling_two_harnesses_that_share_a_file_gives_back_its_bytes(repo: Path) -> None:
    (repo / ".gemini").mkdir()
    users = b'{"theme":   "dark",\n "ui": {"hideBanner": true}}\n'  # a formatting of the user's own
    (repo / ".gemini" / "settings.json").write_bytes(users)
    assert rehydrate("install", "gemini", "mcp").code == 0
    assert rehydrate("install", "gemini", "mcp", "--uninstall").code == 0
    assert (repo / ".gemini" / "settings.json").read_bytes() == users


def test_uninstalling_where_nothing_was_installed_leaves_a_settings_file_as_it_is(repo: Path) -> None:
    (repo / ".claude").mkdir()
    users = b'{"model":"opus"}'
    (repo / ".claude" / "settings.json").write_bytes(users)
    r = rehydrate("install", "claude", "--uninstall")
    assert r.code == 0 and "already as it should be" in r.out
    assert (repo / ".claude" / "settings.json").read_bytes() == users
