"""audit.boundary (audit/boundary.py): each compaction's prefix copied from at most COPIED bytes before it, from the
start of a line, and the byte offsets of lines; the loss window the audit then reports starts at the copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rehydrate import audit
from rehydrate.audit.boundary import copy_prefix, offsets
from rehydrate.harness.compaction import capture as precompact


def test_a_prefix_copy_is_bounded_and_starts_at_a_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each compaction's prefix is copied from at most COPIED bytes before it (what the capture may read
    back), from the start of a line."""
    lines = [json.dumps({"n": n, "pad": "x" * (n % 50)}).encode() for n in range(2000)]
    path, copy = tmp_path / "s.jsonl", tmp_path / "copy.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    end = len(b"\n".join(lines[:1500])) + 1  # the start of line 1501
    assert copy_prefix(str(path), end, str(copy)) == 0
    assert copy.read_bytes() == b"\n".join(lines[:1500]) + b"\n"
    monkeypatch.setattr("rehydrate.audit.boundary.COPIED", 5000)
    start = copy_prefix(str(path), end, str(copy))
    data = copy.read_bytes()
    assert len(data) <= 5000 and data.endswith(lines[1499] + b"\n") and path.read_bytes()[start:end] == data
    assert json.loads(data.split(b"\n")[0])["n"] > 1300  # whole lines only
    assert offsets(str(path), [1501, 1, 2001, 5000]) == {1: 0, 1501: end, 2001: path.stat().st_size}
    prompts = [
        {"type": "user", "timestamp": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z", "message": {"content": f"p{n}"}}
        for n in range(300)
    ]
    boundary = {"type": "system", "subtype": "compact_boundary", "timestamp": "2026-01-01T01:00:00Z"}
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(r) + "\n" for r in [*prompts, boundary]))
    (c,) = audit.report([str(session)], capture=precompact.capture)["sessions"][0]["compactions"]
    at = session.stat().st_size - len(json.dumps(boundary)) - 1
    window = c["loss"]["window"]  # in the file's own offsets, cut at the copy's start (whole lines of ~90 bytes)
    assert window["to"] == at and window["cut"] and at - 5000 <= window["from"] < at - 4800
    assert [f["text"] for f in c["loss"]["facts"] if f["kind"] == "request"] == ["p297", "p298", "p299"]
