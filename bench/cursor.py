"""Pipelines: `rehydrate.cursor` commits against raw loops that write the same records.

1. Durable mode (a sync per record): records/s of Pipeline.commit against a raw loop of os.write + os.fsync of the
   same lines on one file. Target: ratio >= 0.45. Also the syncs each record costs (counted through fsio.calls).
2. Batch mode (batch=64): against a raw buffered append (a Python file object) that fsyncs as often. Target >= 0.5.

Variants run in interleaved blocks (the order rotating each round); medians of per-block rates.

    python bench/cursor.py [--rounds 15] [--block 300]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import _common
from rehydrate.cursor import Pipeline
from rehydrate.store import fsio

RECORD = {"summary": "the document says the parser needs a second pass for unary minus", "words": 12}
BATCH = 64


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    p.add_argument("--block", type=int, default=300, help="records per variant per round (default 300)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = tempfile.mkdtemp(prefix="rehydrate-bench-cursor-")
    try:
        return _bench(args, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _bench(args: argparse.Namespace, root: str) -> int:  # noqa: PLR0915 - the run, top to bottom, as the report prints it
    line = json.dumps({**RECORD, "index": 0}, separators=(",", ":")).encode() + b"\n"
    n = args.block

    def pipeline(name: str, batch: int) -> Callable[[], float]:
        folder = os.path.join(root, name)
        os.mkdir(folder)
        p = Pipeline.open(os.path.join(folder, "out.jsonl"), os.path.join(folder, "progress.json"), batch=batch)

        def measure() -> float:
            t0 = time.perf_counter()
            for _ in range(n):
                p.commit(RECORD)
            p.sync()
            return n / (time.perf_counter() - t0)

        return measure

    def raw_durable() -> float:
        fd = os.open(os.path.join(root, "raw.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            t0 = time.perf_counter()
            for _ in range(n):
                os.write(fd, line)
                os.fsync(fd)
            return n / (time.perf_counter() - t0)
        finally:
            os.close(fd)

    def raw_buffered() -> float:
        with open(os.path.join(root, "buffered.jsonl"), "ab") as f:
            t0 = time.perf_counter()
            for i in range(1, n + 1):
                f.write(line)
                if i % BATCH == 0:
                    f.flush()
                    os.fsync(f.fileno())
            f.flush()
            os.fsync(f.fileno())
            return n / (time.perf_counter() - t0)

    variants = {
        "durable": pipeline("durable", 1),
        "raw": raw_durable,
        "batch": pipeline("batch", BATCH),
        "buffered": raw_buffered,
    }
    rates = _common.interleave(variants, args.rounds, warmup=2)
    med = {k: _common.median(v) for k, v in rates.items()}

    syncs: list[str] = []

    class Counting(fsio.Calls):
        def fsync(self, fd: int, point: str) -> None:
            syncs.append(point)
            super().fsync(fd, point)

    real = fsio.calls
    fsio.calls = Counting()
    try:
        folder = os.path.join(root, "count")
        os.mkdir(folder)
        with Pipeline.open(os.path.join(folder, "o.jsonl"), os.path.join(folder, "p.json")) as p:
            syncs.clear()
            for _ in range(100):
                p.commit(RECORD)
            per_record = len(syncs) / 100
    finally:
        fsio.calls = real

    print(f"cursor: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}; {len(line)}-byte records")
    print(_common.load())
    print(f"{args.rounds} rounds + 2 warm-up of {n} records per variant, interleaved")
    print()
    rows = [
        ("durable: Pipeline.commit", f"{med['durable']:,.0f}"),
        ("raw: os.write + os.fsync", f"{med['raw']:,.0f}"),
        (f"batch: Pipeline.commit, batch={BATCH}", f"{med['batch']:,.0f}"),
        (f"buffered: file.write, fsync every {BATCH}", f"{med['buffered']:,.0f}"),
    ]
    print(_common.table(["variant", "records/s (median)"], rows))
    print()
    durable, batch = med["durable"] / med["raw"], med["batch"] / med["buffered"]
    print(f"syncs per durable record: {per_record:.2f}")
    print(f"  {'PASS' if durable >= 0.45 else 'FAIL'}  durable/raw = {durable:.2f}  (target >= 0.45)")
    print(f"  {'PASS' if batch >= 0.5 else 'FAIL'}  batch/buffered = {batch:.2f}  (target >= 0.50)")
    print()
    print("reproduce: " + _common.reproduce("cursor.py", [f"--rounds={args.rounds}", f"--block={args.block}"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
