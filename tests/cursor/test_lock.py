"""One writer per pipeline: real processes, synchronized on what they print, never on time."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate.cursor import Pipeline
from rehydrate.errors import RehydrateError

# Opens the pipeline, says so, and commits its records only when told to (a line on stdin).
WRITER = r"""
import sys
from rehydrate.cursor import Pipeline
from rehydrate.errors import RehydrateError
try:
    p = Pipeline.open(sys.argv[1], sys.argv[2])
except RehydrateError as e:
    print("refused:", e.message, flush=True)
    sys.exit(3)
print("opened", p.cursor, flush=True)
if sys.stdin.readline().strip() == "go":
    for _ in range(int(sys.argv[3])):
        p.commit({"by": sys.argv[4]})
    p.close()
    print("done", p.cursor, flush=True)
"""


def indexes(path: Path) -> list[int]:
    return [json.loads(x)["index"] for x in path.read_bytes().splitlines()]


def writer(tmp: Path, n: int, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, "out.jsonl", "progress.json", str(n), name],
        cwd=tmp,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline()


def test_a_second_writer_is_refused_at_once_while_the_first_holds_the_pipeline(tmp_path: Path) -> None:
    a = writer(tmp_path, 200, "a")
    try:
        assert first_line(a) == "opened 0\n"
        b = writer(tmp_path, 200, "b")  # two writers at once: both would commit 200 records
        out, _ = b.communicate(timeout=60)
        assert b.returncode == 3
        assert out.startswith(f"refused: the pipeline {tmp_path / 'out.jsonl'} is already open in another process")
        assert f"(pid {a.pid})" in out
        with pytest.raises(RehydrateError, match=f"already open in another process \\(pid {a.pid}\\)"):
            Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json")
        r = rehydrate("cursor", "repair", "out.jsonl", "progress.json", cwd=tmp_path)  # a repair would race too
        assert r.code == 3 and "already open in another process" in r.err, r.err
        out, _ = a.communicate("go\n", timeout=60)
        assert a.returncode == 0 and out == "done 200\n"
    finally:
        a.kill()
        a.communicate()
    assert indexes(tmp_path / "out.jsonl") == list(range(200))
    assert {json.loads(x)["by"] for x in (tmp_path / "out.jsonl").read_bytes().splitlines()} == {"a"}
    assert not (tmp_path / "progress.json.lock").exists()  # the holder removes its lock file when it closes
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json") as p:
        assert p.cursor == 200 and p.report == []


def test_a_killed_holder_releases_the_pipeline(tmp_path: Path) -> None:
    a = writer(tmp_path, 5, "a")
    assert first_line(a) == "opened 0\n"
    a.send_signal(signal.SIGKILL)
    a.communicate(timeout=60)
    assert (tmp_path / "progress.json.lock").exists()  # left behind, and harmless: nobody holds it
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json") as p:
        p.commit({"by": "me"})
    assert indexes(tmp_path / "out.jsonl") == [0]


def test_the_same_process_cannot_open_a_pipeline_twice(tmp_path: Path) -> None:
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json") as p:
        with pytest.raises(RehydrateError, match="already open in this process"):
            Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json")
        p.commit({"v": 1})
    assert indexes(tmp_path / "out.jsonl") == [0]


def test_a_lock_file_deleted_from_under_the_holder_stops_it_before_it_writes(tmp_path: Path) -> None:
    out, prog = tmp_path / "out.jsonl", tmp_path / "progress.json"
    first = Pipeline.open(out, prog)
    first.commit({"by": "first"})
    (tmp_path / "progress.json.lock").unlink()  # what `git clean -fdX` or a careless script does
    second = Pipeline.open(out, prog)  # the lock file is gone: nothing can stop this one
    assert second.cursor == 1
    second.commit({"by": "second"})
    with pytest.raises(RehydrateError, match="removed or replaced while this process held it"):
        first.commit({"by": "first"})
    with pytest.raises(RehydrateError, match="closed"):
        first.commit({"by": "first"})
    second.commit({"by": "second"})
    second.close()
    assert indexes(out) == [0, 1, 2]
    assert json.loads(prog.read_text()) == {"cursor": 3}
