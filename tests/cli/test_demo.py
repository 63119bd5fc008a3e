"""`rehydrate demo`, the first thing a new user runs, as a real process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import on_a_terminal, rehydrate
from rehydrate.harness.setup import NEXT_STEPS


def test_demo_shows_the_loop_and_exits_0(tmp_path: Path) -> None:
    r = rehydrate("demo", cwd=tmp_path, timeout=120)
    assert r.code == 0, r.out + r.err
    out = r.out
    assert "Traceback" not in out + r.err
    assert "problem: state/99_next.md: lags the WAL's last record" in out
    assert "latch violation: a recorded line was changed" in out
    assert "repaired: redid state/99_next.md from the WAL" in out
    assert "confidence: degraded (state)" in out
    assert "     ok: state/ verified" in out[out.index("9. A person restores") :]
    assert list(tmp_path.iterdir()) == []  # it cleaned up after itself
    assert out.rstrip().endswith(NEXT_STEPS[-1])  # it ends with the set-up of one's own project, install included
    assert all(step in out for step in NEXT_STEPS) and "rehydrate install claude" in out


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color", [None, "1"])
def test_the_demo_heading_is_bold_on_a_terminal_unless_no_color(no_color: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    if no_color:
        env["NO_COLOR"] = no_color
    step = "from rehydrate.cli import demo; demo._step(1, 'A task starts')"
    proc, out = on_a_terminal([sys.executable, "-c", step], env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"1. A task starts" in out
    assert (b"\x1b[" in out) is (no_color is None), out
