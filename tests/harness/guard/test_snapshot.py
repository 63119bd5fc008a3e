"""The check by effect's snapshot (harness/guard/snapshot.py) on real files: built from the watches (a path, a glob,
never a command pattern nor a file outside the project), saved whole and read back, and compared with the files: a
change named with the rejected approaches that apply, put back from its copy when the user asked for restores."""

from __future__ import annotations

import os
from pathlib import Path

from rehydrate.harness.base import Located
from rehydrate.harness.guard import snapshot


def _restore(root: Path, wanted: bool) -> snapshot.Restore:
    restore = snapshot.Restore(Located(None, str(root)))
    restore.known = wanted
    return restore


def test_built_saved_read_and_compared(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "calc").mkdir(parents=True)
    (project / "calc" / "eval.py").write_text("generated\n")
    (project / "calc" / "ops.py").write_text("x = 1\n")
    (project / "notes.txt").write_text("n\n")
    (tmp_path / "outside.txt").write_text("mine\n")
    root = project / "state"
    root.mkdir()
    found: list[tuple[str | None, str | None, str]] = [
        ("calc/*.py", None, "- R-000001 rejected: hand-write calc"),
        ("db/schema.sql", None, "- R-000002 rejected: edit the schema"),
        ("calc/ops.py", "eval(", "- R-000003 rejected: eval"),
        ("npm install", None, "- R-000004 rejected: npm"),  # a command pattern: checked before the call only
        ("../outside.txt", None, "- R-000005 rejected: outside"),  # never a file outside the project
    ]
    snap = snapshot.build(str(root), None, found)
    files = {os.path.relpath(p, project): entry for p, entry in snap["files"].items()}
    assert sorted(files) == ["calc/eval.py", "calc/ops.py", "db/schema.sql"]
    assert files["calc/ops.py"][4] == [0, 2] and files["db/schema.sql"][3] == ""  # absent: no sha256
    assert snap["capped"] is False

    folder = tmp_path / "guard"
    snapshot.save(str(folder), "view-1", snap, _restore(root, True))
    head, body = snapshot.read(str(folder / snapshot.SNAPSHOT))
    assert head == ("view-1", 5 + 3) and snapshot.parse(body) == snap
    assert len(os.listdir(folder / "copies")) == 2  # the two files that exist, by their sha256

    (project / "calc" / "eval.py").write_text("written by hand\n")
    (project / "calc" / "ops.py").write_text("y = 2\n")  # no eval(: only the guard without a text applies
    (project / "db").mkdir()
    (project / "db" / "schema.sql").write_text("create table t;\n")
    changes = snapshot.compare(snap, _restore(root, True), str(folder), str(project))
    named = {os.path.relpath(c["path"], project): (c["how"], c["lines"], c["restored"]) for c in changes}
    assert named == {
        "calc/eval.py": ("changed", ["- R-000001 rejected: hand-write calc"], True),
        "calc/ops.py": ("changed", ["- R-000001 rejected: hand-write calc"], True),
        "db/schema.sql": ("created", ["- R-000002 rejected: edit the schema"], False),  # named, never removed
    }
    assert (project / "calc" / "eval.py").read_text() == "generated\n"  # put back from its copy
    assert (project / "db" / "schema.sql").exists()
    assert snapshot.compare(snap, _restore(root, True), str(folder), str(project)) == []  # brought up to date


def test_a_damaged_or_foreign_snapshot_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / snapshot.SNAPSHOT
    assert snapshot.read(str(path)) == (None, b"")
    for data in (b"", b"another-tool 1 view 3\n{}", f"{snapshot.MAGIC} view x\n{{}}".encode()):
        path.write_bytes(data)
        assert snapshot.read(str(path)) == (None, b""), data
    assert snapshot.parse(b"[1]") is None and snapshot.parse(b"{not json") is None
