"""fs/lock.py: the state's lock, on the folder and on its .lock file: writers exclude each other, readers share,
and a folder that is a symlink is refused."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from rehydrate.errors import RehydrateError
from rehydrate.fs.lock import locked


def _can_take(path: Path, how: int) -> bool:
    """Whether another open file description gets the flock now (without waiting)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_a_writer_holds_the_folder_and_its_lock_file_until_the_block_ends(tmp_path: Path) -> None:
    with locked(str(tmp_path)):
        assert (tmp_path / ".lock").is_file()
        assert not _can_take(tmp_path, fcntl.LOCK_SH)
        assert not _can_take(tmp_path / ".lock", fcntl.LOCK_SH)
    assert _can_take(tmp_path, fcntl.LOCK_EX) and _can_take(tmp_path / ".lock", fcntl.LOCK_EX)


def test_readers_share_the_lock_and_exclude_a_writer(tmp_path: Path) -> None:
    with locked(str(tmp_path), shared=True), locked(str(tmp_path), shared=True):
        assert _can_take(tmp_path, fcntl.LOCK_SH)
        assert not _can_take(tmp_path, fcntl.LOCK_EX)
        assert not _can_take(tmp_path / ".lock", fcntl.LOCK_EX)


def test_a_state_folder_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(RehydrateError), locked(str(tmp_path / "link")):
        pass
    assert not (tmp_path / "real" / ".lock").exists()
