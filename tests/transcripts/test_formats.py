"""transcripts.formats: which harness wrote a file, told by its first records, and each harness's readers by name."""

from __future__ import annotations

import json
from pathlib import Path

from rehydrate.transcripts import codex, formats, gemini
from rehydrate.transcripts.claude import read, tail

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"


def _head(path: Path, n: int = 3) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()[:n] if line.strip()]


def test_each_harness_is_told_by_its_files_first_records() -> None:
    assert formats.detect(_head(FIXTURES / "gemini-0.61.0-chat.jsonl")) == "gemini"
    assert formats.detect(_head(FIXTURES / "codex-0.171.0-autocompact.jsonl")) == "codex"
    claude = [{"type": "user", "sessionId": "s", "cwd": "/p", "message": {"content": "hi"}}]
    assert formats.detect(claude) == "claude"
    assert formats.detect([{"type": "something else"}]) is None
    assert formats.detect([]) is None


def test_a_harness_without_a_format_of_its_own_is_read_as_the_default() -> None:
    assert formats.tail("gemini") is gemini.TAIL and formats.tail("codex") is codex.TAIL
    assert formats.tail("qwen") is tail.TAIL and formats.tail(None) is tail.TAIL
    assert formats.whole("codex") is codex and formats.whole("claude") is read
    assert formats.whole("gemini") is read  # the audit reads no Gemini file whole
