"""The benchmarks' own machinery: what a variant says it leaves out is left out (no timing here)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import rehydrate  # noqa: F401 - imported before bench/_common puts the checkout's src/ on sys.path
from rehydrate.store import wal
from rehydrate.store.state import State

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def throughput() -> Iterator[ModuleType]:
    """bench/throughput.py as a module (sys.path as it was afterwards)."""
    saved = list(sys.path)
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("throughput")
    finally:
        sys.path[:] = saved


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
