"""Every hook event names a conflicted log as the startup brief does, never as an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.scenarios.test_conflicts import conflicted_repo, everything

from conftest import rehydrate

COMPRESSED = [  # a request of Gemini CLI's whose history was compressed (harness/gemini.py, summary_at)
    {"role": "user", "content": "the environment"},
    {"role": "user", "content": "<state_snapshot>the summary</state_snapshot>"},
    {"role": "model", "content": "Got it. Thanks for the additional context!"},
]


@pytest.mark.parametrize(
    ("harness", "event"),
    [
        ("claude", {"hook_event_name": "SessionStart", "source": "resume", "session_id": "s1"}),
        ("claude", {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s1"}),
        ("gemini", {"hook_event_name": "BeforeModel", "session_id": "s1", "llm_request": {"messages": COMPRESSED}}),
        ("claude", {"hook_event_name": "Stop", "session_id": "s1", "transcript_path": "missing.jsonl"}),
    ],
    ids=["resume", "compact", "compressed-request", "stop"],
)
def test_a_conflicted_log_is_no_internal_error_in_any_hook(repo: Path, harness: str, event: dict[str, str]) -> None:
    conflicted_repo(repo)
    (repo / "state" / "config.json").write_text('{"stop_reminder_after": 1}')
    before = everything(repo / "state")
    h = rehydrate("hook", harness, stdin=json.dumps({**event, "cwd": str(repo)}))
    assert h.code == 0
    assert "internal error" not in h.out + h.err and "Traceback" not in h.err, h
    if event["hook_event_name"] in ("SessionStart", "BeforeModel"):
        assert "merge-conflict" in h.out, h  # named, with how to finish the merge, as at startup
    assert everything(repo / "state") == before
