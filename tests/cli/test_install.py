"""`rehydrate install` (cli/install.py): a refusal comes before any write; the flags the library's errors are about."""

from __future__ import annotations

from pathlib import Path

from conftest import rehydrate


def test_install_all_refused_by_one_harness_writes_nothing_for_the_others(repo: Path, tmp_path: Path) -> None:
    assert rehydrate("init", "--goal", "Ship it", cwd=repo).code == 0
    outside = tmp_path / "gemini-elsewhere"
    outside.mkdir()
    (repo / ".gemini").symlink_to(outside)
    r = rehydrate("install", "all", cwd=repo)
    assert r.code == 3, r
    assert ".gemini" in r.err
    assert not (repo / ".claude").exists()
    assert not (repo / ".codex").exists()
    assert list(outside.iterdir()) == []


def test_a_user_wide_install_of_mcp_names_the_flag(repo: Path) -> None:
    r = rehydrate("install", "mcp", "--user", cwd=repo)
    assert r.code == 2 and r.err.startswith("rehydrate: --user"), r.err
    assert not (repo / ".mcp.json").exists()
