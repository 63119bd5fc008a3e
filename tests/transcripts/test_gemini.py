"""transcripts.gemini: Gemini CLI chat files, on the chat of tests/fixtures."""

from __future__ import annotations

import json
from pathlib import Path

from rehydrate.transcripts import gemini

GEMINI = Path(__file__).parent.parent / "fixtures" / "transcripts" / "gemini-0.61.0-chat.jsonl"
GEMINI_ROOT = "/home/user/project"


def test_gemini_project_hash_is_the_clis() -> None:
    head = json.loads(GEMINI.read_text().split("\n", 1)[0])
    assert gemini.project_hash(GEMINI_ROOT) == head["projectHash"]
