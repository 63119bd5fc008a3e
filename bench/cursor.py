"""Pipelines: `rehydrate.cursor` commits against raw loops that write the same records.

1. Durable mode (a sync per record): records/s of Pipeline.commit against a raw loop of os.write + os.fsync of the
   same lines on one file. Target: ratio >= 0.85. Also the system calls each record costs through
   fsio.calls (the output's write and fsync, the cursor's write) and the syncs among them; and, for information,
   the raw loop with the two calls the design adds to each sync (the lock file's lstat, the cursor's pwrite): the
   ceiling of durable/raw.
2. Batch mode (batch=64): against a raw buffered append (a Python file object) that fsyncs as often. Target >= 0.6.
   Beside it, for information: the same buffered loop encoding each record with json.dumps (what a pipeline written
   by hand would do), since the floors write bytes encoded before the clock starts; the same loop calling orjson's
   dumps once per record (what Pipeline.commit encodes with): the ceiling of any pipeline that encodes each record
   when it is committed, as a commit must (its errors are the commit's; a record changed after its commit is written
   as it was); and the loop with the json module's C encoder, built once (no json.dumps set-up): the ceiling of a
   pipeline that encodes with the standard library alone (0.59 to 0.68 of buffered: under the target).

The floors are fair: each writes the very bytes its pipeline writes (the same records with the same indexes, encoded
before its clock starts), syncs as often (one fsync per record; every 64 records and once at the end of a block), in
a folder of its own, appending to one file open for the whole block. The pipeline also rewrites its progress file
(no sync), which the design asks for and the floors do not do.
Variants run in interleaved blocks (the order rotating each round); medians of per-block rates. Then, for
information, each variant again with os.fsync stubbed: the microseconds of CPU work per record that the disk's noise
hides (the pipeline's Python and encoding against the floors' loops).

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
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import orjson

import _common
from rehydrate.cursor import Pipeline
from rehydrate.fs import write as fsio

RECORD = {"summary": "the document says the parser needs a second pass for unary minus", "words": 12}
BATCH = 64
# json.dumps(o, ensure_ascii=False, separators=(",", ":")) inside: its C encoder, made once (JSONEncoder.iterencode's
# arguments), without the circular check
_C_ENCODE = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, json.JSONEncoder().default, json.encoder.encode_basestring, None, ":", ",", False, False, True
)


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


def _lines(start: int, n: int) -> list[bytes]:
    """The bytes a pipeline writes for indexes start..start+n-1 (json.dumps's, as Pipeline.commit's)."""
    return [
        json.dumps({**RECORD, "index": i}, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        for i in range(start, start + n)
    ]


def _buffered(path: str, start: int, n: int, encode: str = "") -> float:
    """A buffered append of the records start..start+n-1 that fsyncs every BATCH: their bytes made before the clock
    starts, or each record encoded in the loop (json.dumps, json's C encoder, orjson), inline as a pipeline would."""
    lines: list[Any] = [{**RECORD, "index": i} for i in range(start, start + n)] if encode else _lines(start, n)
    with open(path, "ab") as f:
        t0 = time.perf_counter()
        for i, item in enumerate(lines, 1):
            if not encode:
                f.write(item)
            elif encode == "orjson":
                f.write(orjson.dumps(item) + b"\n")
            elif encode == "c":
                f.write("".join(_C_ENCODE(item, 0)).encode() + b"\n")
            else:
                f.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            if i % BATCH == 0:
                f.flush()
                os.fsync(f.fileno())
        f.flush()
        os.fsync(f.fileno())
        return n / (time.perf_counter() - t0)


def _variants(root: str, n: int) -> dict[str, Callable[[], float]]:
    def folder(name: str) -> str:
        path = os.path.join(root, name)
        os.mkdir(path)
        return path

    def pipeline(name: str, batch: int) -> Callable[[], float]:
        where = folder(name)
        p = Pipeline.open(os.path.join(where, "out.jsonl"), os.path.join(where, "progress.json"), batch=batch)

        def measure() -> float:
            t0 = time.perf_counter()
            for _ in range(n):
                p.commit(RECORD)
            p.sync()
            return n / (time.perf_counter() - t0)

        return measure

    def floor(name: str, body: Callable[[str, int], float]) -> Callable[[], float]:
        path, done = os.path.join(folder(name), "out.jsonl"), [0]

        def measure() -> float:
            rate = body(path, done[0])
            done[0] += n
            return rate

        return measure

    def raw_durable(path: str, start: int, cursor: bool = False) -> float:
        """write + fsync per line; with cursor, also the calls the design adds: the lock file's lstat before the
        write, the progress file's pwrite after the fsync (the ceiling of durable/raw)."""
        lines = _lines(start, n)
        where = os.path.dirname(path)
        lock, progress = os.path.join(where, "progress.json.lock"), os.path.join(where, "progress.json")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        pfd = os.open(progress, os.O_WRONLY | os.O_CREAT)
        try:
            open(lock, "ab").close()
            t0 = time.perf_counter()
            for i, line in enumerate(lines, start + 1):
                if cursor:
                    os.lstat(lock)
                os.write(fd, line)
                os.fsync(fd)
                if cursor:
                    os.pwrite(pfd, (b'{"cursor": %d}' % i).ljust(39) + b"\n", 0)
            return n / (time.perf_counter() - t0)
        finally:
            os.close(fd)
            os.close(pfd)

    return {
        "durable": pipeline("durable", 1),
        "raw": floor("raw", raw_durable),
        "cursor": floor("cursor", lambda path, start: raw_durable(path, start, cursor=True)),
        "batch": pipeline("batch", BATCH),
        "buffered": floor("buffered", lambda path, start: _buffered(path, start, n)),
        "dumps": floor("dumps", lambda path, start: _buffered(path, start, n, encode="dumps")),
        "encoder": floor("encoder", lambda path, start: _buffered(path, start, n, encode="c")),
        "orjson": floor("orjson", lambda path, start: _buffered(path, start, n, encode="orjson")),
    }


def _calls_per_record(root: str) -> Counter[str]:
    """The calls through fsio.calls that 100 durable commits make, per record."""
    seen: Counter[str] = Counter()

    class Counting(fsio.Calls):
        def open(self, path: str, flags: int, mode: int = 0o644) -> int:
            seen["open"] += 1
            return super().open(path, flags, mode)

        def write(self, fd: int, data: bytes) -> int:
            seen["write"] += 1
            return super().write(fd, data)

        def pwrite(self, fd: int, data: bytes, offset: int) -> int:
            seen["pwrite"] += 1
            return super().pwrite(fd, data, offset)

        def fsync(self, fd: int, point: str) -> None:
            seen["fsync"] += 1
            super().fsync(fd, point)

        def close(self, fd: int) -> None:
            seen["close"] += 1
            super().close(fd)

        def ftruncate(self, fd: int, size: int) -> None:
            seen["ftruncate"] += 1
            super().ftruncate(fd, size)

    real = fsio.calls
    fsio.calls = Counting()
    try:
        folder = os.path.join(root, "count")
        os.mkdir(folder)
        with Pipeline.open(os.path.join(folder, "o.jsonl"), os.path.join(folder, "p.json")) as p:
            seen.clear()
            for _ in range(100):
                p.commit(RECORD)
            return Counter(seen)  # before the close
    finally:
        fsio.calls = real


def _cpu_costs(root: str, n: int, rounds: int) -> dict[str, float]:
    """Microseconds per record of each variant with os.fsync stubbed (the least of its blocks): the work the disk's
    noise hides, the pipeline's own Python and encoding against the floors'."""
    where = os.path.join(root, "cpu")
    os.mkdir(where)
    variants = _variants(where, n)
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        rates = _common.interleave(variants, rounds, warmup=2)
    finally:
        os.fsync = real
    return {k: 1e6 / max(v) for k, v in rates.items()}


def _bench(args: argparse.Namespace, root: str) -> int:
    n = args.block
    rates = _common.interleave(_variants(root, n), args.rounds, warmup=2)
    med = {k: _common.median(v) for k, v in rates.items()}
    spread = {k: (min(v), max(v)) for k, v in rates.items()}
    calls = _calls_per_record(root)
    cpu = _cpu_costs(root, n, args.rounds)
    size = len(_lines(0, 1)[0])

    print(f"cursor: rehydrate ({_common.checkout()}), Python {sys.version.split()[0]}; {size}-byte records and more")
    print(_common.load())
    print(f"{args.rounds} rounds + 2 warm-up of {n} records per variant, interleaved")
    print()
    names = {
        "durable": "durable: Pipeline.commit",
        "raw": "raw: os.write + os.fsync",
        "cursor": "  (raw + lstat of the lock, pwrite of the cursor)",
        "batch": f"batch: Pipeline.commit, batch={BATCH}",
        "buffered": f"buffered: file.write, fsync every {BATCH}",
        "dumps": "  (json.dumps + buffered, for information)",
        "encoder": "  (json's C encoder + buffered, for information)",
        "orjson": "  (orjson + buffered: the ceiling)",
    }
    rows = [(label, f"{med[k]:,.0f}", f"{spread[k][0]:,.0f} to {spread[k][1]:,.0f}") for k, label in names.items()]
    print(_common.table(["variant", "records/s (median)", "per-block range"], rows))
    print()
    durable, batch = med["durable"] / med["raw"], med["batch"] / med["buffered"]
    per = ", ".join(f"{name} {count / 100:.2f}" for name, count in sorted(calls.items()))
    print(f"fsio.calls per durable record: {per} (the floor: write 1.00, fsync 1.00)")
    print(f"  {'PASS' if durable >= 0.85 else 'FAIL'}  durable/raw = {durable:.2f}  (target >= 0.85)")
    ceiling = med["cursor"] / med["raw"]
    print(f"        (raw + lstat + pwrite)/raw = {ceiling:.2f}  (the ceiling of durable/raw, for information)")
    print(f"  {'PASS' if batch >= 0.6 else 'FAIL'}  batch/buffered = {batch:.2f}  (target >= 0.60)")
    print(f"        batch/(json.dumps + buffered) = {med['batch'] / med['dumps']:.2f}  (for information)")
    stdlib, ceiling = med["encoder"] / med["buffered"], med["orjson"] / med["buffered"]
    print(f"        (orjson + buffered)/buffered = {ceiling:.2f}  (the ceiling of batch/buffered, for information)")
    print(f"        (json's C encoder + buffered)/buffered = {stdlib:.2f}  (encoding with json, for information)")
    print()
    print("with os.fsync stubbed, microseconds per record (the least of the blocks): the CPU's share, for information")
    print("  " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items()))
    print()
    print("reproduce: " + _common.reproduce("cursor.py", [f"--rounds={args.rounds}", f"--block={args.block}"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
