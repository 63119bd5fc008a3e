"""store/git/index.py reads the entries git marks assume-unchanged or skip-worktree from real index files written by
git (versions 2, 3 and 4, a name longer than the flags' 12 bits), and gives None for bytes that are not one."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import git

from rehydrate.store.git import index as gitindex

LONG = "d/" + "/".join(["n" * 200] * 24)  # 4,825 bytes, past 0xFFF: its length is not in the flags (index only)


def _repo(root: Path, version: str, mark: bool) -> bytes:
    root.mkdir()
    git(root, "init", "-q")
    (root / "d").mkdir()
    for name in ["a.txt", "d/b c.txt", "d/é.txt"]:
        (root / name).write_text(name)
    git(root, "add", "-A")
    blob = git(root, "hash-object", "-w", "a.txt").strip()
    git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{LONG}")  # longer than a path on disk may be
    git(root, "update-index", "--index-version", version)
    if mark:
        git(root, "update-index", "--assume-unchanged", "--", "d/b c.txt", LONG)
        git(root, "update-index", "--skip-worktree", "--", "d/é.txt", LONG)
    return (root / ".git" / "index").read_bytes()


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_marked_entries_of_each_version(tmp_path: Path, version: str) -> None:
    plain = gitindex.marked(_repo(tmp_path / "plain", version, mark=False))
    assert plain is not None and not plain
    found = gitindex.marked(_repo(tmp_path / "marked", version, mark=True))
    assert found is not None
    assert found.assumed == [b"d/b c.txt", LONG.encode()]
    assert found.skipped == [LONG.encode(), "d/é.txt".encode()]


def test_bytes_that_are_not_an_index_give_none(tmp_path: Path) -> None:
    data = _repo(tmp_path / "r", "2", mark=True)
    assert gitindex.marked(b"") is None
    assert gitindex.marked(b"DIRC\x00\x00\x00\x05" + data[8:]) is None  # a version this module does not know
    for cut in (13, 70, 100, len(data) // 2):
        assert gitindex.marked(data[:cut]) is None  # entries cut short
    assert gitindex.marked(data[:8] + b"\x00\x00\xff\xff" + data[12:]) is None  # more entries than the file holds


def test_a_split_index_gives_none(tmp_path: Path) -> None:
    """Most of a split index's entries, and their marks, are in a shared file: the caller must not trust a
    reading of the main file alone."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "-A")
    git(root, "update-index", "--split-index")
    git(root, "update-index", "--assume-unchanged", "a.txt")
    assert gitindex.marked((root / ".git" / "index").read_bytes()) is None
