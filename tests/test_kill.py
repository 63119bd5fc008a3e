"""Real writer processes killed with SIGKILL at random points during checkpoints: verify, then repair, always ends
clean, and every checkpoint the writer saw return is in the WAL."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from rehydrate.state import State

WRITER = r"""
import sys
from rehydrate.state import State
st = State.open(sys.argv[1])
i = int(sys.argv[2])
while True:
    out = st.checkpoint(done=f"step {i}", next=f"step {i + 1}")
    print(out.record["seq"], i, flush=True)
    i += 1
"""


def _all_records(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "wal" / "agent.jsonl").read_text().splitlines()]


def test_sigkill_during_checkpoints_always_recovers(tmp_path: Path) -> None:
    root = tmp_path / "state"
    State.init(root, "Survive kills")
    rng = random.Random(20261129)
    returned: dict[int, str] = {}
    repairs = 0
    kills = 0
    step = 0
    for _ in range(60):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(step)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
        )
        time.sleep(rng.uniform(0.08, 0.35))  # start-up is ~60 ms: kill somewhere in the checkpoint loop
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        kills += 1
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2:  # a line cut by the kill is not a returned checkpoint
                returned[int(parts[0])] = f"step {parts[1]}"
                step = max(step, int(parts[1]) + 1)
        st = State.open(root)
        first = st.verify()
        if first.problems:
            assert all(p.repairable for p in first.problems), first.problems
            fixed = st.verify(repair=True)
            repairs += len(fixed.repaired)
        assert st.verify().ok
    records = {r["seq"]: r for r in _all_records(root)}
    for seq, done in returned.items():
        assert records[seq]["op"] == "checkpoint" and records[seq]["data"]["done"] == done
    assert kills == 60 and len(returned) > 60
    # the last checkpoint in the WAL is what 99_next.md shows
    last_cp = max(s for s, r in records.items() if r["op"] == "checkpoint")
    assert f"last completed: {records[last_cp]['data']['done']}\n" in (root / "99_next.md").read_text()
    print(f"{kills} kills, {len(returned)} returned checkpoints, {repairs} repairs")
