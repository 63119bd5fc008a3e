"""Pipeline I/O goes through fsio: an OS error is a message that says what to do (exit 3), never a traceback or a
bare OSError; a failed write stops the pipeline before it can skip an index; the output is read through the
descriptor that was checked, never reopened by name."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate import cursor
from rehydrate.cursor import Pipeline
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio


def indexes(path: Path) -> list[int]:
    return [json.loads(x)["index"] for x in path.read_bytes().splitlines()]


def test_repair_with_a_progress_file_in_a_missing_folder_is_a_message(tmp_path: Path) -> None:
    (tmp_path / "out.jsonl").write_text('{"index": 0}\n')
    r = rehydrate("cursor", "repair", "out.jsonl", "/nonexistent/progress.json", cwd=tmp_path)
    assert r.code == 3, r.err
    assert "the folder /nonexistent does not exist" in r.err and "create the folder first" in r.err
    assert "bug" not in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("which", ["output", "progress"])
def test_open_in_a_missing_folder_or_under_a_file_is_a_rehydrate_error(tmp_path: Path, which: str) -> None:
    (tmp_path / "file.txt").write_text("not a folder")
    good = {"output": tmp_path / "out.jsonl", "progress": tmp_path / "progress.json"}
    for bad, message in ((tmp_path / "missing" / "x", "does not exist"), (tmp_path / "file.txt" / "x", "not a folder")):
        paths = {**good, which: bad}
        with pytest.raises(RehydrateError, match=message):
            Pipeline.open(paths["output"], paths["progress"])
    with Pipeline.open(good["output"], good["progress"]) as p:  # nothing was left locked or open
        p.commit({"v": 1})
    assert indexes(good["output"]) == [0]


class Failing(fsio.Calls):
    """The real system calls, except that the n-th write or fsync of the output fails like a full or broken disk."""

    def __init__(self, call: str, n: int, err: int) -> None:
        self.call, self.n, self.err = call, n, err
        self.output_fds: set[int] = set()

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        fd = super().open(path, flags, mode)
        if path.endswith("out.jsonl"):
            self.output_fds.add(fd)
        return fd

    def _maybe_fail(self, call: str, fd: int) -> None:
        if call == self.call and fd in self.output_fds:
            self.n -= 1
            if self.n == 0:
                raise OSError(self.err, os.strerror(self.err))

    def write(self, fd: int, data: bytes) -> int:
        self._maybe_fail("write", fd)
        return super().write(fd, data)

    def fsync(self, fd: int, point: str) -> None:
        self._maybe_fail("fsync", fd)
        super().fsync(fd, point)


@pytest.mark.parametrize(("call", "err"), [("write", errno.ENOSPC), ("fsync", errno.EIO)])
def test_a_failed_write_stops_the_pipeline_and_the_next_open_redoes_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str, err: int
) -> None:
    out, prog = tmp_path / "out.jsonl", tmp_path / "progress.json"
    monkeypatch.setattr(fsio, "calls", Failing(call, 3, err))
    p = Pipeline.open(out, prog)
    assert p.commit({"v": 0}) == 0 and p.commit({"v": 1}) == 1
    with pytest.raises(RehydrateError, match=f"cannot write {out}: {os.strerror(err)}") as info:
        p.commit({"v": 2})
    assert "open the pipeline again" in str(info.value)
    with pytest.raises(RehydrateError, match="the pipeline is closed"):  # never a record 3 after a missing 2
        p.commit({"v": 3})
    monkeypatch.setattr(fsio, "calls", fsio.Calls())
    with Pipeline.open(out, prog) as again:  # the lock went with the failure
        assert again.cursor == len(indexes(out))
        while again.cursor < 4:
            again.commit({"v": again.cursor})
    assert indexes(out) == [0, 1, 2, 3]


def test_the_output_is_read_through_the_descriptor_that_was_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, prog = tmp_path / "out.jsonl", tmp_path / "progress.json"
    out.write_text("".join(json.dumps({"index": i}) + "\n" for i in range(3)))
    prog.write_text('{"cursor": 3}')
    real = fsio.open_read

    def swap_after_open(path: str, words: fsio.Words = fsio.ANY) -> int | None:
        fd = real(path, words)
        if path == str(out):  # the file named by the path changes once it is open
            out.rename(tmp_path / "old.jsonl")
            out.write_text("".join(json.dumps({"index": i}) + "\n" for i in range(10)))
        return fd

    monkeypatch.setattr(fsio, "open_read", swap_after_open)
    c = cursor.check(str(out), str(prog))
    assert (c.records, c.last_index, c.problems) == (3, 2, [])
