"""transcripts.claude.read: a whole Claude Code session file, on the real transcripts in shared/fixtures."""

from __future__ import annotations

from conftest import REAL_TRANSCRIPTS, needs_real_transcripts
from rehydrate.transcripts.claude.read import tool_calls_since

CLAUDE = REAL_TRANSCRIPTS / "claude-code-2.1.39-manual-compact.jsonl"

pytestmark = needs_real_transcripts()


def test_tool_calls_are_counted_in_a_real_transcript() -> None:
    """What the Stop hook's reminder counts: the tool calls stamped after the last checkpoint."""
    assert tool_calls_since(str(CLAUDE), "") > 50
    assert tool_calls_since(str(CLAUDE), "2999") == 0
