"""`rehydrate demo`, the first thing a new user runs, as a real process."""

from __future__ import annotations

from pathlib import Path

from conftest import rehydrate


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
