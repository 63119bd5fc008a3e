"""store/git/info.py's dirty_blobs: a checkpoint binds each dirty file's content by its git blob id, read in this
process (no git call per file), within the bounds gitinfo names, on real repositories."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.gitrepos import git

from conftest import git_repo, paths_touched
from rehydrate.store.git import info as gitinfo


def _state(repo: Path) -> str:
    folder = repo / "state"
    folder.mkdir(exist_ok=True)
    (folder / "00_goal.md").write_text("goal\n")
    return str(folder)


def _hash_object(repo: Path, *paths: str) -> list[str]:
    """What git itself says the blob ids are (--no-filters: the bytes as they are in the work tree)."""
    return git(repo, "hash-object", "--no-filters", "--", *paths).split("\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo")


def test_a_checkpoint_binds_each_dirty_file_by_the_blob_id_git_gives_it(repo: Path) -> None:
    (repo / "app.py").write_text("print('edited')\n")  # tracked, modified
    (repo / "src").mkdir()
    (repo / "src" / "new.py").write_bytes(b"\x00binary\xff and text\r\n")  # untracked, in a folder git shows whole
    (repo / "empty.txt").write_text("")
    git(repo, "add", "src/new.py")
    (repo / "link").symlink_to("/etc/passwd")  # out of the repository: its text is hashed, never followed
    snap = gitinfo.snapshot(_state(repo))
    assert snap["dirty"] == ["app.py", "empty.txt", "link", "src/new.py"]
    ids = _hash_object(repo, "app.py", "empty.txt", "src/new.py")
    git(repo, "add", "link")
    link = git(repo, "ls-files", "-s", "link").split()[1]  # the blob git stores for the link
    assert snap["dirty_blobs"] == {"app.py": ids[0], "empty.txt": ids[1], "link": link, "src/new.py": ids[2]}


def test_a_deleted_file_is_recorded_as_deleted_and_a_folder_is_not_hashed(repo: Path) -> None:
    (repo / "app.py").unlink()
    (repo / "untracked").mkdir()
    (repo / "untracked" / "a.py").write_text("a\n")
    snap = gitinfo.snapshot(_state(repo))
    assert snap["dirty"] == ["app.py", "untracked/"]  # git shows an untracked folder whole
    assert snap["dirty_blobs"] == {"app.py": gitinfo.DELETED}  # a folder's entry is not a plain path: left out


def test_a_clean_work_tree_records_no_blobs_and_git_runs_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing dirty: the record's git is what it always was. Many dirty files: still one git process."""
    assert "dirty_blobs" not in gitinfo.snapshot(_state(repo))
    for i in range(50):
        (repo / f"f{i:02}.txt").write_text(f"{i}\n" * 100)
    spawned: list[list[str]] = []
    real = os.posix_spawnp

    def spy(path: str, argv: list[str], *args: Any, **kw: Any) -> int:
        spawned.append(argv)
        return real(path, argv, *args, **kw)

    monkeypatch.setattr(os, "posix_spawnp", spy)
    snap = gitinfo.snapshot(_state(repo))
    assert len(snap["dirty_blobs"]) == 50 and len(spawned) == 1 and spawned[0][3] == "status"
    assert snap["dirty_blobs"]["f07.txt"] == _hash_object(repo, "f07.txt")[0]


def test_count_bound_the_first_dirty_paths_in_path_order(repo: Path) -> None:
    for i in range(gitinfo.MAX_BLOBS + 5):
        (repo / f"f{i:03}.txt").write_text(f"{i}\n")
    snap = gitinfo.snapshot(_state(repo))
    assert snap["dirty_count"] == gitinfo.MAX_BLOBS + 5 and len(snap["dirty"]) == gitinfo.MAX_DIRTY
    assert sorted(snap["dirty_blobs"]) == snap["dirty"][: gitinfo.MAX_BLOBS]
    assert "f204.txt" not in snap["dirty_blobs"]
    assert snap["dirty_blobs"]["f199.txt"] == _hash_object(repo, "f199.txt")[0]


def test_size_bounds_a_huge_file_and_the_bytes_past_the_total_are_recorded_by_size(repo: Path) -> None:
    (repo / "huge.bin").write_bytes(b"x" * (gitinfo.MAX_BLOB_BYTES + 1))
    (repo / "a.txt").write_text("a" * 1000)
    (repo / "b.txt").write_text("b" * 1000)
    (repo / "c.txt").write_text("c" * 10)
    found = gitinfo.blobs(str(repo), ["a.txt", "b.txt", "c.txt", "huge.bin"], budget=1500)
    assert found["huge.bin"] == {"size": gitinfo.MAX_BLOB_BYTES + 1}  # never read: its size stands for it
    assert found["a.txt"] == _hash_object(repo, "a.txt")[0]
    assert found["b.txt"] == {"size": 1000}  # past the total: in path order, the rest by size
    assert found["c.txt"] == _hash_object(repo, "c.txt")[0]  # small enough to fit what is left
    snap = gitinfo.snapshot(_state(repo))
    assert snap["dirty_blobs"]["huge.bin"] == {"size": gitinfo.MAX_BLOB_BYTES + 1}


def test_untrusted_paths_are_never_looked_at(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths from a record (the WAL arrives by git pull): absolute, with `..`, or through a linked folder out of the
    repository are left out without a single lstat or open of anything outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (repo / "linked").symlink_to(outside)
    (repo / "app.py").write_text("edited\n")
    touched = paths_touched(monkeypatch)
    paths = [str(outside / "secret.txt"), "../outside/secret.txt", "linked/secret.txt", "app.py", "a/./b", ""]
    found = gitinfo.blobs(str(repo), paths)
    monkeypatch.undo()
    assert found == {"app.py": _hash_object(repo, "app.py")[0]}
    assert not [p for p in touched if p.startswith(str(outside))], touched


def test_a_name_git_prints_that_is_not_utf8_is_left_out(repo: Path) -> None:
    (repo / os.fsdecode(b"caf\xe9.txt")).write_text("x\n")
    (repo / "app.py").write_text("edited\n")
    snap = gitinfo.snapshot(_state(repo))
    assert snap["dirty_blobs"] == {"app.py": _hash_object(repo, "app.py")[0]}  # never mistaken for deleted


def test_a_fifo_is_not_read_and_never_blocks(repo: Path) -> None:
    os.mkfifo(repo / "pipe")
    found = subprocess.run(  # in a child with a deadline: a blocking open would hang the test, not fail it
        [sys.executable, "-c", f"from rehydrate.store.git import info; print(info.blobs({str(repo)!r}, ['pipe']))"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert found.stdout.strip() == "{'pipe': None}"
