"""Eight processes writing 500 checkpoints each into one state folder: nothing lost, nothing torn.

Nothing here waits on the clock: the writers start once the reader is reading, stop half-way until the reader has
read the view they left (so it provably read while they wrote), and go on when told to.
"""

from __future__ import annotations

import itertools
import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

from rehydrate.store import views
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

TIMEOUT = 900  # generous: every wait below ends on an event

WRITER = r"""
import sys
from rehydrate.store.state import State
st = State.open(sys.argv[1])
count = int(sys.argv[3])
for i in range(count):
    if i == count // 2:
        print("half", flush=True)
        sys.stdin.readline()
    st.checkpoint(done=f"{sys.argv[2]}-{i}", next=f"{sys.argv[2]}-{i + 1}")
"""

# Reads 99_next.md over and over until told to stop (or its parent test is gone). The control file holds nothing,
# "await DONE" (say "saw DONE" once the view says DONE was last completed) or "stop".
READER = r"""
import os, sys
from rehydrate.store import views
path, control = sys.argv[1] + "/99_next.md", sys.argv[2]
parent = os.getppid()
bad = reads = 0
said = None
while os.getppid() == parent:
    try:
        text = open(path).read()
    except FileNotFoundError:
        bad += 1
        continue
    reads += 1
    fields = views.parse_next(text)
    if not (text.startswith("# Next (") and text.endswith("\n") and set(fields) == {"goal", "done", "next"}):
        bad += 1
        print("torn:", repr(text), flush=True)
    if reads == 1:
        print("reading", flush=True)
    order = open(control).read()
    if order == "stop":
        break
    if order.startswith("await ") and order[6:] == fields.get("done") and said != order:
        said = order
        print("saw", fields["done"], flush=True)
print("reads", reads, "bad", bad, flush=True)
"""


class Lines:
    """A process's stdout, line by line, without Python's buffering (so that a wait for output sees every line)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc, self.fd, self.buf = proc, proc.stdout.fileno(), b""

    def next(self) -> str:
        """The next line; fails if the process says nothing for TIMEOUT seconds, or exits first."""
        while b"\n" not in self.buf:
            with selectors.DefaultSelector() as sel:
                sel.register(self.fd, selectors.EVENT_READ)
                assert sel.select(TIMEOUT), f"no output for {TIMEOUT} s"
            chunk = os.read(self.fd, 1 << 16)
            assert chunk, f"exited {self.proc.wait(TIMEOUT)} early: {self.buf!r}"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()


@pytest.mark.slow  # version-independent and long: on the main Python only (.ci/run)
def test_eight_writers_five_hundred_checkpoints_each(tmp_path: Path) -> None:
    procs, per = 8, 500
    root = tmp_path / "state"
    State.init(root, "Concurrency")
    control = tmp_path / "control"
    control.write_text("")
    reader = subprocess.Popen([sys.executable, "-c", READER, str(root), str(control)], stdout=subprocess.PIPE)
    reading = Lines(reader)
    writers: list[subprocess.Popen[bytes]] = []
    try:
        assert reading.next() == "reading"
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(root), f"w{n}", str(per)],
                cwd=tmp_path,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            for n in range(procs)
        ]
        for w in writers:
            assert Lines(w).next() == "half"
        # every writer waits half-way, the last one after its checkpoint per/2 - 1: the view is still, and the
        # reader must read it while they wait
        halfway = views.parse_next((root / "99_next.md").read_text())["done"]
        assert halfway.endswith(f"-{per // 2 - 1}"), halfway
        control.write_text(f"await {halfway}")
        assert reading.next() == f"saw {halfway}"
        for w in writers:
            assert w.stdin is not None
            w.stdin.write(b"go\n")
            w.stdin.flush()
        for w in writers:
            w.communicate(timeout=TIMEOUT)  # closes its stdin and stdout
            assert w.returncode == 0
    finally:
        for w in writers:  # a failed test: what still runs is killed, every pipe closed
            if w.poll() is None:
                w.kill()
            w.wait()
            for pipe in (w.stdin, w.stdout):
                if pipe is not None and not pipe.closed:
                    try:
                        pipe.close()
                    except BrokenPipeError:
                        pass
        control.write_text("stop")
        rest, _ = reader.communicate(timeout=TIMEOUT)
    out = (reading.buf + rest).decode()
    assert out.strip().endswith("bad 0"), out[-2000:]

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
    assert views.parse_next((root / "99_next.md").read_text())["done"] == last["data"]["done"]
    print(f"{procs * per} checkpoints by {procs} writers; the reader: {out.strip().splitlines()[-1]}")
