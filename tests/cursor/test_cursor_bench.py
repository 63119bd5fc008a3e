"""bench/cursor.py's floors are fair (no timing here): each writes the very bytes its pipeline writes and syncs as
often, so that a ratio measures the pipeline's own work and nothing else."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import rehydrate  # noqa: F401 - imported before bench/_common puts the checkout's src/ on sys.path
from conftest import bench_module


@pytest.fixture
def bench() -> Iterator[ModuleType]:
    yield from bench_module("cursor")


def test_each_floor_writes_its_pipelines_bytes_and_syncs_as_often(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n, blocks = 150, 3  # not a multiple of the batch: each block ends with a short batch, synced
    synced: Counter[str] = Counter()

    def fsync(fd: int) -> None:  # counted, by the variant's folder; the data stays in the page cache
        synced[os.path.basename(os.path.dirname(os.readlink(f"/proc/self/fd/{fd}")))] += 1

    variants = bench._variants(str(tmp_path), n)
    names = list(variants)
    monkeypatch.setattr(os, "fsync", fsync)
    try:
        for _ in range(blocks):
            for measure in variants.values():
                assert measure() > 0
    finally:
        monkeypatch.undo()
        variants.clear()  # the bench's pipelines, dropped: their descriptors and locks are released

    data = {name: (tmp_path / name / "out.jsonl").read_bytes() for name in names}
    progress = {name: (tmp_path / name / "progress.json").read_bytes() for name in ("durable", "cursor", "batch")}
    assert progress == dict.fromkeys(progress, b'{"cursor": 450}'.ljust(39) + b"\n")
    assert data["durable"].count(b"\n") == n * blocks and b'"index":449}\n' in data["durable"]
    assert all(d == data["durable"] for d in data.values()), [k for k, d in data.items() if d != data["durable"]]
    per_block = -(-n // bench.BATCH)  # every 64 records and the rest at the end of the block
    assert synced == {
        "durable": n * blocks,
        "raw": n * blocks,
        "cursor": n * blocks,
        "batch": per_block * blocks,
        "buffered": per_block * blocks,
        "dumps": per_block * blocks,
        "encoder": per_block * blocks,
        "orjson": per_block * blocks,
    }


def test_the_cpu_pass_stubs_fsync_only_while_it_runs(bench: ModuleType, tmp_path: Path) -> None:
    real = os.fsync
    costs = bench._cpu_costs(str(tmp_path), 70, 1)
    assert os.fsync is real
    assert set(costs) == {"durable", "raw", "cursor", "batch", "buffered", "dumps", "encoder", "orjson"}
    assert all(0 < v < 1e6 for v in costs.values())
