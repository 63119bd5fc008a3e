"""store/wal/back.py: the end of a log read without reading the rest: its last records, a torn last line, damage
before it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.store.wal.forks import heads_of, log_of, merged

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.store.state import State
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines


def test_the_tail_is_the_last_records_with_their_offsets(state: State) -> None:
    everything = list(wallines.parsed(state.wal_path))
    t = walback.read_tail(state.wal_path, 2)
    assert [off for off, _ in t.records] == [off for off, _ in everything[-2:]]
    assert t.records[-1][1]["op"] == "checkpoint" and t.torn == b""
    off, last = everything[-1]
    assert walback.read_at(state.wal_path, off) == last
    assert walback.read_at(state.wal_path, off + 1) is None


def test_a_torn_last_line_is_returned_not_raised(state: State) -> None:
    size = Path(state.wal_path).stat().st_size
    with open(state.wal_path, "ab") as f:
        f.write(b'{"seq": 9, "op": "chec')
    t = walback.tail(state.wal_path, "wal/agent.jsonl")
    assert t.torn == b'{"seq": 9, "op": "chec' and t.torn_offset == size
    assert t.torn_reason == "the last line has no newline (a torn write)"
    assert t.records[-1][1]["op"] == "checkpoint"


def test_damage_before_the_last_line_and_a_missing_log_are_errors(state: State, tmp_path: Path) -> None:
    log = Path(state.wal_path)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-2]) + b"damaged\n" + lines[-1])
    with pytest.raises(RehydrateError, match=r"wal/agent\.jsonl is damaged before its last line \(line "):
        walback.tail(state.wal_path, "wal/agent.jsonl")
    with pytest.raises(StateMissing, match=r"no WAL at wal/x\.jsonl"):
        walback.tail(str(tmp_path / "x.jsonl"), "wal/x.jsonl")


def test_reading_back_along_one_line_skips_the_other_lines_records(tmp_path: Path) -> None:
    """walback.along: the records of my line, newest first, from a union-merged log read backwards."""
    a, _ = merged(tmp_path)
    mine, theirs = heads_of(Path(a.root))
    path = str(log_of(Path(a.root)))
    ops = [rec["op"] for _, rec in walback.along(walback.Back(path, 1 << 20), mine["h"])]
    assert ops == ["checkpoint", "reject", "checkpoint", "invariant", "init"]
    nexts = [rec["data"].get("next") for _, rec in walback.along(walback.Back(path, 1 << 20), theirs["h"])]
    assert nexts == ["their next", None, "split the work", None, None]
