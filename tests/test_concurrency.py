"""Eight processes writing 500 checkpoints each into one state folder: nothing lost, nothing torn."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

from rehydrate import layout, wal
from rehydrate.state import State

WRITER = r"""
import sys
from rehydrate.state import State
st = State.open(sys.argv[1])
for i in range(int(sys.argv[3])):
    st.checkpoint(done=f"{sys.argv[2]}-{i}", next=f"{sys.argv[2]}-{i + 1}")
"""

READER = r"""
import sys, time
from rehydrate import layout
path = sys.argv[1] + "/99_next.md"
bad = 0
reads = 0
end = time.time() + 600
while time.time() < end:
    try:
        text = open(path).read()
    except FileNotFoundError:
        bad += 1
        continue
    reads += 1
    fields = layout.parse_next(text)
    if not (text.startswith("# Next (") and text.endswith("\n") and set(fields) == {"goal", "done", "next"}):
        bad += 1
        print("torn:", repr(text), flush=True)
    if open(sys.argv[2]).read() == "stop":
        break
print("reads", reads, "bad", bad, flush=True)
"""


def test_eight_writers_five_hundred_checkpoints_each(tmp_path: Path) -> None:
    procs, per = 8, 500
    root = tmp_path / "state"
    State.init(root, "Concurrency")
    stop = tmp_path / "stop"
    stop.write_text("")
    reader = subprocess.Popen([sys.executable, "-c", READER, str(root), str(stop)], stdout=subprocess.PIPE, text=True)
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), f"w{n}", str(per)], cwd=tmp_path)
        for n in range(procs)
    ]
    for w in writers:
        assert w.wait(timeout=900) == 0
    stop.write_text("stop")
    out, _ = reader.communicate(timeout=60)
    assert out.strip().endswith("bad 0"), out[-2000:]
    assert int(out.split()[-3]) > 100  # the reader really read while the writers wrote

    lines = (root / "wal" / "agent.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""
    records = [wal.decode(line) for line in lines[:-1]]  # every line parses and its hash holds
    checkpoints = [r for r in records if r["op"] == "checkpoint"]
    assert len(checkpoints) == procs * per
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    for a, b in itertools.pairwise(records):
        assert b["prev"] == a["h"]
    for n in range(procs):  # each writer's checkpoints in its own order
        mine = [int(r["data"]["done"].split("-")[1]) for r in checkpoints if r["data"]["done"].startswith(f"w{n}-")]
        assert mine == list(range(per))
    assert State.open(root).verify().ok
    last = checkpoints[-1]
    assert layout.parse_next((root / "99_next.md").read_text())["done"] == last["data"]["done"]
