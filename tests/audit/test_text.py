"""audit.text (audit/text.py): the text report's symptom lines, the same the page shows."""

from __future__ import annotations

from rehydrate.audit import html_report, text


def test_the_page_and_the_text_show_the_same_symptom_lines() -> None:
    """One helper (text.symptom_lines) words what followed a compaction for both renderers; the page marks the
    lines that suggest lost context and escapes what came from the transcript."""
    c = {
        "line": 7,
        "time": "2026-10-20T09:15:00Z",
        "trigger": "auto",
        "tokens_before": 1000,
        "tokens_after": 10,
        "files_edited_again": ["a<b>.py", "c.py"],
        "repeated_calls": 2,
        "errors_before": 1,
        "errors_after": 3,
        "turns_before_first_edit": 4,
    }
    lines = text.symptom_lines(c, text.shown, 8)
    assert [bad for _line, bad in lines] == [True, True, False, False]
    session = {
        "path": "s.jsonl",
        "harness": "claude",
        "user_turns": 1,
        "tool_calls": 9,
        "context": [],
        "compactions": [c],
    }
    page_text = text.render(
        {"sessions": [session], "summary": {"files": 1, "sessions": 1, "compactions": 1, "ranked": []}, "errors": []}
    )
    assert all(f"    {line}\n" in page_text for line, _bad in lines), page_text
    page = html_report._symptoms(c)
    assert "<li class=bad>edited again after it: a&lt;b&gt;.py, c.py</li>" in page
    assert [f"<li{' class=bad' if bad else ''}>{line}</li>" in page for line, bad in lines[1:]] == [True] * 3
