"""Lines added by hand to 10_invariants.md are adopted in one batch (one write, one fsync). A crash in the middle of
that write loses nothing: the torn last record is cut at a record boundary by the torn-tail repair, and the next
command, even a cheap one (not verify), adopts the rest, because each record of a batch but the last binds 10 only up
to its own line. Shown through the fsio seam: the batch's write is replayed torn at many byte counts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import crashsim
from rehydrate.fs import write as fsio
from rehydrate.store.latches import latch as latches
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines

HAND = [f"- a note typed by hand, number {i:02d}" for i in range(40)]


def _adoption(base: Path) -> tuple[list[crashsim.Op], int]:
    """A state whose 10 holds lines added by hand, adopted by a checkpoint under the recorder: the op log, and the
    index of the batch's write to the WAL."""
    base.mkdir()
    os.chdir(base)  # not a git repository: the records say so and git costs nothing
    recorder = crashsim.Recorder(str(base))
    real = fsio.calls
    fsio.calls = recorder
    try:
        State.init(base / "state", "Adopt what was typed by hand")
        st = State.open(base / "state")
        st.invariant("Write the WAL first", because="crashes")
        inv = base / "state" / "10_invariants.md"
        typed = "".join(t + "\n" for t in HAND).encode()
        fsio.append(str(inv), typed, "test.by-hand")  # typed by hand (through the seam, so that the model has it)
        start = len(recorder.ops)
        st.checkpoint("typed notes", "adopt them")
    finally:
        fsio.calls = real
    writes = [
        i
        for i, op in enumerate(recorder.ops)
        if i >= start and op[0] == "write" and op[1] == "state/wal/agent.jsonl" and op[3].count(b"\n") > 1
    ]
    assert len(writes) == 1 and recorder.ops[writes[0]][3].count(b"\n") == len(HAND)
    syncs = [op for op in recorder.ops[start:] if op[0] == "fsync" and op[2] == "wal.append"]
    assert len(syncs) == 2  # the batch, then the checkpoint's own record
    return recorder.ops, writes[0]


def _adopted(root: Path) -> list[str]:
    recs = wallines.records(str(root / "wal" / "agent.jsonl"))
    return [line for line, ordered in latches.actor_lines(recs) if not ordered]


def test_a_batch_torn_anywhere_loses_no_line(tmp_path: Path) -> None:
    old = os.getcwd()
    try:
        ops, write = _adoption(tmp_path / "rec")
    finally:
        os.chdir(old)
    batch = ops[write][3]
    ends = [i + 1 for i, b in enumerate(batch) if b == ord("\n")]
    cuts = sorted({1, *ends[:3], ends[5] - 7, ends[19], ends[19] + 40, len(batch) - 1})
    model = crashsim.replay(ops, write + 1)
    for variant, cut in [("keep", 0), ("drop", 0)] + [(v, c) for c in cuts for v in ("torn-keep", "torn-drop")]:
        image = tmp_path / f"{variant}-{cut}"
        image.mkdir()
        model.materialize(str(image), variant, cut)
        root = image / "state"
        whole = (
            sum(1 for e in ends if e <= cut) if variant.startswith("torn") else (len(HAND) if variant == "keep" else 0)
        )
        assert len(_adopted(root)) == whole, (variant, cut)
        out = State.open(root).checkpoint("after the crash", "go on")  # the cheap path, not verify
        assert _adopted(root) == HAND, (variant, cut, out.repaired, out.problems)
        assert not out.problems and State.open(root).verify().ok, (variant, cut)
        shutil.rmtree(image)
