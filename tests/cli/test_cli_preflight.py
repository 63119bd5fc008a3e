"""A refusal comes before any write: `init --rules` and `install` check every file first."""

from __future__ import annotations

from pathlib import Path

from conftest import rehydrate


def test_init_refused_by_a_link_out_of_the_project_creates_no_state(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("someone else's file\n")
    (repo / "CLAUDE.md").symlink_to(outside)
    r = rehydrate("init", "--goal", "Ship it", "--rules", "claude", cwd=repo)
    assert r.code == 3, r
    assert "CLAUDE.md" in r.err
    assert not (repo / "state").exists()
    assert outside.read_text() == "someone else's file\n"
    # and once the link is gone, init goes through
    (repo / "CLAUDE.md").unlink()
    assert rehydrate("init", "--goal", "Ship it", "--rules", "claude", cwd=repo).code == 0


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
