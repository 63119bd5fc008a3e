"""Descriptors: git is waited for with poll (any descriptor number), a dropped Pipeline releases its own, and the
suite's fixture fails any test that leaves one open."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from rehydrate.cursor import Pipeline
from rehydrate.store.state import State

HAS_PROC = os.path.isdir("/proc/self/fd")


def _count() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def many_descriptors() -> object:
    """1,100 more open descriptors, so that the next ones opened have numbers above 1,023."""
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 1_300
    if soft != resource.RLIM_INFINITY and soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            pytest.skip(f"the descriptor limit ({hard}) is below {want}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(1_100)]
    try:
        yield fds
    finally:
        for fd in fds:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_checkpoint_reads_git_with_more_than_1024_descriptors_open(
    repo: Path, state: State, many_descriptors: list[int]
) -> None:
    assert max(many_descriptors) > 1_023
    out = state.checkpoint(done="opened many files", next="read git anyway")
    assert out.record is not None
    assert out.record["git"]["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert out.record["git"]["branch"] == "main"


@pytest.mark.skipif(not HAS_PROC, reason="counts descriptors in /proc")
def test_a_dropped_pipeline_releases_its_descriptors_and_its_lock(tmp_path: Path) -> None:
    out, prog = tmp_path / "out.jsonl", tmp_path / "progress.json"
    before = _count()
    p = Pipeline.open(out, prog)
    p.commit({"v": 1})
    assert _count() > before
    del p  # never closed
    assert _count() == before
    cycle = Pipeline.open(out, prog)  # the lock went with it: a new open is allowed
    cycle.commit({"v": 2})
    cycle.me = cycle  # type: ignore[attr-defined]  # unreachable only through a cycle: the collector's job
    del cycle
    gc.collect()
    assert _count() == before
    with Pipeline.open(out, prog) as again:
        assert again.cursor == 2
    assert _count() == before


@pytest.mark.skipif(not HAS_PROC, reason="the fixture reads /proc/self/fd")
def test_the_suite_fails_a_test_that_leaks_a_descriptor(tmp_path: Path) -> None:
    shutil.copy(Path(__file__).parent.parent / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_leaks.py").write_text(
        "import os\n\n\n"
        "def test_leaks():\n    os.open(os.devnull, os.O_RDONLY)\n\n\n"
        "def test_closes():\n    os.close(os.open(os.devnull, os.O_RDONLY))\n\n\n"
        "def test_leaks_a_file_object():\n    test_leaks_a_file_object.f = open(os.devnull)\n\n\n"
        "def test_drops_a_file_object():\n    open(os.devnull)\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_leaks.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "4 passed, 2 errors" in r.stdout, r.stdout  # a teardown error is counted beside the passed call
    errors = sorted(line.split(" ")[1] for line in r.stdout.splitlines() if line.startswith("ERROR "))
    assert errors == ["test_leaks.py::test_leaks", "test_leaks.py::test_leaks_a_file_object"], r.stdout
    assert "AssertionError: the test left 1 descriptor(s) open: " in r.stdout and "-> /dev/null" in r.stdout
