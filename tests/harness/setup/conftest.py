"""What the tests of the install share: `rehydrate` found on the PATH, as a user's shell finds it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


@pytest.fixture
def rehydrate_on_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rehydrate` found on the PATH outside any virtual environment (as pipx installs it): hooks name it bare."""
    own = Path(sys.executable).absolute().parent / "rehydrate"
    if not own.is_file():
        pytest.skip("rehydrate is not installed beside this interpreter")
    folder = tmp_path / "on-path"
    folder.mkdir()
    (folder / "rehydrate").symlink_to(own)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin")
