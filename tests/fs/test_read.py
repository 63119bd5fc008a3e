"""fs/read.py: the bounded reads every part shares."""

from __future__ import annotations

from pathlib import Path

from rehydrate.fs import read as fsread


def test_read_small_gives_the_size_of_a_file_too_large_and_none_for_a_missing_one(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"0123456789")
    assert fsread.read_small(str(tmp_path / "f"), 10) == (b"0123456789", 10)
    assert fsread.read_small(str(tmp_path / "f"), 9) == (b"", 10)
    assert fsread.read_small(str(tmp_path / "missing"), 9) == (None, None)
