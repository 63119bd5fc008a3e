"""The library: State's behaviour on real folders (what the CLI tests do not reach directly)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from test_store_reads import Reads, big_wal

from rehydrate import brief
from rehydrate.errors import RehydrateError, StateMissing, UsageError
from rehydrate.store import views, wal
from rehydrate.store.state import State, check_lines


def _records(root: Path) -> list[dict]:
    return [json.loads(x) for x in (root / "wal" / "agent.jsonl").read_text().splitlines()]


def test_records_chain_and_bind_views(state: State) -> None:
    root = Path(state.root)
    recs = _records(root)
    assert [r["op"] for r in recs] == ["init", "invariant", "reject", "checkpoint"]
    assert recs[0]["prev"] is None and all(b["prev"] == a["h"] for a, b in itertools.pairwise(recs))
    for name in ("00_goal.md", "10_invariants.md", "99_next.md"):
        assert recs[-1]["views"][name] == wal.sha256((root / name).read_bytes())
    inv = recs[1]["data"]
    assert inv["line_sha256"] == wal.sha256(inv["line"].encode())
    assert (root / "10_invariants.md").read_text().endswith(inv["line"] + "\n" + recs[2]["data"]["line"] + "\n")


def test_checkpoint_carries_the_goal_and_renders_multiline(state: State) -> None:
    state.checkpoint(done="a\nb", next="c", goal="Part 2\nwith detail")
    state.checkpoint(done="d", next="e")
    text = Path(state.path("99_next.md")).read_text()
    assert views.parse_next(text) == {"goal": "Part 2\nwith detail", "done": "d", "next": "e"}
    assert text.startswith("# Next (checkpoint 6, ")


def test_hand_edited_next_is_kept_not_overwritten(state: State) -> None:
    p = Path(state.path("99_next.md"))
    p.write_text("my own notes\n")
    out = state.verify()
    assert [x.code for x in out.problems] == ["view-edited"]
    cp = state.checkpoint(done="x", next="y")
    assert any("99_next.md.edited" in r for r in cp.repaired)
    assert Path(state.path("99_next.md.edited")).read_text() == "my own notes\n"
    assert state.verify().ok


def test_handoff_written_by_hand_is_reported_then_kept(state: State) -> None:
    Path(state.path("20_handoff.md")).write_text("typed by hand\n")
    assert [p.code for p in state.verify().problems] == ["view-unrecorded"]
    state.handoff("through the WAL")
    assert Path(state.path("20_handoff.md.edited")).read_text() == "typed by hand\n"
    assert Path(state.path("20_handoff.md")).read_text() == "through the WAL\n"
    assert state.verify().ok


def test_lines_added_by_hand_are_adopted_by_the_next_write(state: State) -> None:
    p = Path(state.path("10_invariants.md"))
    p.write_text(p.read_text() + "- a note typed by hand\n")
    out = state.verify()
    assert [(x.code, x.line) for x in out.problems] == [("unrecorded-line", 8)]
    state.checkpoint(done="x", next="y")
    recs = _records(Path(state.root))
    assert recs[-2]["op"] == "invariant" and recs[-2]["data"] == {
        "adopted": True,
        "line": "- a note typed by hand",
        "line_sha256": wal.sha256(b"- a note typed by hand"),
    }
    assert state.verify().ok


def test_goal_rewrite_is_a_latch_violation_named_by_line(state: State) -> None:
    p = Path(state.path("00_goal.md"))
    p.write_text(p.read_text().replace("Ship the parser", "Ship something else"))
    (problem,) = state.verify().problems
    assert (problem.code, problem.file, problem.line) == ("latch-violation", "state/00_goal.md", 3)
    # never overwritten, not even by a write
    state.checkpoint(done="x", next="y")
    assert "Ship something else" in p.read_text()


def test_deleted_views_are_restored_from_the_wal(state: State) -> None:
    before = {n: Path(state.path(n)).read_bytes() for n in ("00_goal.md", "10_invariants.md", "99_next.md")}
    for n in before:
        Path(state.path(n)).unlink()
    out = state.verify()
    assert {p.code for p in out.problems} == {"view-lags"} and all(p.repairable for p in out.problems)
    state.verify(repair=True)
    assert {n: Path(state.path(n)).read_bytes() for n in before} == before
    assert state.verify().ok


def test_damage_before_the_tail_is_refused_with_its_line(state: State) -> None:
    p = Path(state.root) / "wal" / "agent.jsonl"
    lines = p.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"reject"', b'"rejekt"')
    p.write_bytes(b"\n".join(lines))
    with pytest.raises(RehydrateError, match="line 3"):
        state.checkpoint(done="x", next="y")
    problems = state.verify().problems
    assert ("damaged-record", 3) in [(x.code, x.line) for x in problems]


def test_rotate_keeps_bindings_and_finishes_when_interrupted(state: State) -> None:
    out = state.rotate()
    root = Path(state.root)
    archive = root / out.record["data"]["archive"]
    assert archive.read_bytes().endswith(wal.encode(out.record))
    assert (root / "wal" / "agent.jsonl").read_bytes() == wal.encode(out.record)
    assert out.record["data"]["goal"] == {"goal": "Ship the parser", "done_when": "all tests pass"}
    assert len(out.record["data"]["lines"]) == 5  # three header lines, the decision, the rejected approach
    state.checkpoint(done="after", next="more")
    assert state.verify().ok
    # a rotate interrupted after its record: the next command finishes it
    log = root / "wal" / "agent.jsonl"
    before = log.read_bytes()
    last = _records(root)[-1]
    rec = wal.seal(
        {
            **last,
            "seq": last["seq"] + 1,
            "prev": last["h"],
            "op": "rotate",
            "data": {**out.record["data"], "archive": "archive/manual.jsonl"},
        }
    )
    with open(log, "ab") as f:
        f.write(wal.encode(rec))
    assert [p.code for p in state.verify().problems] == ["interrupted-rotate"]
    state.verify(repair=True)
    assert (root / "archive" / "manual.jsonl").read_bytes() == before + wal.encode(rec)
    assert log.read_bytes() == wal.encode(rec)
    assert state.verify().ok


def test_resume_is_logged_and_reads_only_the_tail(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    size = big_wal(state, 6)  # ends with the same checkpoint as the fixture's
    reads = Reads(monkeypatch)  # every byte read through os.read, os.pread and the WAL's line reader
    r = brief.resume(state)
    assert r.confidence == "recovered" and r.record["op"] == "resume"
    assert r.record["data"]["checks"] == {"identity": "ok", "state": "ok"}
    assert "next safe action: write the parser" in r.text
    assert reads.total < size // 8, f"resume read {reads.total:,} bytes of a {size:,}-byte WAL"


def test_init_refuses_stray_views_and_bad_actor(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "99_next.md").write_text("x")
    with pytest.raises(RehydrateError, match="exists but no WAL"):
        State.init(tmp_path / "state", "g")
    with pytest.raises(UsageError):
        State.init(tmp_path / "s2", "g", actor="../evil")
    with pytest.raises(StateMissing):
        State.open(tmp_path / "nowhere")


def test_check_lines_names_each_kind_of_violation() -> None:
    rec = {"a": ["- D-aaaaaa x", "- D-bbbbbb y", "- D-cccccc z"]}
    assert check_lines(["- D-aaaaaa x", "- D-bbbbbb y", "- D-cccccc z"], rec) == ([], [])
    v, u = check_lines(["- D-aaaaaa x", "- D-bbbbbb CHANGED", "- D-cccccc z", "extra"], rec)
    assert [(c, n) for c, n, _ in v] == [("latch-changed", 2)] and u == [4]
    v, _ = check_lines(["- D-aaaaaa x", "- D-cccccc z"], rec)
    assert [(c, n) for c, n, _ in v] == [("latch-missing", 2)]
    v, _ = check_lines(["- D-bbbbbb y", "- D-aaaaaa x", "- D-cccccc z"], rec)
    assert [(c, n) for c, n, _ in v] == [("latch-reordered", 1)]
    # two actors' lines interleaved by a merge, each in its own order: fine
    two = {"a": ["- D-aaaaaa x", "- D-cccccc z"], "b": ["- D-bbbbbb y"]}
    assert check_lines(["- D-aaaaaa x", "- D-bbbbbb y", "- D-cccccc z"], two) == ([], [])
