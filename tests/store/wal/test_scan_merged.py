"""What the first command after a change made outside rehydrate reads, and holds: a log that is one line is checked
in one pass whose memory does not grow with the log; a merged log (several lines of work) is read once, and what
came before its first record off the line read back once, parsed: the index and the recorded lines of
10_invariants.md come from those two reads (never a third one for the graph or the latch check)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from conftest import git
from rehydrate.store.local.rollback import ScanInfo
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import scan as walscan


def _merged(repo: Path) -> State:
    """main and feat each recorded entries and checkpoints from one committed state; main rebased on feat (union)."""
    st, _ = State.init(repo / "state", "Ship the parser", None)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state")
    for side in ("feat", "main"):
        git(repo, "checkout", "-q", "-b" if side == "feat" else "", side) if side == "feat" else git(
            repo, "checkout", "-q", "main"
        )
        st = State.open(str(repo / "state"))
        for i in range(3):
            st.invariant(f"{side} decision {i}", because="measured")
            st.checkpoint(done=f"{side} {i}", next=f"{side} next {i}")
        git(repo, "commit", "-qam", side)
    git(repo, "rebase", "-q", "feat")  # main's commits replayed after feat's: 10 starts with feat's lines, the
    return State.open(str(repo / "state"))  # binding main's last record holds is no prefix of it: checked whole


def test_the_first_command_after_a_rebase_reads_the_log_once_and_its_start_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(repo, "checkout", "-q", "-B", "main")
    st = _merged(repo)
    reads: list[int | None] = []  # each read of the log: where it stopped (None: its end)
    real = wallines.iter_lines

    def counted(path: str, end: int | None = None):  # type: ignore[no-untyped-def]
        if path == st.wal_path:
            reads.append(end)
        return real(path, end)

    inv = repo / "state" / "10_invariants.md"  # an entry of the other line of work edited: named from its record
    inv.write_text(inv.read_text().replace("feat decision 1 because", "feat decision one because"))
    monkeypatch.setattr(wallines, "iter_lines", counted)
    out = st.status()
    assert out.merged is not None and len(out.merged) == 2, out.merged  # the two lines of work, found
    assert [(p.code, p.line) for p in out.problems if p.code.startswith("latch")] == [("latch-changed", 7)]
    # the check, reading back once what came before the first record off the line (feat's, before main's first):
    # the index and the recorded lines come from those two reads, no third one
    size = Path(st.wal_path).stat().st_size
    assert len(reads) == 2 and reads[0] is None and reads[1] is not None and 0 < reads[1] < size, reads


def _linear_log(path: Path, n: int) -> None:
    """A log of n records on one line (an init, then checkpoints and decisions), written directly."""
    rec = wal.seal(
        {
            "v": 1,
            "seq": 1,
            "ts": "2026-12-01T00:00:00.000Z",
            "actor": "agent",
            "op": "init",
            "data": {"goal": "g", "header": "# Decisions"},
            "views": {},
            "prev": None,
        }
    )
    lines = [wal.encode(rec)]
    for i in range(2, n + 1):
        op, data = (
            ("invariant", {"line": f"- D-{i:06x} decision {i}"})
            if i % 5 == 0
            else ("checkpoint", {"goal": "g", "done": "d", "next": "x"})
        )
        rec = wal.seal(
            {
                "v": 1,
                "seq": i,
                "ts": "2026-12-01T00:00:00.000Z",
                "actor": "agent",
                "op": op,
                "data": data,
                "views": {},
                "prev": rec["h"],
            }
        )
        lines.append(wal.encode(rec))
    path.write_bytes(b"".join(lines))


def _peak(path: Path) -> int:
    info = ScanInfo.of(None)
    tracemalloc.start()
    try:
        walscan.check_chain(str(path), "wal/agent.jsonl", None, info.add, info.heads)
        _ = info.seen
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_pass_over_a_log_that_is_one_line_holds_what_it_shows_not_what_it_read(tmp_path: Path) -> None:
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    _linear_log(small, 1_000)
    _linear_log(big, 8_000)
    assert big.stat().st_size > 7 * small.stat().st_size
    grown = _peak(big) - _peak(small)
    # the decisions' lines are kept (what 10_invariants.md shows: 1,400 more of them); nothing per record
    assert grown < 400_000, grown
