"""store/evidence/paths.py: a recorded path is hashed only when it is a plain path inside the project that no
symlink bends."""

from __future__ import annotations

import os
from pathlib import Path

from rehydrate.store.evidence import paths


def test_a_recorded_path_through_a_symlink_is_not_hashed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("x\n")
    os.symlink(".", project / "loop")
    os.symlink(tmp_path, project / "out")
    (tmp_path / "secret.txt").write_text("secret\n")
    assert paths.check_file(str(project), "src/app.py") is not None
    assert paths.check_file(str(project), "loop/loop/src/app.py") is None
    assert paths.check_file(str(project), "out/secret.txt") is None
    assert paths.check_file(str(project), "../secret.txt") is None
