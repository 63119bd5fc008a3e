"""transcripts.claude.tail: the tail of a Claude Code session since a checkpoint (as transcripts.recent.read_since
reads it), on small files built from the shapes Claude Code writes."""

from __future__ import annotations

from pathlib import Path

from tests.transcripts.tails import call, jsonl_file, read, result, user

from rehydrate.transcripts import formats


def test_the_byte_test_keeps_anything_it_cannot_judge() -> None:
    refused = formats.tail("claude").refused
    assert refused(b'{"type":"progress","data":{"type":"hook_progress"}}')
    assert refused(b'{"type":"file-history-snapshot","snapshot":{}}')
    for kept in (
        b'{"type":"progress","data":{"type":"user"}}',  # a used type somewhere inside
        b'{"type": "progress"}',  # spaced
        b'{"type":"progress","x":"\\u0022type\\u0022"}',  # an escape that could spell one
        b'{"type":"progress"',  # torn: parsed, counted bad
        b'{"type":"assistant","message":{}}',
    ):
        assert not refused(kept), kept


def test_slash_commands_queued_messages_and_a_rejection_s_words_are_requests(tmp_path: Path) -> None:
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
        "the new_string was NOT written to the file). To tell you how to proceed, the user said:\ndon't check this in"
    )
    recs = [
        user("2026-01-01T00:00:01Z", "fix the parser"),
        user("2026-01-01T00:00:02Z", "<command-name>/model</command-name>\n<command-args></command-args>"),
        user(
            "2026-01-01T00:00:03Z",
            "<command-message>review</command-message>\n<command-name>/review</command-name>"
            "\n<command-args>src/x.py</command-args>",
        ),
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:04Z", "content": "also a"},
        {"type": "queue-operation", "operation": "remove", "timestamp": "2026-01-01T00:00:05Z"},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:06Z", "content": "taken"},
        {"type": "queue-operation", "operation": "popAll", "timestamp": "2026-01-01T00:00:07Z", "content": "taken"},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-01T00:00:08Z", "content": "/ide"},
        call("2026-01-01T00:00:09Z", "b1", "Bash", {"command": "git commit -am wip"}),
        result("2026-01-01T00:00:10Z", "b1", rejected, error=True),
        user("2026-01-01T00:00:11Z", "[Request interrupted by user for tool use]"),
        user("2026-01-01T00:00:12Z", "<bash-input>ls</bash-input>"),
    ]
    r = read(jsonl_file(tmp_path / "a.jsonl", recs))
    assert [(m.kind, m.text) for m in r.user] == [
        ("prompt", "fix the parser"),
        ("command", "/review src/x.py"),
        ("queued", "also a"),  # delivered: it stands
        ("rejected", "don't check this in"),
    ]
    assert r.failed == []  # the user said no: the command did not fail
