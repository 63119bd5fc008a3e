"""audit.symptoms (audit/symptoms.py): what followed each compaction of a session, compared with the calls before
it (files edited again, calls repeated, errors before and after, turns before the first edit), and the session's
score, on a Claude Code transcript written here and read by the transcripts reader as the audit reads it."""

from __future__ import annotations

import json
from pathlib import Path

from rehydrate.audit.symptoms import score, symptoms
from rehydrate.transcripts import reader


def _use(n: int, name: str, path: str) -> list[str]:
    block = {"type": "tool_use", "id": f"t{n}", "name": name, "input": {"file_path": path}}
    return [json.dumps({"type": "assistant", "message": {"id": f"m{n}", "content": [block]}})]


def _failed(n: int, name: str, path: str) -> list[str]:
    result = {"type": "tool_result", "tool_use_id": f"t{n}", "is_error": True, "content": "Error: no such file"}
    return [*_use(n, name, path), json.dumps({"type": "user", "message": {"content": [result]}})]


def test_a_file_edited_again_and_a_call_repeated_after_a_compaction_are_its_symptoms(tmp_path: Path) -> None:
    boundary = {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}}
    before = [*_use(1, "Read", "a.py"), *_use(2, "Edit", "a.py"), *_failed(3, "Read", "gone.py")]
    after = [*_use(4, "Read", "a.py"), *_use(5, "Edit", "a.py"), *_use(6, "Edit", "new.py"), *_failed(7, "Read", "x")]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([*before, json.dumps(boundary), *after]) + "\n")
    (c,) = symptoms(reader.read(str(path), audit=True))
    assert c["trigger"] == "auto" and c["line"] == 5  # the boundary: the 5th line
    assert c["files_edited_again"] == ["a.py"]  # new.py was not edited before it
    assert c["repeated_calls"] == 2  # Read a.py and Edit a.py, with the same input
    assert (c["errors_before"], c["errors_after"]) == (1, 1)
    assert score([c]) == 3 * 1 + 2 + 1


def test_a_session_without_a_compaction_has_no_symptoms(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([*_use(1, "Edit", "a.py"), *_use(2, "Edit", "a.py")]) + "\n")
    assert symptoms(reader.read(str(path), audit=True)) == [] and score([]) == 0
