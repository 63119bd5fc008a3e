"""examples/pipeline.py, killed with SIGKILL mid-run and resumed: every item once, in order."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

EXAMPLE = Path(__file__).parent.parent / "examples" / "pipeline.py"


def test_killed_and_resumed_until_done(tmp_path: Path) -> None:
    items = [f"line {i} " + "word " * (i % 7) for i in range(120)]
    (tmp_path / "in.txt").write_text("\n".join(items) + "\n")
    argv = [sys.executable, str(EXAMPLE), "in.txt", "out.jsonl", "progress.json", "--delay", "0.002"]
    rng = random.Random(5)
    kills = 0
    for _ in range(40):
        proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.05, 0.2))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate()
        if proc.returncode == 0:
            break
    else:
        raise AssertionError("the pipeline never finished")
    assert kills >= 2
    records = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["index"] for r in records] == list(range(120))
    assert [r["words"] for r in records] == [len(x.split()) for x in items]
    assert json.loads((tmp_path / "progress.json").read_text()) == {"cursor": 120}
