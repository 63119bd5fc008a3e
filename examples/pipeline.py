"""A small pipeline to copy: one summary per input line, written with rehydrate's cursor invariant.

Kill it at any moment (Ctrl-C, SIGKILL, a crash) and run it again: it goes on from the first item whose output line
is not on disk, never writes an index twice, and never skips one. Each line it prints names a record already on disk.
Start it twice at once and the second is refused: the pipeline is open in the first.

    python examples/pipeline.py INPUT.txt OUTPUT.jsonl PROGRESS.json [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from rehydrate.cursor import Pipeline
from rehydrate.errors import RehydrateError


def summarize(line: str) -> dict[str, object]:
    words = line.split()
    return {"words": len(words), "first": words[0] if words else "", "chars": len(line)}


def run(input: str, output: str, progress: str, delay: float) -> None:
    with open(input, encoding="utf-8") as f:
        items = f.read().splitlines()
    with Pipeline.open(output, progress) as pipeline:
        for line in pipeline.report:  # what the start-up check found and repaired after a crash
            print(f"repaired: {line}", file=sys.stderr)
        for index, item in pipeline.pending(items):
            time.sleep(delay)  # pretend work
            record = summarize(item)
            pipeline.commit(record)  # on disk (synced) when it returns
            print(f"{index + 1}/{len(items)} {json.dumps(record)}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("progress")
    p.add_argument("--delay", type=float, default=0.0, help="seconds of pretend work per item")
    args = p.parse_args(argv)
    try:
        run(args.input, args.output, args.progress, args.delay)
    except RehydrateError as e:  # another run holds the pipeline, damaged records, a full disk: said, not a traceback
        print(f"pipeline: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
