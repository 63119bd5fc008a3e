"""cursor.verify: the quick check reads only the output's end, and names at the tail what the whole check names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rehydrate import cursor

DEEP = b"[" * 100_000 + b"]" * 100_000  # past any recursion limit of the standard parser


def lines(*records: dict[str, object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


@pytest.mark.parametrize(
    ("output", "progress"),
    [
        (lines({"index": 0}, {"index": 1}), b'{"cursor": 2}'),
        (lines({"index": 0}, {"index": 1}), b'{"cursor": 5}'),
        (lines({"index": 0}, {"index": 1}), b'{"cursor": 1}'),
        (lines({"index": 0}, {"index": 1}) + b'{"index": 2', b'{"cursor": 2}'),
        (lines({"index": 0}, {"index": 1}) + b"\n", b'{"cursor": 2}'),
        (lines({"index": 0}, {"index": 1}) + b"not json\n", b'{"cursor": 2}'),
        (lines({"index": 0}, {"index": 1}, {"index": 1}), b'{"cursor": 2}'),
        (lines({"index": 0}, {"index": 1}, {"index": 0}), b'{"cursor": 2}'),
        (lines({"index": 0}, {"index": 1}, {"index": 5}), b'{"cursor": 6}'),
        (lines({"index": 0}) + DEEP + b"\n", b'{"cursor": 1}'),
        (lines({"index": 0}), DEEP),
        (b"", b'{"cursor": 0}'),
        (b"", b'{"cursor": 3}'),
    ],
)
def test_the_quick_check_names_what_verify_names_at_the_tail(tmp_path: Path, output: bytes, progress: bytes) -> None:
    (tmp_path / "out.jsonl").write_bytes(output)
    (tmp_path / "progress.json").write_bytes(progress)
    full = cursor.check(str(tmp_path / "out.jsonl"), str(tmp_path / "progress.json"))
    quick = cursor.quick_check(str(tmp_path / "out.jsonl"), str(tmp_path / "progress.json"))
    assert [p.code for p in quick.problems] == [p.code for p in full.problems]
    assert [p.message for p in quick.problems] == [p.message for p in full.problems]
    assert (quick.cursor, quick.last_index) == (full.cursor, full.last_index)
    assert getattr(quick, "unchecked", None) is None
