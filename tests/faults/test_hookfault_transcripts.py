"""Transcripts as hostile input: JSON nested too deeply, FIFOs and devices, and a huge last line read backwards.

A transcript comes from a harness or from anyone who can write a file where `audit` looks: no input may raise
(RecursionError included, under both parsers), block (a FIFO) or cost more than linear time (the Stop hook reads the
transcript backwards within its 10 s timeout).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from rehydrate.transcripts import jsonl, reader
from rehydrate.transcripts.claude.read import tool_calls_since

DEEP = b"[" * 100_000 + b"]" * 100_000  # past any parser's limit: json raises RecursionError, orjson a ValueError
NEAR = 1010  # within a record, under orjson's limit of 1024 (it parses); past what json.dumps and repr follow (3.11)


NESTED = "@nested@"  # in a record given to _line: stands for a value nested NEAR levels deep


def _line(rec: dict[str, Any]) -> bytes:
    """One JSONL line; each NESTED value becomes an array nested NEAR levels deep (which json.dumps cannot write)."""
    deep = b"[" * NEAR + b'"x"' + b"]" * NEAR
    return json.dumps(rec).encode().replace(b'"' + NESTED.encode() + b'"', deep) + b"\n"


def _claude(tmp_path: Path) -> Path:
    """A Claude Code transcript whose every kind of field is nested too deeply somewhere, one record per way."""
    at = "2999-01-01T00:00:00.000Z"
    deep_input = {"type": "tool_use", "id": "toolu_deep", "name": "Edit", "input": {"x": NESTED}}
    odd_name = {"type": "tool_use", "id": NESTED, "name": NESTED, "input": {"file_path": "a.py"}}
    body = [
        DEEP + b"\n",  # the first line: what detect() reads
        _line({"type": "user", "timestamp": at, "message": {"content": "go"}}),
        _line({"type": "assistant", "timestamp": at, "message": {"id": "m1", "content": [deep_input]}}),
        _line({"type": "assistant", "timestamp": at, "message": {"id": "m2", "content": [odd_name]}}),
        _line({"type": NESTED, "subtype": NESTED, "timestamp": at}),
        _line(
            {
                "type": "user",
                "timestamp": at,
                "message": {"content": [{"type": "tool_result", "tool_use_id": NESTED, "content": NESTED}]},
            }
        ),
        b'{"type": "assistant", "message": ' + DEEP + b"}\n",
        _line({"type": "system", "subtype": "compact_boundary", "timestamp": at, "compactMetadata": {"preTokens": 9}}),
        _line({"type": "user", "sessionId": "s", "timestamp": at, "message": {"content": "last"}}),
    ]
    path = tmp_path / "claude.jsonl"
    path.write_bytes(b"".join(body))
    return path


def _codex(tmp_path: Path) -> Path:
    at = "2026-01-25T10:32:09.000Z"

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": at, "type": "response_item", "payload": payload}

    deep_text = DEEP.decode()
    body = [
        _line({"timestamp": at, "type": "session_meta", "payload": {"id": "x"}}),
        _line(item({"type": "function_call", "name": "shell", "arguments": deep_text, "call_id": "c1"})),
        _line(item({"type": "function_call", "name": NESTED, "arguments": NESTED, "call_id": "c2"})),
        _line(item({"type": "function_call_output", "call_id": "c1", "output": deep_text})),
        _line(item({"type": "function_call_output", "call_id": "c2", "output": NESTED})),
        _line(item({"type": "function_call_output", "call_id": NESTED, "output": "x"})),
        _line(
            {
                "timestamp": at,
                "type": "event_msg",
                "payload": {"type": "token_count", "info": {"total_token_usage": {"total_tokens": NESTED}}},
            }
        ),
        _line({"timestamp": at, "type": "event_msg", "payload": {"type": "user_message", "message": "hi"}}),
    ]
    path = tmp_path / "codex.jsonl"
    path.write_bytes(b"".join(body))
    return path


@pytest.fixture(params=["fast parser", "json"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both parsers audit can run on: orjson when installed, and the standard json it falls back to."""
    if request.param == "json":
        monkeypatch.setattr(jsonl, "_loads", json.loads)
    return str(request.param)


def test_json_nested_too_deeply_is_a_bad_line_under_both_parsers(tmp_path: Path, parser: str) -> None:
    fast = jsonl.json_parser() is not json.loads  # orjson parses the records nested NEAR deep; json may give up
    claude = _claude(tmp_path)
    assert reader.detect(str(claude)) == "claude"  # its first line is the deep one: skipped, not raised
    s = reader.read(str(claude))
    assert s.harness == "claude" and s.lines == 9 and s.bad_lines >= 2
    assert [c.line for c in s.compactions] == [8] and s.user_turns == 2
    if fast:  # the call's key (its input as canonical JSON) is too deep for json.dumps on 3.11
        assert [c.name for c in s.tool_calls if c.ident == "toolu_deep"] == ["Edit"]
    assert [r["message"]["content"] for r in reader.tail(str(claude), 1)] == ["last"]
    assert len(list(jsonl.newer_than(str(claude), ""))) >= 3
    codex = _codex(tmp_path)
    c = reader.read(str(codex), "codex")
    idents = [t.ident for t in c.tool_calls]
    allowed = [["c1", "c2"]] if fast else [["c1"], ["c1", "c2"]]  # json parses NEAR-deep lines where its stack allows
    assert c.harness == "codex" and c.user_turns == 1 and idents in allowed


def test_audit_reports_a_transcript_whose_first_line_is_too_deep(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "deep.jsonl").write_bytes(DEEP + b"\n")
    _claude(folder)
    _codex(folder)
    r = rehydrate("audit", str(folder), "--json")
    assert r.code == 0 and "Traceback" not in r.err, r.err
    data = json.loads(r.out)
    assert data["summary"]["files"] == 3 and data["summary"]["compactions"] == 1 and data["errors"] == []
    text = rehydrate("audit", str(folder))
    assert text.code == 0 and "Traceback" not in text.err and "1 compaction(s)" in text.out


def test_a_fifo_or_a_device_is_refused_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # no writer: a blocking open would wait for ever
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")  # endless: a read would never end
    for path in (fifo, zero, tmp_path):
        with pytest.raises(OSError, match="not a regular file"):
            reader.read(str(path), "claude")
        with pytest.raises(OSError, match="not a regular file"):
            reader.tail(str(path), 1, "claude")
        assert tool_calls_since(str(path), "") == 0
        assert reader.detect(str(path)) is None


# ------------------------------------------------------------------------------- the backward reader's cost


class Counted(bytes):
    """Bytes that count what each scan or concatenation of them touches (the reader's work, not its clock)."""

    work = 0

    def _count(self, n: int) -> None:
        Counted.work += n

    def __add__(self, other: bytes) -> Counted:  # type: ignore[override]
        self._count(len(self) + len(other))
        return Counted(bytes(self) + bytes(other))

    def __radd__(self, other: bytes) -> Counted:
        self._count(len(self) + len(other))
        return Counted(bytes(other) + bytes(self))

    def split(self, *args: Any, **kwargs: Any) -> list[bytes]:  # type: ignore[override]
        self._count(len(self))
        return [Counted(p) for p in bytes(self).split(*args, **kwargs)]

    def find(self, *args: Any) -> int:  # type: ignore[override]
        self._count(len(self))
        return bytes(self).find(*args)

    def rfind(self, *args: Any) -> int:  # type: ignore[override]
        self._count(len(self))
        return bytes(self).rfind(*args)

    def count(self, *args: Any) -> int:  # type: ignore[override]
        self._count(len(self))
        return bytes(self).count(*args)


class CountingFile:
    """A file whose reads are counted, and return Counted bytes."""

    def __init__(self, f: Any) -> None:
        self._f = f

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        Counted.work += len(data)
        return Counted(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> CountingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real, parse = jsonl.open_regular, jsonl.json_parser()
    monkeypatch.setattr(jsonl, "open_regular", lambda path: CountingFile(real(path)))
    monkeypatch.setattr(jsonl, "_loads", lambda raw: parse(bytes(raw)))  # orjson takes no bytes subclass
    Counted.work = 0
    yield


def test_a_huge_last_line_is_read_backwards_in_linear_work(tmp_path: Path, counting: None) -> None:
    """The Stop hook's reader on a transcript whose last line is 8 MiB (a Write of a big file): the bytes it reads,
    scans and joins stay within a small multiple of the file's size (the quadratic reader: over 100 times)."""
    at = "2999-01-01T00:00:00.000Z"
    big = {"type": "tool_use", "id": "toolu_big", "name": "Write", "input": {"content": "y" * (8 << 20)}}
    lines = [{"type": "user", "timestamp": at, "message": {"content": "go"}}]
    lines += [
        {"type": "assistant", "timestamp": at, "message": {"content": [{"type": "tool_use", "id": f"t{i}"}]}}
        for i in range(3)
    ]
    lines.append({"type": "assistant", "timestamp": at, "message": {"content": [big]}})
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(_line(x) for x in lines))
    size = path.stat().st_size
    assert tool_calls_since(str(path), "") == 4
    assert 0 < Counted.work <= 4 * size, f"{Counted.work:,} bytes of work for a {size:,}-byte file"
    Counted.work = 0
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the last line without its newline (still being written)
    assert [r["message"]["content"] for r in reader.tail(str(path), 1)][-1] == [big]
    assert Counted.work <= 4 * size


def test_a_line_longer_than_the_limit_is_skipped_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE", 1000)
    long = b'{"type": "user", "message": {"content": "' + b"z" * 5000 + b'"}}'
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' + long + b'\n{"b": 2}\n')
    for chunk in (7, 64, 1 << 16):
        assert list(jsonl.lines_backwards(str(path), chunk)) == [b'{"b": 2}', b'{"a": 1}'], chunk
    path.write_bytes(long + b'\n{"b": 2}')  # the long line first, and a last line with no newline
    assert list(jsonl.lines_backwards(str(path), 64)) == [b'{"b": 2}']


def test_lines_come_back_whole_and_in_order_whatever_the_chunk_size(tmp_path: Path) -> None:
    lines = [b"", b"a", b"bb", b" ", b"x" * 300, b"cc\r", b"", b"", b"ddd" * 50, b"e"]
    for ending in (b"", b"\n", b"\n\n"):
        data = b"\n".join(lines) + ending
        path = tmp_path / "t.jsonl"
        path.write_bytes(data)
        expected = [x for x in reversed(data.split(b"\n")) if x.strip()]
        for chunk in (1, 2, 3, 5, 16, 299, 300, 301, 1 << 16):
            assert list(jsonl.lines_backwards(str(path), chunk)) == expected, (ending, chunk)
