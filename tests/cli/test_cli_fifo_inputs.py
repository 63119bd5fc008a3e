"""A FIFO given where a file is read (`canary check FIFO`, `handoff --file FIFO`) is refused at once, never waited on:
nobody may ever write to it. Real subprocesses; the timeout only turns a hang into a failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import rehydrate


@pytest.mark.parametrize(
    "argv", [["canary", "check", "FIFO"], ["handoff", "--file", "FIFO"]], ids=["canary", "handoff"]
)
def test_a_fifo_is_refused_not_waited_on(repo: Path, argv: list[str]) -> None:
    assert rehydrate("init", "--goal", "g", cwd=repo).code == 0
    if argv[0] == "canary":
        assert rehydrate("canary", "plant", cwd=repo).code == 0
    fifo = repo / "answer.fifo"
    os.mkfifo(fifo)
    r = rehydrate(*[str(fifo) if a == "FIFO" else a for a in argv], cwd=repo, timeout=20)
    assert r.code == 2 and "not a regular file" in r.err, r
