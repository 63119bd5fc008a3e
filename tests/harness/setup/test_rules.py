"""The boot rule: a marked block, installed idempotently, the rest of each file untouched."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import rehydrate
from rehydrate.harness.setup import rules


def test_rule_goes_where_files_exist_and_where_asked(repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("# My project\n\nUse tabs.\n")
    r = rehydrate("init", "--goal", "g", "--rules", "agents")
    assert r.code == 0
    assert "AGENTS.md created" in r.out and "CLAUDE.md updated" in r.out
    assert not (repo / "GEMINI.md").exists()
    claude = (repo / "CLAUDE.md").read_text()
    assert claude.startswith("# My project\n\nUse tabs.\n\n" + rules.BEGIN)
    assert claude.count(rules.BEGIN) == 1 and "rehydrate resume" in claude and "compaction" in claude
    assert (repo / "AGENTS.md").read_text() == rules.block("state")


def test_install_is_idempotent_and_updates_in_place(tmp_path: Path) -> None:
    f = tmp_path / "AGENTS.md"
    f.write_text("top\n\n" + rules.BEGIN + "\nold text\n" + rules.END + "\n\nbottom\n")
    assert rules.install(str(tmp_path), "state", []) == [("AGENTS.md", "updated")]
    text = f.read_text()
    assert text == "top\n\n" + rules.block("state") + "\nbottom\n"
    assert rules.install(str(tmp_path), "state", []) == [("AGENTS.md", "unchanged")]
    assert f.read_text() == text


def test_symlinked_instruction_file_is_written_once_through(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("shared\n")
    os.symlink("AGENTS.md", tmp_path / "CLAUDE.md")
    out = rules.install(str(tmp_path), "state", [])
    assert out == [("AGENTS.md", "updated"), ("CLAUDE.md", "unchanged")]
    assert os.path.islink(tmp_path / "CLAUDE.md")
    assert (tmp_path / "AGENTS.md").read_text().count(rules.BEGIN) == 1


def test_custom_state_folder_is_named_in_the_rule(tmp_path: Path) -> None:
    r = rehydrate("init", "--goal", "g", "--dir", str(tmp_path / ".agent-state"), "--rules", "gemini", cwd=tmp_path)
    assert r.code == 0, r.err
    assert "`.agent-state/`" in (tmp_path / "GEMINI.md").read_text()


def test_bytes_that_are_not_utf8_survive_the_rule(repo: Path) -> None:
    (repo / "CLAUDE.md").write_bytes(b"# Caf\xe9 notes (Latin-1)\n")
    assert rehydrate("init", "--goal", "g", "--rules", "claude").code == 0
    data = (repo / "CLAUDE.md").read_bytes()
    assert data.startswith(b"# Caf\xe9 notes (Latin-1)\n\n") and rules.BEGIN.encode() in data
