"""store/write/rules.py: what every write checks first (a state file it must not write through), the entry ids it
mints, the old .gitattributes it upgrades, and rotate."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store.wal.forks import fork

from rehydrate.errors import RehydrateError
from rehydrate.store import Problem, layout
from rehydrate.store.session import Snapshot
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.write import rules


def _snap(*problems: Problem) -> Snapshot:
    return Snapshot({"seq": 1}, None, list(problems), [])


def test_a_write_is_refused_through_an_unsafe_file_or_into_a_conflicted_view(state: State) -> None:
    rules.refuse_unsafe(state, _snap())
    fifo = Problem("not-regular-file", "state/99_next.md", None, "state/99_next.md is a FIFO")
    with pytest.raises(RehydrateError, match=r"refusing to write: state/99_next\.md is a FIFO"):
        rules.refuse_unsafe(state, _snap(fifo))
    conflict = Problem("merge-conflict", "state/99_next.md", 3, "finish the merge")
    rules.refuse_unsafe(state, _snap(conflict), (layout.INVARIANTS,))  # a view this write does not change
    with pytest.raises(RehydrateError, match=r"state/99_next\.md line 3 holds an unresolved git merge conflict"):
        rules.refuse_unsafe(state, _snap(conflict), (layout.NEXT,))


def test_an_entry_is_minted_from_its_actor_time_and_text(state: State) -> None:
    data = {"text": "Keep the parser pure", "because": "tests", "guard": "src/*.py"}
    ts = rules.mint_entry(state, data, "reject")
    assert data["id"] == "R-" + wal.sha256(f"agent\0{ts}\0Keep the parser pure".encode())[:6]
    assert data["line"] == f"- {data['id']} {ts[:10]} rejected: Keep the parser pure because: tests guard: src/*.py"
    assert data["line_sha256"] == wal.sha256(data["line"].encode())


def test_the_old_gitattributes_is_upgraded_and_an_edited_one_left_alone(state: State) -> None:
    attrs = Path(state.root, layout.GITATTRIBUTES)
    attrs.write_text(layout.GITATTRIBUTES_V1)
    snap = _snap()
    rules.upgrade_attributes(state, snap)
    assert attrs.read_text() == layout.GITATTRIBUTES_TEXT
    assert snap.repaired[0].startswith("upgraded state/.gitattributes to merge logs with git's union driver")
    attrs.write_text(layout.GITATTRIBUTES_V1 + "*.bin binary\n")
    snap = _snap()
    rules.upgrade_attributes(state, snap)
    assert attrs.read_text() == layout.GITATTRIBUTES_V1 + "*.bin binary\n" and snap.repaired == []


def test_rotate_archives_the_log_and_starts_it_again(state: State) -> None:
    ops = [rec["op"] for rec in wallines.records(state.wal_path)]
    out = rules.rotate(state)
    assert out.record is not None and out.record["op"] == "rotate"
    assert [rec["op"] for rec in wallines.records(state.wal_path)] == ["rotate"]
    (archive,) = Path(state.root, "archive").iterdir()
    assert out.record["data"]["archive"] == f"archive/{archive.name}"
    assert [rec["op"] for rec in wallines.records(str(archive))] == [*ops, "rotate"]  # the rotate record too


def test_a_write_upgrades_the_old_gitattributes_and_leaves_an_edited_one_alone(tmp_path: Path) -> None:
    a, b, _ = fork(tmp_path)
    for state, text in ((a, layout.GITATTRIBUTES_V1), (b, layout.GITATTRIBUTES_V1 + "*.bin binary\n")):
        Path(state.root, ".gitattributes").write_text(text)
    assert not any("gitattributes" in r for r in a.status().repaired)  # a read leaves it
    assert Path(a.root, ".gitattributes").read_text() == layout.GITATTRIBUTES_V1
    out = a.invariant("one", "x")
    assert Path(a.root, ".gitattributes").read_text() == layout.GITATTRIBUTES_TEXT
    assert any("upgraded state/.gitattributes" in r and "union" in r for r in out.repaired), out.repaired
    out = b.invariant("one", "x")
    assert Path(b.root, ".gitattributes").read_text() == layout.GITATTRIBUTES_V1 + "*.bin binary\n"
    assert not any("gitattributes" in r for r in out.repaired)
