"""audit.drift (audit/drift.py): the record types and tools rehydrate's readers do not know, counted by harness and
version and shown in the text, the JSON and the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import rehydrate

CODEX_171 = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts" / "codex-0.171.0-autocompact.jsonl"


def test_what_the_readers_do_not_know_is_counted_by_version(tmp_path: Path) -> None:
    """Codex 0.171.0 writes record types rehydrate's reader does not know (world_state, token_usage_record, the
    event thread_settings_applied): the audit counts them over the whole file, before and after its compaction, and
    shows them in the text, the JSON and the page."""
    kinds: dict[str, int] = {}
    for raw in CODEX_171.read_text().splitlines():
        rec = json.loads(raw)
        name = rec["type"] if rec["type"] != "event_msg" else "event_msg:" + rec["payload"]["type"]
        kinds[name] = kinds.get(name, 0) + 1
    expected = {
        "type:token_usage_record": kinds["token_usage_record"],
        "type:event_msg:thread_settings_applied": kinds["event_msg:thread_settings_applied"],
        "type:world_state": kinds["world_state"],
    }
    assert expected == {
        "type:token_usage_record": 4,
        "type:event_msg:thread_settings_applied": 2,
        "type:world_state": 2,
    }
    data = json.loads(rehydrate("audit", str(CODEX_171), "--json").out)
    assert data["sessions"][0]["unknown"] == expected
    assert data["summary"]["drift"] == [{"harness": "codex", "version": "0.171.0", "sessions": 1, "unknown": expected}]
    text = rehydrate("audit", str(CODEX_171)).out
    assert (
        "  codex 0.171.0 (1 session): type:token_usage_record 4, type:event_msg:thread_settings_applied 2, "
        "type:world_state 2\n" in text
    )
    pytest.importorskip("plotly")
    page = tmp_path / "a.html"
    assert rehydrate("audit", str(CODEX_171), "--html", str(page)).code == 0
    assert "<li>codex 0.171.0 (1 session): type:token_usage_record 4, type:event_msg:thread_settings_applied 2" in (
        page.read_text()
    )
