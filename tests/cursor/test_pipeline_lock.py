"""One writer per pipeline, one registry for all: real processes, synchronized on what they print, never on time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate import cursor
from rehydrate.cursor import Pipeline
from rehydrate.errors import RehydrateError
from rehydrate.store.state import State

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


# ---------------------------------------------------------------------------------------------------- register

# Waits for "go" on stdin, so that all registrations start together; then runs the real command.
REGISTER = r"""
import sys
from rehydrate.cli import main
print("ready", flush=True)
sys.stdin.readline()
sys.exit(main(["cursor", "register", sys.argv[1], sys.argv[2], sys.argv[3]]))
"""


def test_twelve_parallel_registrations_all_stay(repo: Path, state: State) -> None:
    (repo / "data").mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", REGISTER, f"pass {n}", f"data/out{n}.jsonl", f"data/progress{n}.json"],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(12)
    ]
    try:
        for proc in procs:
            assert first_line(proc) == "ready\n"
        for proc in procs:  # all released as close together as the machine allows
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [proc.communicate(timeout=120) for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
            proc.communicate()
    assert [p.returncode for p in procs] == [0] * 12, results
    assert all(out.startswith("registered pass ") for out, _ in results)
    entries = json.loads((repo / "state" / "pipelines.json").read_text())
    assert sorted(entries) == sorted(f"pass {n}" for n in range(12))
    assert entries["pass 7"] == {
        "output": "data/out7.jsonl",
        "progress": "data/progress7.json",
        "key": "index",
        "total": None,
    }


def test_register_refuses_paths_outside_the_project_and_a_damaged_registry(
    repo: Path, state: State, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    r = rehydrate("cursor", "register", "far", str(outside / "out.jsonl"), "progress.json")
    assert r.code == 3 and "is outside the project" in r.err and "cursor verify" in r.err
    (repo / "link").symlink_to(outside)
    r = rehydrate("cursor", "register", "linked", "link/out.jsonl", "progress.json")
    assert r.code == 3 and "is outside the project" in r.err
    r = rehydrate("cursor", "register", "bad\x1b]0;title\x07", "out.jsonl", "progress.json")
    assert r.code == 3 and "control characters" in r.err
    assert not os.path.exists(repo / "state" / "pipelines.json")
    (repo / "state" / "pipelines.json").write_text('{"kept": {"output": "a", "progress": "b"}, ')
    r = rehydrate("cursor", "register", "new", "out.jsonl", "progress.json")
    assert r.code == 3 and "not a JSON object of pipelines" in r.err
    assert (repo / "state" / "pipelines.json").read_text() == '{"kept": {"output": "a", "progress": "b"}, '


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"name": ""}, "name"),
        ({"key": ""}, "key"),
        ({"total": -1}, "total"),
        ({"output": "/elsewhere/out.jsonl"}, "output"),
    ],
)
def test_register_names_the_field_of_a_bad_input_in_domain_words(
    repo: Path, state: State, args: dict[str, object], field: str
) -> None:
    given: dict[str, object] = {"name": "pass A", "output": "out.jsonl", "progress": "progress.json", **args}
    with pytest.raises(RehydrateError) as info:
        cursor.register(state.root, **given)  # type: ignore[arg-type]
    assert info.value.field == field and "--" not in str(info.value)


def test_a_batch_below_one_is_refused_with_its_field(tmp_path: Path) -> None:
    with pytest.raises(RehydrateError, match="at least 1") as info:
        Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json", batch=0)
    assert info.value.field == "batch" and "--" not in str(info.value)
