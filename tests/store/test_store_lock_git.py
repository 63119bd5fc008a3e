"""A checkpoint whose lock cannot be taken leaves no git child and no descriptor behind."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from rehydrate.errors import RehydrateError
from rehydrate.store import gitinfo
from rehydrate.store.state import State


def test_a_refused_lock_starts_no_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo / "state"
    State.init(root, "Read-only checkout")
    (root / ".lock").unlink()
    real_open = os.open
    started: list[object] = []
    real_start = gitinfo.start

    def read_only(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if str(path).endswith(".lock") and flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def counting_start(root: str) -> object:
        started.append(root)
        return real_start(root)

    monkeypatch.setattr(os, "open", read_only)
    monkeypatch.setattr(gitinfo, "start", counting_start)
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(RehydrateError, match="lock file"):
        State.open(root).checkpoint(done="x", next="y")
    assert started == []  # git is started only once the lock is held
    assert set(os.listdir("/proc/self/fd")) <= before
