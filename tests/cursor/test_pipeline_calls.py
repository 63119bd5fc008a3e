"""Pipelines: what a commit costs in system calls (through the fsio seam), and that the cheaper paths write the same
bytes as before (json.dumps's records, a progress file at its fixed width)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rehydrate import safejson
from rehydrate.cursor import Pipeline
from rehydrate.fs import write as fsio


class Logging(fsio.Calls):
    """The real system calls, each logged as (call, file name or sync point)."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.names: dict[int, str] = {}

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        fd = super().open(path, flags, mode)
        self.names[fd] = os.path.basename(path)
        self.log.append(("open", self.names[fd]))
        return fd

    def write(self, fd: int, data: bytes) -> int:
        self.log.append(("write", self.names.get(fd, "?")))
        return super().write(fd, data)

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        self.log.append(("pwrite", self.names.get(fd, "?")))
        return super().pwrite(fd, data, offset)

    def fsync(self, fd: int, point: str) -> None:
        self.log.append(("fsync", point))
        super().fsync(fd, point)

    def close(self, fd: int) -> None:
        self.log.append(("close", self.names.get(fd, "?")))
        super().close(fd)

    def ftruncate(self, fd: int, size: int) -> None:
        self.log.append(("ftruncate", self.names.get(fd, "?")))
        super().ftruncate(fd, size)


ONE_COMMIT = [("write", "out.jsonl"), ("fsync", "cursor.output"), ("pwrite", "progress.json")]


@pytest.mark.parametrize(("batch", "commits"), [(1, 10), (5, 10)])
def test_a_sync_is_the_outputs_write_and_fsync_then_one_pwrite_of_the_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int, commits: int
) -> None:
    calls = Logging()
    monkeypatch.setattr(fsio, "calls", calls)
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json", batch=batch) as p:
        p.commit({"v": "first"})
        p.sync()
        calls.log.clear()
        for i in range(commits):
            p.commit({"v": i})
        log = list(calls.log)
    # no open, stat-checked reopen, close or truncate of the progress file per commit: it stays open
    assert log == ONE_COMMIT * (commits // batch)
    assert json.loads((tmp_path / "progress.json").read_text()) == {"cursor": commits + 1}
    assert [json.loads(x)["index"] for x in (tmp_path / "out.jsonl").read_text().splitlines()] == list(
        range(commits + 1)
    )


RECORDS = [
    {"summary": "plain"},
    {"text": 'é ü 漢字 \u2028 \x00 \t "quoted" back\\slash', "emoji": "🙂"},
    {"f": 1.5, "big": 10**30, "neg": -0.0, "inf": float("inf"), "nan": float("nan"), "t": True, "n": None},
    {"nested": {"list": [1, [2, {"x": []}], {}], "tuple": (1, 2)}},
    {"index": "overridden", "after": 1},  # the key already in the record keeps its place
    {},
    {3: "an int key", "b": 2},
]


@pytest.mark.parametrize("batch", [1, 3, 64])
@pytest.mark.parametrize("key", ["index", 'n° "%d%%"'])
def test_records_are_written_as_json_dumps_writes_them(tmp_path: Path, batch: int, key: str) -> None:
    """Each line is json.dumps({**record, key: index}): in batch mode the key and the index are added by the sync, to
    a whole batch at once, and a record that holds the key is kept as its whole line, in any batch."""
    records = [*RECORDS, {"k": key}, *RECORDS[::-1], *({"i": i} for i in range(7))]
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json", key=key, batch=batch) as p:
        for r in records:
            p.commit(r)
            assert p.cursor - len(p._buffer) == (p.cursor // batch) * batch  # a sync every batch records
    lines = (tmp_path / "out.jsonl").read_bytes().split(b"\n")[:-1]
    want = [
        json.dumps({**r, key: i}, ensure_ascii=False, separators=(",", ":")).encode() for i, r in enumerate(records)
    ]
    assert lines == want


def test_a_record_that_cannot_be_written_is_refused_by_its_own_commit(tmp_path: Path) -> None:
    """Not JSON, circular, nested too deeply, a lone surrogate: the commit of that record raises, whether the key
    is in it or not; the cursor stays, the batch around it is written whole."""
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    loop: dict[str, object] = {}
    loop["self"] = loop
    bad = [{"bad": {1, 2}}, {"loop": loop}, {"deep": deep}, {"text": "\ud800"}]
    raised = (TypeError, ValueError, safejson.TooDeep, UnicodeEncodeError)
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json", batch=4) as p:
        for i, record in enumerate(bad * 2):
            p.commit({"v": i})
            with pytest.raises(raised[i % 4]) as info:
                p.commit({**record, "index": 0} if i >= 4 else record)
            if i % 4 == 1:
                assert "Circular reference" in str(info.value)
            elif i % 4 == 2:
                assert f"record {i + 1} is nested too deeply" in str(info.value)
            assert p.cursor == i + 1
    assert (tmp_path / "out.jsonl").read_text() == "".join(f'{{"v":{i},"index":{i}}}\n' for i in range(8))


def test_a_record_that_failed_to_encode_leaves_no_trace_in_the_next(tmp_path: Path) -> None:
    inner: dict[str, object] = {"bad": {1, 2}}  # not JSON: the encoder stops inside `inner`
    loop: dict[str, object] = {}
    loop["self"] = loop
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json") as p:
        with pytest.raises(TypeError, match="not JSON serializable"):
            p.commit({"inner": inner})
        with pytest.raises(ValueError, match="Circular reference"):
            p.commit({"loop": loop})
        inner["bad"] = "fixed"
        assert p.commit({"inner": inner}) == 0  # never "Circular reference detected" for a dict seen before
        assert p.cursor == 1
    assert json.loads((tmp_path / "out.jsonl").read_text()) == {"inner": {"bad": "fixed"}, "index": 0}


def test_a_progress_file_wider_than_the_fixed_width_is_cut_to_it_on_open(tmp_path: Path) -> None:
    out, prog = tmp_path / "out.jsonl", tmp_path / "progress.json"
    out.write_text("".join(json.dumps({"index": i}) + "\n" for i in range(3)))
    prog.write_text('{"cursor": 3, "note": "' + "written by hand, and long " * 5 + '"}\n')
    with Pipeline.open(out, prog) as p:
        assert p.cursor == 3 and p.report == []
        p.commit({"v": 3})
        assert json.loads(prog.read_text()) == {"cursor": 4}
    assert len(prog.read_bytes()) == 40


def test_a_progress_file_removed_while_open_is_written_again_on_close(tmp_path: Path) -> None:
    out, prog = tmp_path / "out.jsonl", tmp_path / "progress.json"
    with Pipeline.open(out, prog) as p:
        p.commit({"v": 0})
        prog.unlink()
        p.commit({"v": 1})
    assert json.loads(prog.read_text()) == {"cursor": 2}


# Records whose JSON orjson would write otherwise, or not at all: each goes to json, which writes its value as before.
ODD = [
    {"nan": float("nan"), "inf": float("inf"), "minus": float("-inf")},  # orjson: null
    {"big": 2**64, "small": -(2**63) - 1},  # orjson: beyond 64 bits, refused
    {1: "an int key", None: "a null key", 2.5: "a float key"},  # orjson: keys that are not strings, refused
    {"nested": [{"deep": {"nan": float("nan")}}], "text": "null"},
]


@pytest.mark.parametrize("batch", [1, 3])
def test_records_orjson_writes_otherwise_are_written_by_json(tmp_path: Path, batch: int) -> None:
    """Records are encoded by orjson, 8 times as fast as json, but for what it refuses or writes otherwise (NaN and
    the infinities as null, integers beyond 64 bits, keys that are not strings): those lines are json.dumps's own.
    A float's text is orjson's, its value json's."""
    floats = {"tiny": 1e-7, "big": 1e16, "pi": 3.141592653589793, "minus zero": -0.0}
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json", batch=batch) as p:
        for r in [*ODD, floats]:
            p.commit(r)
    lines = (tmp_path / "out.jsonl").read_bytes().split(b"\n")[:-1]
    for i, (line, r) in enumerate(zip(lines[: len(ODD)], ODD, strict=True)):
        assert line == json.dumps({**r, "index": i}, ensure_ascii=False, separators=(",", ":")).encode()
    assert lines[-1] == b'{"tiny":1e-7,"big":1e+16,"pi":3.141592653589793,"minus zero":-0.0,"index":4}'  # orjson's
    assert json.loads(lines[-1]) == {**floats, "index": 4}
