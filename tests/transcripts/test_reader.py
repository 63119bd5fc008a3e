"""transcripts.reader: whole transcripts (Claude Code's, Codex's) read on the real transcripts in shared/fixtures
(read in place: their NOTICE.md stays with them)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REAL_TRANSCRIPTS, needs_real_transcripts
from rehydrate.transcripts import model, reader

REAL = REAL_TRANSCRIPTS
CLAUDE_OLD = REAL / "claude-code-2.0.13-manual-compact.jsonl"
CLAUDE = REAL / "claude-code-2.1.39-manual-compact.jsonl"
CODEX = REAL / "codex-0.89.0-exec.jsonl"

pytestmark = needs_real_transcripts()


def _found(session: model.Session) -> list[tuple[str | None, int | None, int]]:
    return [(c.trigger, c.tokens_before, c.line) for c in session.compactions]


def test_each_real_transcript_holds_exactly_its_compaction() -> None:
    assert _found(reader.read(str(CLAUDE_OLD))) == [("manual", 15808, 11)]
    big = reader.read(str(CLAUDE))
    assert _found(big) == [("manual", 142431, 1481)]
    assert big.compactions[0].tokens_after == 45263 and big.compactions[0].time == "2026-02-12T14:48:36.922Z"
    assert _found(reader.read(str(CODEX))) == []


def test_turns_tools_and_failures_of_a_real_session() -> None:
    s = reader.read(str(CLAUDE))
    assert (s.harness, s.lines, s.bad_lines) == ("claude", 2385, 0)
    assert len(s.tool_calls) == 242 and sum(c.failed for c in s.tool_calls) == 12
    assert all(t.context is None or t.context > 0 for t in s.turns)
    assert max(t.context or 0 for t in s.turns[:100]) > 100_000  # the sawtooth's peak before the compaction
    assert {"progress", "file-history-snapshot", "system:compact_boundary"} <= set(s.types)  # unknown types kept
    codex = reader.read(str(CODEX))
    assert codex.harness == "codex" and [c.name for c in codex.tool_calls].count("apply_patch") == 1
    assert any(f.endswith("JOKE.md") for c in codex.tool_calls for f in c.files)


def _codex_with_compaction(tmp_path: Path) -> Path:
    """The Codex rollout with a compaction put in, from the documented shape (NOTICE.md): a `compacted` line, then
    a `context_compacted` event, then a smaller usage."""
    lines = CODEX.read_text().splitlines()
    usage = {"input_tokens": 3100, "cached_input_tokens": 0, "output_tokens": 10, "total_tokens": 3110}
    inserted = [
        {
            "timestamp": "2026-01-25T10:32:09.000Z",
            "type": "compacted",
            "payload": {"message": "", "replacement_history": []},
        },
        {"timestamp": "2026-01-25T10:32:09.001Z", "type": "event_msg", "payload": {"type": "context_compacted"}},
        {
            "timestamp": "2026-01-25T10:32:09.500Z",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": usage, "last_token_usage": usage, "model_context_window": 258400},
            },
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines[:30] + [json.dumps(x) for x in inserted] + lines[30:]) + "\n")
    return path


def test_a_codex_compaction_gets_its_tokens_before_and_after(tmp_path: Path) -> None:
    s = reader.read(str(_codex_with_compaction(tmp_path)))
    (c,) = s.compactions
    before = [t.context for t in s.turns if t.line < 31][-1]
    assert (c.line, c.trigger, c.tokens_before, c.tokens_after) == (31, None, before, 3100)
    assert before is not None and before > 3100


def test_several_compactions_and_a_line_cut_mid_way(tmp_path: Path) -> None:
    lines = CLAUDE.read_bytes().split(b"\n")
    boundary = json.loads(lines[1480])
    second = {
        **boundary,
        "compactMetadata": {"trigger": "auto", "preTokens": 170251},
        "timestamp": "2026-02-12T15:30:00.000Z",
    }
    cut = lines[2000][: len(lines[2000]) // 2]  # a record torn in the middle, then the file goes on
    body = [*lines[:2000], cut, *lines[2001:2100], json.dumps(second).encode(), *lines[2100:]]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(body))
    s = reader.read(str(path))
    assert _found(s) == [("manual", 142431, 1481), ("auto", 170251, 2101)]
    assert s.bad_lines == 1 and s.compactions[1].tokens_after is not None
    path.write_bytes(CLAUDE.read_bytes()[:-200])  # the last line cut: counted, never a traceback
    assert reader.read(str(path)).bad_lines == 1


def test_bad_input_never_raises(tmp_path: Path) -> None:
    cases = {
        "empty.jsonl": b"",
        "utf8.jsonl": b'{"type":"user","message":{"content":"\xff\xfe"}}\n',
        "shapes.jsonl": b'{"type":"assistant","message":[1,2]}\n'
        b'{"type":"system","subtype":"compact_boundary"}\n[1]\n7\n',
        "big.jsonl": b'{"type":"user","message":{"content":"' + b"x" * (3 << 20) + b'"}}\n',
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        s = reader.read(str(tmp_path / name), "claude")
        assert s.lines == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1), name
    shapes = reader.read(str(tmp_path / "shapes.jsonl"), "claude")
    assert _found(shapes) == [(None, None, 2)] and shapes.bad_lines == 2


def test_tail_reads_the_last_turns_from_the_end() -> None:
    tail = reader.tail(str(CLAUDE), 1)
    assert tail[0]["type"] == "user" and tail[-1] == json.loads(CLAUDE.read_bytes().rstrip(b"\n").split(b"\n")[-1])
    starts = [json.loads(x) for x in CLAUDE.read_bytes().split(b"\n") if x.strip()]
    from rehydrate.transcripts.claude.read import starts_turn

    last_start = max(i for i, r in enumerate(starts) if starts_turn(r))
    assert tail == starts[last_start:]
    codex_tail = reader.tail(str(CODEX), 1)
    assert codex_tail[0]["payload"]["type"] == "user_message"
