"""store/evidence.py on what a planted record can hold: the set in force is capped as a write caps it, and a recorded
path is hashed only when it is a plain path inside the project that no symlink bends."""

from __future__ import annotations

import os
from pathlib import Path

from rehydrate.store import evidence

SHA = "a" * 64


def test_the_set_in_force_is_capped_and_filtered() -> None:
    planted = {f"f{n}.txt": SHA for n in range(evidence.MAX_STAMPS + 500)}
    planted.update({"../secret": SHA, "/etc/passwd": SHA, "a/./b": SHA, "ok.txt": "not a hash"})
    force = evidence.in_force({"stamps": planted, "approvals": {"x": {"sha256": SHA}}})
    assert len(force["stamps"]) == evidence.MAX_STAMPS and force["approvals"] == {}
    assert not {"../secret", "/etc/passwd", "a/./b", "ok.txt"} & set(force["stamps"])
    assert evidence.in_force("not a dict") == evidence.empty()


def test_a_recorded_path_through_a_symlink_is_not_hashed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("x\n")
    os.symlink(".", project / "loop")
    os.symlink(tmp_path, project / "out")
    (tmp_path / "secret.txt").write_text("secret\n")
    assert evidence.check_file(str(project), "src/app.py") is not None
    assert evidence.check_file(str(project), "loop/loop/src/app.py") is None
    assert evidence.check_file(str(project), "out/secret.txt") is None
    assert evidence.check_file(str(project), "../secret.txt") is None
