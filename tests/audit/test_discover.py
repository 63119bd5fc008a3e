"""audit.discover (audit/discover.py): the files an audit reads, the user's folders, and a date."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate import audit
from rehydrate.errors import UsageError


def test_all_reads_the_folders_the_harnesses_name(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = tmp_path / "claude-config", tmp_path / "codex-home"
    (claude / "projects" / "p").mkdir(parents=True)
    (codex / "sessions" / "2026").mkdir(parents=True)
    (claude / "projects" / "p" / "a.jsonl").write_text("")
    (codex / "sessions" / "2026" / "b.jsonl").write_text("")
    (codex / "sessions" / "2026" / "notes.md").write_text("")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    files, errors = audit.discover([], True, None)
    assert [Path(f).name for f in files] == ["a.jsonl", "b.jsonl"] and errors == []
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.delenv("CODEX_HOME")
    assert audit.discover([], True, None) == ([], [])  # the (empty) home folder's ~/.claude and ~/.codex


def test_a_since_that_is_not_a_date_is_said_in_the_domain_and_names_its_field(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as e:
        audit.discover([str(tmp_path)], False, "yesterday")
    assert e.value.field == "since" and e.value.message == "'yesterday' is not a date" and "--" not in str(e.value)
    assert e.value.hint == "use YYYY-MM-DD"
