"""The delivery receipt's judge (transcripts/delivery.py) on transcripts written the way each harness writes a
hook's context: Claude Code's attachment and request records, Codex's developer message, Gemini CLI's escaping."""

from __future__ import annotations

import json
from pathlib import Path

from rehydrate.brief.receipt import brief_fields
from rehydrate.transcripts import delivery

TOKEN = "c0ffee5eed42"
BRIEF = (
    "A context compaction just happened; ...\n\n# rehydrate brief: state/ · actor agent\n\n"
    f"Token {TOKEN}: text from files and records stands between ...\n\n## Next\n> go on\n\n## Ledger {TOKEN}\n"
    "- identity: ok: actor agent\nconfidence: recovered\nnext safe action: write <the> parser & its tests\n"
)


def _judge(path: Path, start: int, text: str = BRIEF) -> delivery.Receipt:
    f = brief_fields(text, TOKEN)
    return delivery.judge(str(path), start, f["token"], f["after"], f["last"])


def _before(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"type": "user", "message": {"content": "earlier"}}) + "\n")
    return path, path.stat().st_size


def _add(path: Path, *records: object, raw: str = "") -> None:
    with path.open("a") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
        f.write(raw)


ANSWER = {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}}


def test_claude_code_s_attachment_whole_is_delivered(tmp_path: Path) -> None:
    path, start = _before(tmp_path)
    _add(path, {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": [BRIEF]}}, ANSWER)
    r = _judge(path, start)
    assert r.verdict == delivery.DELIVERED and r.kept == len(BRIEF) - BRIEF.index(TOKEN)


def test_codex_s_developer_message_is_delivered(tmp_path: Path) -> None:
    path, start = _before(tmp_path)
    message = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": BRIEF}]}
    _add(path, {"type": "response_item", "payload": message})
    assert _judge(path, start).verdict == delivery.DELIVERED


def test_escaped_angle_brackets_still_count_as_the_last_line(tmp_path: Path) -> None:
    """Gemini CLI escapes < and > in a hook's context: the receipt looks at letters and digits only."""
    path, start = _before(tmp_path)
    _add(path, {"type": "user", "content": BRIEF.replace("<", "&lt;").replace(">", "&gt;")}, ANSWER)
    assert _judge(path, start).verdict == delivery.DELIVERED


def test_a_cut_brief_is_truncated_and_says_how_much_arrived(tmp_path: Path) -> None:
    path, start = _before(tmp_path)
    cut = BRIEF[: BRIEF.index("## Ledger")] + "…[truncated]"
    _add(path, {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": [cut]}}, ANSWER)
    r = _judge(path, start)
    assert r.verdict == delivery.TRUNCATED and r.kept == len(cut) - cut.index(TOKEN)
    assert f"holds {r.kept:,} of the {len(BRIEF) - BRIEF.index(TOKEN):,} characters" in r.detail


def test_a_model_turn_without_the_token_is_not_delivered(tmp_path: Path) -> None:
    path, start = _before(tmp_path)
    _add(path, {"type": "user", "message": {"content": "go on"}}, ANSWER)
    assert _judge(path, start).verdict == delivery.NOT_DELIVERED


def test_nothing_written_yet_or_a_torn_line_is_pending(tmp_path: Path) -> None:
    path, start = _before(tmp_path)
    assert _judge(path, start).verdict == delivery.PENDING
    _add(path, raw=json.dumps({"type": "attachment", "content": [BRIEF]})[:200])  # being written
    assert _judge(path, start).verdict == delivery.PENDING
    assert delivery.judge(str(tmp_path / "gone.jsonl"), 0, TOKEN, 10, "x").verdict == delivery.PENDING


def test_the_token_before_the_hook_does_not_count(tmp_path: Path) -> None:
    """Only what the transcript gained after the hook is read: the same brief quoted earlier proves nothing."""
    path = tmp_path / "t.jsonl"
    _add(path, {"type": "user", "message": {"content": BRIEF}})
    start = path.stat().st_size
    _add(path, ANSWER)
    assert _judge(path, start).verdict == delivery.NOT_DELIVERED


def test_a_transcript_rewritten_shorter_is_read_from_its_start(tmp_path: Path) -> None:
    path, _start = _before(tmp_path)
    _add(path, {"type": "attachment", "attachment": {"content": [BRIEF]}}, ANSWER)
    assert _judge(path, 10**9).verdict == delivery.DELIVERED


def test_a_long_prompt_after_the_brief_in_the_same_string_does_not_hide_its_end(tmp_path: Path) -> None:
    """Gemini CLI writes the hook's context and the user's prompt as one string: the brief's end is looked for where
    the brief ends, not at the string's end."""
    path, start = _before(tmp_path)
    _add(path, {"type": "user", "content": f"<hook_context>{BRIEF}</hook_context>\n\n" + "p" * 50_000}, ANSWER)
    assert _judge(path, start).verdict == delivery.DELIVERED
