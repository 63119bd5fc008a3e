"""bench/transcripts.py runs (a tiny corpus, one round) and prints each ratio with its median, spread and target,
and the load before and after (no timing is checked here)."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest

import rehydrate  # noqa: F401 - imported before bench/_common puts the checkout's src/ on sys.path
from conftest import REAL_TRANSCRIPTS, bench_module, needs_real_transcripts


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    yield from bench_module("transcripts")


def test_the_ratios_are_medians_of_rounds_with_their_spread(bench: ModuleType) -> None:
    assert bench.ratios([2.0, 3.0], [1.0, 4.0]) == [2.0, 0.75]
    line = bench._ratio("the bare parse loop", "wall", [0.9, 0.6, 0.8], 0.7)
    assert line.startswith("PASS  audit vs the bare parse loop = 0.80x (wall, median of 3; rounds 0.60 to 0.90")
    assert bench._ratio("ccusage", "CPU", [3.0], 4.0).startswith("FAIL  audit vs ccusage = 3.00x")


@needs_real_transcripts()
def test_the_bench_runs_small(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--megabytes", "3", "--rounds", "1", "--skip-ccusage", "--skip-tail", "--unfiltered"]
    assert bench.main([*argv, "--fixtures", str(REAL_TRANSCRIPTS)]) == 0
    out = capsys.readouterr().out
    assert out.count("load average") == 2 and "reproduce: " in out
    assert "audit vs the bare parse loop = " in out and "audit vs audit unfiltered = " in out
