"""Registered pipelines (state/pipelines.json): parallel registrations all stay; a path outside the project, a damaged
registry or a bad input is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate import cursor
from rehydrate.errors import RehydrateError
from rehydrate.store.state import State


def first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline()


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
