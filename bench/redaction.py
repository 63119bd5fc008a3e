"""Redaction: what the capture's secret rules (harness/compaction/redaction.py: detect-secrets' detectors and the
project's own) cost the PreCompact hook, measured on the real Claude Code transcript of shared/fixtures.

1. Capture. `harness.compaction.capture.capture` of the whole fixture (no checkpoint: everything up to its 16 MiB read
   is "since"), each run in a fresh process, timed inside it from before the capture module is imported to the capture's
   return (the rules are imported and compiled on the first redaction: a hook pays that once per process), and the
   whole process's wall time. With --before SRC (another checkout's src/, such as `git archive main src` unpacked),
   the same in that code, interleaved round by round.
2. Redact alone. Every string of the fixture (each JSON line's string values: prompts, commands, tool output, ...),
   cut as the capture cuts a text before redacting it (`capture._text`: its bound x 4 + 4096 characters, here with
   the largest bound, the assistant's), through `capture.redact`, warm, in one process per variant: total and per MB.
3. Hostile lines. The worst shapes found for the patterns (a keyword repeated after an unclosed quote, a line of
   `//`, ...), 10,000 characters each: the slowest redact of each, in ms.

    python bench/redaction.py [--rounds 15] [--before /tmp/before/src] [--fixtures DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import _common

FIXTURES = os.path.join(os.path.dirname(_common.REPO), "shared", "fixtures", "transcripts")  # beside the checkout
FIXTURE_NAME = "claude-code-2.1.39-manual-compact.jsonl"

CAPTURE = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
from rehydrate.harness.compaction.capture import capture
from rehydrate.store.wal.since import Since
out = capture("/nowhere", {"transcript_path": sys.argv[2], "harness": "claude"}, Since(), {})
print(time.perf_counter() - t0, len(out["failed"]), len(out["user"]), out["read"]["to"] - out["read"]["from"])
"""

REDACT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from rehydrate.harness.compaction import capture as cap

def strings(value, out):
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            strings(v, out)
    elif isinstance(value, list):
        for v in value:
            strings(v, out)

texts = []
with open(sys.argv[2], "rb") as f:
    for line in f:
        try:
            strings(json.loads(line), texts)
        except ValueError:
            pass
cut = cap.MAX_ASSISTANT * 4 + 4096
texts = [t[:cut] for t in texts if t]
cap.redact("warm the rules up")
t0 = time.perf_counter()
changed = sum(cap.redact(t) != t for t in texts)
print(time.perf_counter() - t0, len(texts), sum(map(len, texts)), changed)
"""

HOSTILE = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from rehydrate.harness.compaction.capture import redact
shapes = {
    "keyword after an unclosed quote": "password='" + "password" * 1250,
    "a line of //": "//" * 5000,
    "a://a://...": "a://" * 2500,
    "one token": "x" * 10000,
    "name=value pairs": ("key=" + "v" * 50 + " ") * 180,
    "-u -u -u": " -u " * 2500,
    "quoted comparisons": '"a" == ' * 1400,
}
redact("warm the rules up")
for name, text in shapes.items():
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        redact(text)
        times.append(time.perf_counter() - t0)
    print(f"{name}\t{min(times) * 1000:.1f}")
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", help="another checkout's src/ to time beside this one")
    parser.add_argument("--fixtures", default=FIXTURES)
    args = parser.parse_args(argv)
    transcript = os.path.join(args.fixtures, FIXTURE_NAME)
    if not os.path.exists(transcript):
        print(f"no fixture at {transcript}: give --fixtures DIR", file=sys.stderr)
        return 2
    variants = {"this checkout": _common.SRC, **({"before": os.path.abspath(args.before)} if args.before else {})}
    print(_common.load())
    print(f"fixture: {FIXTURE_NAME}, {os.path.getsize(transcript) / 1e6:.1f} MB; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        env = _common.clean_env()
        inside: dict[str, list[float]] = {name: [] for name in variants}
        shape: dict[str, str] = {}

        def capture_of(name: str, src: str) -> _common.Measure:
            def measure() -> float:
                t0 = time.perf_counter()
                out = _common.run([sys.executable, "-c", CAPTURE, src, transcript], cwd=tmp, env=env).stdout.split()
                wall = time.perf_counter() - t0
                inside[name].append(float(out[0]))
                shape[name] = f"{out[1]} failed, {out[2]} prompts, {int(out[3]) / 1e6:.1f} MB read"
                return wall

            return measure

        walls = _common.interleave({n: capture_of(n, s) for n, s in variants.items()}, args.rounds, warmup=2)
        rows = []
        for name in variants:
            warm = inside[name][-args.rounds :]  # the warm-up rounds' figures left out
            rows.append((name, f"{_common.median(warm) * 1000:.0f}", f"{_common.median(walls[name]) * 1000:.0f}"))
        print("\n1. capture of the whole fixture, fresh process each (median of", args.rounds, "rounds)")
        print(_common.table(["code", "capture ms (imports included)", "process ms"], rows))
        print("   captured:", "; ".join(f"{n}: {s}" for n, s in shape.items()))
        print("\n2. redact alone over every string of the fixture, warm")
        rows = []
        for name, src in variants.items():
            out = _common.run([sys.executable, "-c", REDACT, src, transcript], cwd=tmp, env=env).stdout.split()
            seconds, count, chars, changed = float(out[0]), int(out[1]), int(out[2]), int(out[3])
            rows.append(
                (name, count, f"{chars / 1e6:.1f}", f"{seconds * 1000:.0f}", f"{seconds / (chars / 1e6):.2f}", changed)
            )
        print(_common.table(["code", "strings", "M chars", "total ms", "s per M chars", "strings changed"], rows))
        print("\n3. hostile lines of 10,000 characters: the best of 3 redacts of each, ms")
        columns = {}
        for name, src in variants.items():
            out = _common.run([sys.executable, "-c", HOSTILE, src], cwd=tmp, env=env).stdout
            columns[name] = dict(line.split("\t") for line in out.strip().splitlines())
        first = next(iter(columns.values()))
        print(_common.table(["shape", *variants], [(s, *(columns[n][s] for n in variants)) for s in first]))
    options = [f"--rounds={args.rounds}", *([f"--before={args.before}"] if args.before else [])]
    print("\n" + _common.reproduce("redaction.py", options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
