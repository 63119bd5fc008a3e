"""The benchmarks' own machinery: what a variant says it leaves out is left out (no timing here)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import rehydrate  # noqa: F401 - imported before bench/_common puts the checkout's src/ on sys.path
from conftest import bench_module
from rehydrate.store import wal
from rehydrate.store.state import State


@pytest.fixture
def throughput() -> Iterator[ModuleType]:
    yield from bench_module("throughput")


def spawns(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every process started through os.posix_spawnp or os.posix_spawn (how gitinfo starts git) from now on."""
    seen: list[Any] = []
    for name in ("posix_spawnp", "posix_spawn"):
        real = getattr(os, name)

        def spy(path: Any, argv: Any, *args: Any, _real: Any = real, **kwargs: Any) -> int:
            seen.append(list(argv))
            pid: int = _real(path, argv, *args, **kwargs)
            return pid

        monkeypatch.setattr(os, name, spy)
    return seen


def test_git_stubbed_starts_no_git_in_a_repository(
    repo: Path, throughput: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, _ = State.init(str(repo / "state"), "measure")
    started = spawns(monkeypatch)

    out = state.checkpoint("real", "git runs")  # the spy sees the real thing
    assert out.ok
    assert [argv[0] for argv in started] == ["git"]

    started.clear()
    with throughput.git_stubbed():
        out = state.checkpoint("stubbed", "no git")
    assert out.ok and out.record is not None
    assert started == []
    assert wal.read_tail(state.wal_path, 1).records[-1][1]["git"] == throughput.STUB_GIT

    out = state.checkpoint("after", "git again")  # the stub is undone on the way out
    assert out.ok
    assert [argv[0] for argv in started] == ["git"]


@pytest.fixture
def verify_scale() -> Iterator[ModuleType]:
    yield from bench_module("verify_scale")


@pytest.fixture
def hashing() -> Iterator[ModuleType]:
    yield from bench_module("hashing")


def test_verify_scale_runs_small_and_prints_its_ratios(
    verify_scale: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (a few hundred records, no cache): the state it builds verifies, and every figure is printed."""
    assert verify_scale.main(["--records", "300", "--rounds", "1", "--warmup", "0", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "WAL: 300 records" in out and "load average" in out and "reproduce: " in out
    for name in ("bare", "verify", "re-check"):
        assert any(line.startswith(name) for line in out.splitlines()), name
    assert "verify/bare = " in out and "re-check/bare = " in out


def test_verify_scale_builds_a_state_that_verifies(verify_scale: ModuleType, tmp_path: Path) -> None:
    path = verify_scale.build(str(tmp_path / "big"), 120)
    assert verify_scale.check(path, 120) is None
    assert State.open(path).verify().ok
    assert verify_scale.check(path, 121) == "it holds 120 records"


def test_hashing_runs_on_this_interpreter(hashing: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert hashing.main(["--python", sys.executable, "--rounds", "1", "--big", "1", "--imports", "1"]) == 0
    out = capsys.readouterr().out
    assert "import hashlib in a fresh process" in out and "700 B" in out and "reproduce: " in out


@pytest.fixture
def recover_scale() -> Iterator[ModuleType]:
    yield from bench_module("recover_scale")


def test_recover_scale_runs_small_and_prints_its_ratios(
    recover_scale: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (30 and 60 commits, no cache): both projects check out (recover finds the own commits, the dirty
    file and the teammate's commits), and every figure is printed, each git command recover runs named."""
    argv = ["--commits", "60", "--small-commits", "30", "--rounds", "1", "--inproc-rounds", "1", "--git-rounds", "1"]
    assert recover_scale.main([*argv, "--warmup", "0", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "small: 30 commits before the checkpoint" in out and "big: 60 commits" in out
    assert "load average" in out and "reproduce: " in out and "big/small (whole process) = " in out
    assert "git status --porcelain=v2" in out and "--max-count=" in out  # each git call of recover, timed alone


def test_recover_scale_history_is_a_chain_of_commits(recover_scale: ModuleType, tmp_path: Path) -> None:
    agent = recover_scale.build(str(tmp_path / "p"), 25)
    assert recover_scale.check(agent, 25) is None
    assert recover_scale.check(agent, 26) == "HEAD holds 35 commits, not 36"
