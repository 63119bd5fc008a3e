"""The log as a graph: the files git's union merge makes of one actor's log written on two sides.

Each union here is git's own (`git merge-file --union`: base, then ours, then theirs), of two copies of one state
folder that each went on writing. The scan accepts it (every record's parents come earlier in the file, seq is a
generation number), a repeated record is information and read once, a record that only lost its newline is never cut,
and the next write joins the heads with a merge record.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.store.wal.forks import fork, heads_of, log_of, log_records, merged, union

from rehydrate.store.state import State
from rehydrate.store.wal import graph
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import scan as walscan


def _not_views(problems: list[Any]) -> list[str]:
    """The codes of problems other than a union-merged 99_next.md (view-merged: information, rewritten by the next
    write)."""
    return [p.code for p in problems if not (p.code == "view-merged" and p.file == "state/99_next.md")]


def test_a_union_of_two_sides_scans_clean_with_two_heads_and_seq_as_generation(tmp_path: Path) -> None:
    a, _ = merged(tmp_path)
    lines = log_records(Path(a.root))
    assert [x["seq"] for x in lines] == [1, 2, 3, 4, 5, 4, 5]  # each side's records from the fork's generation
    heads = heads_of(Path(a.root))
    assert [h["data"]["next"] for h in heads] == ["our next", "their next"]
    assert len(list(wallines.records(str(log_of(Path(a.root)))))) == 7
    snap_out = a.status()
    assert _not_views(snap_out.problems) == [], snap_out.problems
    assert [line["checkpoint"]["next"] for line in snap_out.merged or []] == ["our next", "their next"]


def test_a_record_whose_parent_is_not_earlier_is_chain_broken_and_a_wrong_generation_a_seq_gap(
    tmp_path: Path,
) -> None:
    a, _ = merged(tmp_path)
    log = log_of(Path(a.root))
    lines = log.read_bytes().splitlines()
    moved = [*lines[:3], lines[4], lines[3], *lines[5:]]  # a child before its parent
    log.write_bytes(b"\n".join(moved) + b"\n")
    assert [p.code for p in walscan.scan_log(str(log), "log")] == ["chain-broken"]
    rec = json.loads(lines[-1])
    forged = wal.seal({**rec, "seq": 7})  # its parent is seq 4: it must be 5
    log.write_bytes(b"\n".join([*lines[:-1], wal.encode(forged)[:-1]]) + b"\n")
    assert [p.code for p in walscan.scan_log(str(log), "log")] == ["seq-gap"]


def test_a_repeated_record_is_information_and_read_once(tmp_path: Path) -> None:
    """A cherry-pick merged again repeats a record's line (plan, experiment C)."""
    a, _ = merged(tmp_path)
    log = log_of(Path(a.root))
    lines = log.read_bytes().splitlines()
    log.write_bytes(b"\n".join([*lines, lines[-2]]) + b"\n")
    problems = walscan.scan_log(str(log), "log")
    assert [(p.code, p.line, p.info) for p in problems] == [("duplicate-record", 8, True)]
    assert len(list(wallines.records(str(log)))) == 7
    out = a.verify()
    assert _not_views(out.problems) == ["duplicate-record"], out
    a.invariant("after the merge", "joined")  # the repeat is not a head of its own: one merge joins two heads
    assert log_records(Path(a.root))[-2]["op"] == "merge"
    assert len(log_records(Path(a.root))[-2]["parents"]) == 1


def test_a_foreign_last_record_that_lost_its_newline_is_kept_not_cut(tmp_path: Path) -> None:
    """The other side's last record, last in the file after a union, without its newline: its prev is not the
    line before it, yet it is a whole valid record: the newline is put back, nothing is cut."""
    a, b, base = fork(tmp_path)
    a.reject("a regex parser", "it cannot nest")
    a.checkpoint(done="ours", next="our next")
    b.checkpoint(done="theirs", next="their next")  # one record: its prev is the base's last, not a's
    log = log_of(Path(a.root))
    log.write_bytes(union(log, base, log_of(Path(b.root)))[:-1])
    assert [p.code for p in walscan.scan_log(str(log), "log")] == ["missing-newline"]
    out = a.reconcile(repair=True)
    assert any("put back the final newline" in r for r in out.repaired), out
    assert not any("cut" in r for r in out.repaired), out
    assert not list(Path(a.root, "wal").glob("*.broken*"))
    assert len(log_records(Path(a.root))) == 6
    assert [p.code for p in walscan.scan_log(str(log), "log")] == []


def test_the_next_write_joins_the_heads_with_a_merge_record_until_a_checkpoint_chooses(tmp_path: Path) -> None:
    a, _ = merged(tmp_path)
    heads = heads_of(Path(a.root))
    out = a.invariant("after the merge", "joined")
    assert out.record is not None
    merge, own = log_records(Path(a.root))[-2:]
    assert merge["op"] == "merge" and merge["prev"] == heads[0]["h"] and merge["parents"] == [heads[1]["h"]]
    assert merge["seq"] == 6 and own["prev"] == merge["h"] and own["seq"] == 7
    assert [line["head"] for line in merge["data"]["lines"]] == [h["h"] for h in heads]
    assert [line["checkpoint"]["next"] for line in merge["data"]["lines"]] == ["our next", "their next"]
    assert Path(a.root, "99_next.md").read_text() == graph.render_merged(merge)
    assert own["views"]["99_next.md"] == merge["views"]["99_next.md"] == wal.sha256(graph.render_merged(merge).encode())
    assert len(heads_of(Path(a.root))) == 1
    status = a.status()
    assert status.ok and [line["branch"] for line in status.merged or []] == [None, None], status.problems
    assert a.verify().ok
    fresh = State.open(a.root)  # another process: from the cache (cheap path), the lines still shown
    assert [line["checkpoint"]["next"] for line in fresh.status().merged or []] == ["our next", "their next"]
    a.checkpoint(done="merged both", next="the chosen next")
    assert a.status().merged is None
    assert State.open(a.root).status().merged is None
    assert a.verify().ok


def test_a_second_write_does_not_merge_again(tmp_path: Path) -> None:
    a, _ = merged(tmp_path)
    a.invariant("one", "x")
    a.reject("two", "y")
    assert [x["op"] for x in log_records(Path(a.root))].count("merge") == 1


@pytest.mark.parametrize("rotating", ["ours", "theirs"])
def test_a_rotate_unioned_with_an_append_scans_clean(tmp_path: Path, rotating: str) -> None:
    """One side rotates (its log replaced by one record), the other appends: the union brings the archived records
    back, after the rotate line (ours rotated) or before it (theirs): both scan clean, with two heads."""
    a, b, base = fork(tmp_path)
    (a if rotating == "ours" else b).rotate()
    (b if rotating == "ours" else a).checkpoint(done="appended", next="the next")
    log_of(Path(a.root)).write_bytes(union(log_of(Path(a.root)), base, log_of(Path(b.root))))
    ops = [x["op"] for x in log_records(Path(a.root))]
    assert ops.count("rotate") == 1 and ops.count("checkpoint") == 2, ops
    heads = heads_of(Path(a.root))
    assert sorted(h["op"] for h in heads) == ["checkpoint", "rotate"]
    a.reconcile(repair=True)  # a rotate that is one of several heads is not "interrupted": the log is kept whole
    assert [x["op"] for x in log_records(Path(a.root))] == ops


def test_a_rotate_that_is_my_head_among_others_is_not_finished_as_interrupted(tmp_path: Path) -> None:
    """b rotated, then took a's appends with its rotate replayed on top (a rebase: theirs is b's): b's head is its
    rotate, not the log's first line. It is not an interrupted rotate: the log is never replaced by it."""
    a, b, base = fork(tmp_path)
    a.checkpoint(done="appended", next="the next")
    b.rotate()
    log = log_of(Path(b.root))
    log.write_bytes(union(log_of(Path(a.root)), base, log))
    ops = [x["op"] for x in log_records(Path(b.root))]
    assert ops[0] != "rotate", ops
    out = b.reconcile(repair=True)
    assert [x["op"] for x in log_records(Path(b.root))] == ops, out.repaired
    assert not any("rotate" in r for r in out.repaired)


def test_the_cache_of_earlier_versions_is_read_once_when_the_new_one_is_absent(tmp_path: Path) -> None:
    """An upgrade: what this clone saw is in state/wal/.agent.seen (the old place); it is read while the worktree's
    own cache is absent, so a rollback since the last command of the old version is still named; then left alone."""
    a, _, _ = fork(tmp_path)
    a.checkpoint(done="more", next="the lost next action")
    old = Path(a.root, "wal", ".agent.seen")
    shutil.copyfile(a.seen_path, old)
    os.unlink(a.seen_path)
    before = old.read_bytes()
    log = log_of(Path(a.root))
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))  # the last record is gone
    out = State.open(a.root).status()
    assert [p.code for p in out.problems if p.code != "view-edited"] == ["rolled-back"], out.problems  # (99 went on)
    assert "the lost next action" in next(p.message for p in out.problems if p.code == "rolled-back")
    assert old.read_bytes() == before and os.path.exists(a.seen_path)


def test_an_unchanged_merged_log_is_not_read_whole_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the one pass that found several heads, the next command neither checks the chain again nor builds the
    graph: it reads each head where the cache says (until the next write joins them), and the join is the same."""
    from rehydrate.store.wal import scan as walscan

    a, _ = merged(tmp_path)
    heads = heads_of(Path(a.root))
    assert len(State.open(a.root).status().merged or []) == 2  # the whole log, once

    def whole(*args: object, **kwargs: object) -> object:
        raise AssertionError("the log was read whole")

    monkeypatch.setattr(walscan, "scan", whole)  # the chain's pass (latches.py may still read 10's records: WP2)
    monkeypatch.setattr(graph, "Graph", whole)
    again = State.open(a.root)
    out = again.status()
    assert [line["checkpoint"]["next"] for line in out.merged or []] == ["our next", "their next"]
    again.invariant("joined", "from the cached heads")
    monkeypatch.undo()
    merge = log_records(Path(a.root))[-2]
    assert merge["op"] == "merge" and merge["prev"] == heads[0]["h"] and merge["parents"] == [heads[1]["h"]]
    assert [p.code for p in walscan.scan_log(str(log_of(Path(a.root))), "log")] == []
