"""The JSON files install reads (a harness's settings, the install record): hostile ones are named, never a
traceback, and nothing is written; files install leaves alone keep their bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import rehydrate

DEEP = b"[" * 100_000  # far past the standard parser's recursion limit


def _record() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "rehydrate" / "installs.json"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(Path(folder, name).relative_to(root)): Path(folder, name).read_bytes()
        for folder, _dirs, names in os.walk(root)
        for name in names
    }


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
    before = _tree(repo)
    for args in ([], ["--uninstall"], ["--dry-run"]):
        r = rehydrate("install", harness, *args)
        assert r.code == 3, (args, r.out, r.err)
        assert f"{repo / name}: the file is not valid JSON (JSON nested too deeply)" in r.err
        assert "Traceback" not in r.err and "crash log" not in r.err
        assert _tree(repo) == before
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
