"""`rehydrate audit` shows other people's text: no field of a transcript or of its path reaches a terminal or the HTML
report with a control character, an escape sequence, NUL, CR or a bidirectional override in it."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from rehydrate import audit

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x00\r\u202egnp.\u2066x\u2069\x85\u2028"  # title, clear screen, NUL, CR, bidi, C1


def _bad(text: str) -> list[str]:
    """Every character of text that could drive a terminal or disguise what it shows (newlines between lines kept)."""
    return [hex(ord(ch)) for ch in text if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]


def _transcript(tmp_path: Path) -> Path:
    """A Claude Code session whose path, compaction trigger, time and edited file hold hostile characters."""
    folder = tmp_path / f"proj{HOSTILE.replace(chr(0), '')}"
    folder.mkdir()
    at = f"2026{HOSTILE[:8]}-02-12T14:48"  # within the 16 characters shown
    edit = {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": f"src/{HOSTILE}.py"}}
    again = {**edit, "id": "t2"}
    lines = [
        {"type": "user", "sessionId": "s", "timestamp": at, "message": {"content": "go"}},
        {"type": "assistant", "timestamp": at, "message": {"id": "m1", "content": [edit]}},
        {"type": "system", "subtype": "compact_boundary", "timestamp": at, "compactMetadata": {"trigger": HOSTILE}},
        {"type": "assistant", "timestamp": at, "message": {"id": "m2", "content": [again]}},
    ]
    path = folder / f"{HOSTILE.replace(chr(0), '')}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_the_text_report_shows_no_control_or_bidi_character(tmp_path: Path) -> None:
    path = _transcript(tmp_path)
    data = audit.report([str(path), str(tmp_path / f"gone{HOSTILE.replace(chr(0), '')}.jsonl")])
    (c,) = data["sessions"][0]["compactions"]
    assert c["trigger"] == HOSTILE and c["files_edited_again"] == [f"src/{HOSTILE}.py"]  # the data stays exact
    text = audit.render(data)
    assert not _bad(text), _bad(text)
    assert "compaction (]0;owned" in text and "gnp." in text and "unreadable: " in text
    assert len(text.splitlines()) == len(audit.render({**data, "errors": []}).splitlines()) + 1  # CR split no line


def test_the_html_report_shows_no_control_or_bidi_character(tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    from plotly.offline import get_plotlyjs

    from rehydrate.audit import html_report

    path = _transcript(tmp_path)
    page = html_report.render(audit.report([str(path), str(tmp_path / "gone\x1b[2J.jsonl")]))
    ours = page.replace(get_plotlyjs(), "")  # Plotly's own script is not transcript text
    assert not _bad(ours), _bad(ours)
    assert "]0;owned" in ours and "gnp." in ours and "gone[2J.jsonl" in ours
