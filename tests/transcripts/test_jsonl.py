"""jsonl.lines and records: a file read in blocks gives every line whole, numbered, in order; a line longer than
MAX_LINE comes back as None (skipped, never held), whatever the blocks' size."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rehydrate.transcripts import jsonl, model


def _expected(data: bytes, limit: int) -> list[tuple[int, bytes | None]]:
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()  # the file ends with a newline (or is empty): no line after it
    return [(n, None if len(p) > limit else p) for n, p in enumerate(parts, 1)]


@pytest.mark.parametrize("limit", [1, 2, 5, 16, 100, 64 << 20])
def test_lines_are_whole_numbered_and_the_long_ones_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE", limit)  # the blocks read are at most MAX_LINE bytes
    rng = random.Random(limit)
    path = tmp_path / "t.jsonl"
    for _ in range(60):
        lines = [b"x" * rng.choice([0, 1, 2, 4, 5, 6, 15, 16, 17, 99, 100, 101, 250]) for _ in range(rng.randrange(8))]
        data = b"\n".join(lines) + rng.choice([b"", b"\n", b"\n\n"])
        path.write_bytes(data)
        assert list(jsonl.lines(str(path))) == _expected(data, limit), (limit, data)


@pytest.mark.parametrize("block", [1, 3, 7, 64])
@pytest.mark.parametrize("limit", [5, 100, 64 << 20])
def test_lines_longer_than_a_block_come_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, limit: int
) -> None:
    """A line spread over many blocks (gathered in pieces, joined once) comes back whole, or as None past MAX_LINE."""
    monkeypatch.setattr(jsonl, "MAX_LINE", limit)
    rng = random.Random(block * limit)
    path = tmp_path / "t.jsonl"
    for _ in range(40):
        lines = [
            bytes(rng.choices(b"ab{}", k=rng.choice([0, 1, 4, 5, 6, 63, 64, 65, 99, 100, 101, 700]))) for _ in range(6)
        ]
        data = b"\n".join(lines) + rng.choice([b"", b"\n"])
        path.write_bytes(data)
        assert list(jsonl.lines(str(path), block)) == _expected(data, limit), (block, limit, data)


def test_records_counts_lines_bad_lines_and_keeps_the_kinds_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"type":"a"}\n\n  \n[1]\n{"type":"b"}\n{"type":\n{"type":"a","n":2}')
    session = model.Session(str(path), "claude")
    assert [(n, r["type"]) for n, r in jsonl.records(str(path), session)] == [(1, "a"), (5, "b"), (7, "a")]
    assert (session.lines, session.bad_lines) == (7, 2)
    session = model.Session(str(path), "claude")
    assert [n for n, _ in jsonl.records(str(path), session, kinds=("a",))] == [1, 7]
    assert (session.lines, session.bad_lines) == (7, 2)
    session = model.Session(str(path), "claude")
    refused = list(jsonl.records(str(path), session, wanted=lambda raw: b'"b"' not in raw))
    assert [n for n, _ in refused] == [1, 7] and (session.lines, session.bad_lines) == (7, 2)
