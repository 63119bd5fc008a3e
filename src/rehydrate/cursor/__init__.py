"""Pipelines: the cursor invariant for batch work that processes records one at a time.

The output is a JSONL file whose records carry their index (under `index`, or another key); a progress file holds the
cursor, the index of the next record to process. The output line is written (one write) and synced first; the cursor
is advanced after. The output is the truth: on opening, the index of the last complete output record must be
`cursor - 1`; otherwise the cursor is moved to match the output and the discrepancy is reported. A torn last line is
cut off (its bytes kept in a `.broken` file) and reported. Indexes that repeat, go backwards or skip are named.

Because the cursor can always be derived from the output, the progress file is rewritten in place without a sync:
a durable commit costs one sync (the output line's). Batch mode writes and syncs every N records or T milliseconds
instead, so that up to that many records can be lost by a crash or a power failure, and are then redone.

One process at a time: an open pipeline holds an exclusive lock (on `PROGRESS.lock`, beside the progress file) until
it is closed, and a second open, or a repair, is refused at once and names the holder. A pipeline that is dropped
without `close()` releases its descriptors and its lock as a killed process would (in batch mode, the records since
the last sync are redone by the next open).

    with Pipeline.open("out.jsonl", "progress.json") as p:
        for index, item in p.pending(items):
            p.commit({"summary": summarize(item)})

All the I/O goes through `fs/write` (reads never follow a final symlink and never block; writes through its seam,
which the crash simulator replays); a failed system call becomes a RehydrateError that says what to do, never a bare
OSError.

The parts: `verify` (check, quick_check: what the two files say and how they disagree), `pipeline` (Pipeline,
repair), `lock` (one process at a time), `registered` (state/pipelines.json and the brief's one line per pipeline).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.cursor.lock import PipelineLock
    from rehydrate.cursor.pipeline import PROGRESS_WIDTH, Pipeline, repair
    from rehydrate.cursor.registered import MAX_CHECKED, MAX_NAME, clean_name, register, registry, summary
    from rehydrate.cursor.verify import CONTENT, QUICK_TAIL_BYTES, CursorReport, Discrepancy, check, quick_check


# Each name is loaded from its module when first used: the brief's check (on the hook path) needs only `registered`
# and `verify`, not the pipeline and its lock.
_HOME = {
    "PipelineLock": "lock",
    **dict.fromkeys(("PROGRESS_WIDTH", "Pipeline", "repair"), "pipeline"),
    **dict.fromkeys(("MAX_CHECKED", "MAX_NAME", "clean_name", "register", "registry", "summary"), "registered"),
    **dict.fromkeys(("CONTENT", "QUICK_TAIL_BYTES", "CursorReport", "Discrepancy", "check", "quick_check"), "verify"),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'rehydrate.cursor' has no attribute {name!r}")

    return getattr(importlib.import_module(f"rehydrate.cursor.{home}"), name)


__all__ = [
    "CONTENT",
    "MAX_CHECKED",
    "MAX_NAME",
    "PROGRESS_WIDTH",
    "QUICK_TAIL_BYTES",
    "CursorReport",
    "Discrepancy",
    "Pipeline",
    "PipelineLock",
    "check",
    "clean_name",
    "quick_check",
    "register",
    "registry",
    "repair",
    "summary",
]
