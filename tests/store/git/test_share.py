"""store/git/share.py: what rehydrate shares through git (its own files, less its caches) and what status says of
them."""

from __future__ import annotations

from pathlib import Path

from rehydrate.store.git import share


def test_own_specs_name_rehydrates_files_and_leave_its_caches_out(tmp_path: Path) -> None:
    for name in ("00_goal.md", "99_next.md", "40_notes.md", "mine.txt"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "wal").mkdir()
    specs = share.own_specs(str(tmp_path), "state")
    literal = [s for s in specs if s.startswith(":(top,literal)")]
    assert literal == [f":(top,literal)state/{n}" for n in ("00_goal.md", "40_notes.md", "99_next.md", "wal")]
    assert ":(top,exclude,glob)state/**/*.seen" in specs
    assert ":(top,exclude,glob)state/**/.local/**" in specs
    assert share.own_specs(str(tmp_path / "missing"), "state") == [s for s in specs if s not in literal]


def test_some_paths_names_five_and_counts_the_rest() -> None:
    assert share.some_paths(["a"]) == "a"
    assert share.some_paths([str(n) for n in range(7)]) == "0, 1, 2, 3, 4 and 2 more"


def test_outside_a_repository_status_says_nothing(tmp_path: Path) -> None:
    assert share.ignored_message(str(tmp_path)) is None
    assert share.pending_message(str(tmp_path)) is None
