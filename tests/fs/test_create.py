"""fs/create.py: a file created once, whole, never over another, and no temporary file left either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rehydrate.errors import RehydrateError
from rehydrate.fs.create import create_new


def test_a_new_file_is_created_whole_and_never_over_another(tmp_path: Path) -> None:
    path = tmp_path / "message.md"
    create_new(str(path), b"hello\n", "test.create")
    assert path.read_bytes() == b"hello\n"
    assert path.stat().st_mode & 0o777 == 0o644 & ~_umask()
    with pytest.raises(RehydrateError):
        create_new(str(path), b"another\n", "test.create")
    assert path.read_bytes() == b"hello\n"
    assert os.listdir(tmp_path) == ["message.md"]  # no temporary file left, after a success or a refusal


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
