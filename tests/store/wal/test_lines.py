"""store/wal/lines.py: a log read line by line, in bounded memory, with its first bad line named."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate.errors import RehydrateError
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines


def test_every_line_is_numbered_with_its_offset_and_the_last_without_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"one\ntwo\nthree")
    got = [(x.number, x.offset, x.raw, x.newline) for x in wallines.iter_lines(str(path))]
    assert got == [(1, 0, b"one", True), (2, 4, b"two", True), (3, 8, b"three", False)]
    assert [x.raw for x in wallines.iter_lines(str(path), end=4)] == [b"one"]
    assert list(wallines.iter_lines(str(tmp_path / "missing"))) == []
    assert wallines.line_number(str(path), 0) == 1 and wallines.line_number(str(path), 9) == 3


def test_the_first_record_and_the_first_bad_line_of_a_log(state: State) -> None:
    log = Path(state.wal_path)
    assert wallines.first_record(state.wal_path, "wal/agent.jsonl")["op"] == "init"
    assert wallines.first_bad_line(state.wal_path) is None
    n = len(log.read_bytes().splitlines())
    with open(log, "ab") as f:
        f.write(b'{"not": "a record"}\n')
    bad = wallines.first_bad_line(state.wal_path)
    assert bad is not None and bad[0] == n + 1 and bad[3] is True
    with open(log, "ab") as f:
        f.write(b"after\n")
    bad = wallines.first_bad_line(state.wal_path)
    assert bad is not None and bad[0] == n + 1 and bad[3] is False
    assert next(rec["op"] for rec in wallines.records(state.wal_path)) == "init"
    log.write_bytes(b"garbage\n" + log.read_bytes())
    with pytest.raises(RehydrateError, match=r"the first line of wal/agent\.jsonl is damaged"):
        wallines.first_record(state.wal_path, "wal/agent.jsonl")


def test_a_conflicted_log_is_named_at_its_first_marker(tmp_path: Path) -> None:
    path = tmp_path / "agent.jsonl"
    path.write_bytes(b"{}\n<<<<<<< HEAD\n{}\n=======\n>>>>>>> theirs\n")
    e = wallines.conflicted(str(path), "wal/agent.jsonl")
    assert str(e).startswith("wal/agent.jsonl line 2: an unresolved git merge conflict (3 marker line(s))")
