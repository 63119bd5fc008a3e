"""sync/team.py: `team init` writes the union attributes and rehydrate's ignore lines, keeping the user's own."""

from __future__ import annotations

from pathlib import Path

from rehydrate.store import layout
from rehydrate.sync import team


def test_the_attributes_keep_the_users_own_lines_after_rehydrates() -> None:
    assert team.attributes_text(None) == layout.GITATTRIBUTES_TEXT.encode()
    old = (layout.GITATTRIBUTES_V1 + "*.png binary\n\n").encode()
    assert team.attributes_text(old) == (layout.GITATTRIBUTES_TEXT + "*.png binary\n").encode()


def test_init_outside_a_repository_writes_both_files_then_finds_them_in_place(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir()
    (root / ".gitignore").write_text("mine.txt")
    said = team.init(str(root))
    assert said[0] == "wrote state/.gitattributes: logs and append-only views merge line by line (union)"
    assert said[1].startswith("added .lock, *.tmp, ") and said[1].endswith(" to state/.gitignore")
    assert said[2] == "not inside a git repository: nothing else to set up"
    assert (root / ".gitattributes").read_text() == layout.GITATTRIBUTES_TEXT
    ignore = (root / ".gitignore").read_text()
    assert ignore.startswith("mine.txt\n.lock\n") and "#" not in ignore
    again = team.init(str(root))
    assert again[0] == "state/.gitattributes already merges logs and append-only views line by line"
    assert again[1] == "not inside a git repository: nothing else to set up"
