"""transcripts.codex: Codex CLI rollouts, on the rollout of tests/fixtures."""

from __future__ import annotations

from pathlib import Path

from rehydrate.transcripts import codex

CODEX_171 = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex-0.171.0-autocompact.jsonl"


def test_codex_0_171_prompts_are_turns() -> None:
    assert codex.read(str(CODEX_171)).user_turns == 1
