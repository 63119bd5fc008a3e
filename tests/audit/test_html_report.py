"""`rehydrate audit --html`: a self-contained page, loaded in a real headless Chromium started by the test."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REAL_TRANSCRIPTS, needs_real_transcripts, rehydrate

REAL = REAL_TRANSCRIPTS
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytest.importorskip("plotly")  # the test extra installs it


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium (see .ci/run)")
        pytest.skip("no chromium on this machine")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=8000",
    ]
    return subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


@needs_real_transcripts()
def test_the_page_loads_offline_draws_its_charts_and_shows_the_compaction(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    r = rehydrate("audit", str(REAL), "--html", str(page))
    assert r.code == 0, r.err
    text = page.read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=\"?https?:", text)  # nothing to fetch: no network
    assert "claude-code-2.1.39-manual-compact.jsonl" in text and "manual: 142,431 → 45,263" in text
    assert 'id="chart-loss"' in text and text.count("<table class=loss>") >= 2 and "<h2>Format drift</h2>" in text
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count('class="main-svg"') >= 3  # Plotly ran and drew both charts and the loss totals
    errors = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln and ("Uncaught" in ln or "Error" in ln)]
    assert not errors, errors
    shot = tmp_path / "report.png"
    _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1400", page.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_transcript_text_is_escaped(tmp_path: Path) -> None:
    evil = tmp_path / "<script>alert(1)<!--.jsonl"
    evil.write_text(
        '{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"<b>x</b>","preTokens":5}}\n'
    )
    page = tmp_path / "report.html"
    assert rehydrate("audit", str(evil), "--html", str(page)).code == 0
    text = page.read_text()
    assert "&lt;script&gt;alert(1)&lt;!--" in text and "<script>alert(1)" not in text
    assert "<b>x</b>" not in text


def test_the_page_shows_each_compactions_loss_and_the_totals(tmp_path: Path) -> None:
    """A table per compaction (by kind: facts, what the summary keeps, what the capture carries) with what neither
    kept, the totals as a chart and by harness, and the format drift; the same rows as the text."""
    import gzip

    from tests.transcripts import realsessions

    from rehydrate import audit
    from rehydrate.audit import html_report, text
    from rehydrate.harness.compaction import capture as precompact

    source = realsessions.FIXTURES / "claude-code-2.1.20-tasks.jsonl.gz"
    path = tmp_path / "claude-code-2.1.20-tasks.jsonl"
    path.write_bytes(gzip.decompress(source.read_bytes()))
    codex = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts" / "codex-0.171.0-autocompact.jsonl"
    data = audit.report([str(path), str(codex)], capture=precompact.capture)
    page = html_report.render(data)
    assert page.count("<table class=loss>") == 2 and 'id="chart-loss"' in page
    loss = data["sessions"][0]["compactions"][0]["loss"]
    for name, n, kept, carried in text.loss_rows(loss["totals"]):
        assert f"<tr><td>{name}</td><td class=n>{n}</td><td class=n>{kept}</td><td class=n>{carried}</td></tr>" in page
    lost = text.lost_by_both(loss, 5)
    assert lost and all(f"<code>{html_report._e(f['text'])}</code>" in page for f in lost)
    t = data["summary"]["loss"]
    assert f"{t['facts']} facts; the harness's summary kept {t['kept_by_summary']}" in page
    assert "<tr><td>codex</td>" in page and "<li>codex 0.171.0 (1 session): type:token_usage_record 4" in page
