"""Codex CLI's hook (harness/codex.py): its SessionStart and PreCompact, its apply_patch guarded, and its answers within
the bytes Codex reads.

The brief is bounded in the unit each harness counts.

Codex CLI caps a hook's output near 2,500 tokens counted at about 4 bytes a token: a brief of 6,229 characters in
12,448 UTF-8 bytes (40 non-English rejected approaches) reached the model cut, 10 of 40 `R-` ids gone. The hook gives
Codex a brief within 9,000 bytes, in which every rejected approach's id stays; Claude Code's stays within 9,000
characters. Real subprocesses, as the harnesses run the hook."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import hook_answer, hook_event, records, run_hook, says_nothing
from rehydrate import brief
from rehydrate.checks import Finding
from rehydrate.store import layout
from rehydrate.store.state import State

RUSSIAN = "Переписать разбор выражений вручную, без таблицы приоритетов, вариант {i}"
RUSSIAN_WHY = "так уже пробовали: приоритеты расходятся с грамматикой и тесты падают на вложенных скобках"
JAPANESE = "構文解析器を手で書き直す、優先順位表を使わない方法、その{i}番目の案"
JAPANESE_WHY = "以前に試したが入れ子の括弧で優先順位が文法と食い違い、単項演算子の扱いも崩れてテストが失敗した"


def test_codex_session_start_compact_and_pre_compact(repo: Path, state: State) -> None:
    code, out, _ = hook_answer("codex", hook_event(repo, "codex", "SessionStart-compact"), repo)
    assert code == 0 and out is not None
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("A context compaction just happened")
    code, out, _ = hook_answer("codex", hook_event(repo, "codex", "PreCompact"), repo)
    assert (code, out) == (0, None)
    assert records(state.root)[-1]["data"]["trigger"] == "auto" and records(state.root)[-1]["op"] == "compaction"


def test_codex_apply_patch_on_a_guarded_path_is_warned(repo: Path, state: State) -> None:
    state.reject("Patch src/auth by hand", because="the auth code is generated", guard="src/auth*")
    code, out, _ = hook_answer("codex", hook_event(repo, "codex", "PreToolUse-apply_patch"), repo)
    assert code == 0 and out is not None
    assert "Patch src/auth by hand" in out["systemMessage"]  # Codex has no `ask`: a warning to model and user
    assert out["hookSpecificOutput"]["additionalContext"] == out["systemMessage"]
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    code, out, _ = hook_answer("codex", hook_event(repo, "codex", "PreToolUse-apply_patch"), repo)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


# ------------------------------------------------------------------------------------------------ within Codex's bytes


@pytest.fixture(params=["russian", "japanese"])
def forty(request: pytest.FixtureRequest, state: State) -> list[str]:
    """40 rejected approaches in a non-Latin script beside the state fixture's one; their ids, all 41."""
    text, why = (RUSSIAN, RUSSIAN_WHY) if request.param == "russian" else (JAPANESE, JAPANESE_WHY)
    for i in range(40):
        state.reject(text.format(i=i), because=why, guard=f"src/parser_{i}/*")
    invariants = Path(state.path(layout.INVARIANTS)).read_text(encoding="utf-8")
    ids = re.findall(r"^- (R-[0-9a-f]{6}) ", invariants, flags=re.MULTILINE)
    assert len(ids) == 41 and len(invariants.encode()) > 12_000  # far past Codex's cap, whole
    return ids


def session_start(harness: str, repo: Path, source: str) -> str:
    event = {"session_id": f"s-{source}", "cwd": str(repo), "hook_event_name": "SessionStart", "source": source}
    code, out, err = run_hook(harness, event, repo)
    assert code == 0, err
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("source", ["startup", "compact"])
def test_codex_gets_every_rejected_id_within_9000_bytes(repo: Path, forty: list[str], source: str) -> None:
    context = session_start("codex", repo, source)
    assert len(context.encode("utf-8")) <= 9000
    assert [i for i in forty if i not in context] == []
    assert "Ship the parser" in context and "next safe action: write the parser" in context
    assert context.startswith("A context compaction just happened") == (source == "compact")


def test_claude_and_gemini_keep_their_character_budget(repo: Path, forty: list[str]) -> None:
    for harness in ("claude", "gemini"):
        context = session_start(harness, repo, "startup")
        assert len(context) <= 9000 and [i for i in forty if i not in context] == []


def test_a_reduced_brief_for_codex_is_within_its_bytes_too(repo: Path, state: State, forty: list[str]) -> None:
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"decision", b"decisi0n")  # damage: the state cannot be opened
    log.write_bytes(b"\n".join(lines))
    context = session_start("codex", repo, "compact")
    assert "line 2" in context and "confidence: degraded" in context
    assert len(context.encode("utf-8")) <= 9000 and [i for i in forty if i not in context] == []


def test_a_guard_answer_for_codex_is_within_its_bytes(repo: Path, state: State) -> None:
    long = "𠮷𩸽の認証" * 200  # far longer than the guard quotes; 3.5 bytes a character (two outside the BMP)
    for i in range(6):
        state.reject(f"{long}{i}", because=JAPANESE_WHY * 3, guard="src/auth*")
    event = {
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"command": "*** Begin Patch\n*** Update File: src/auth.py\n@@\n-a\n+b\n*** End Patch\n"},
    }
    code, out, err = run_hook("codex", event, repo)
    answer = json.loads(out)
    assert code == 0, err
    for text in (answer["systemMessage"], answer["hookSpecificOutput"]["additionalContext"]):
        assert len(text.encode("utf-8")) <= 9000
        assert text.endswith("`rehydrate invariant TEXT --because WHY --supersedes ID`).")  # (five matched: no one id)
        assert len(re.findall(r"R-[0-9a-f]{6}", text)) == 5


def _input(rejected: list[str]) -> brief.BriefInput:
    return brief.BriefInput(
        folder="state",
        actor="agent",
        goal="# Goal\n\n" + "Собрать парсер " * 200,
        invariants="\n".join(rejected) + "\n",
        handoff="Заметки " * 3000,
        extras=[("30_notes.md", "примечание " * 400)],
        next="# Next (checkpoint 9, 2026-11-29T22:04Z, HEAD a1b2c3d)\nnext allowed action: " + "шаг " * 300,
        last_record="#9 checkpoint " + "данные " * 300,
        findings=[Finding("state", "ok", "проверено " * 30)],
        confidence="recovered",
        next_action="написать парсер " * 50,
    )


@pytest.mark.parametrize("max_bytes", [9000, 6000, brief.MIN_BUDGET * 2])
def test_render_keeps_every_essential_within_a_byte_budget(max_bytes: int) -> None:
    ids = [f"R-{i:06x}" for i in range(40)]
    rejected = [f"- {r} 2026-11-29 rejected: {RUSSIAN.format(i=n)} because: {RUSSIAN_WHY}" for n, r in enumerate(ids)]
    out = brief.render(_input(rejected), 9000, max_bytes=max_bytes)
    assert len(out.text) <= 9000 and len(out.text.encode("utf-8")) <= max_bytes
    assert [i for i in ids if i not in out.text] == []
    assert "Собрать парсер" in out.text and "confidence: recovered" in out.text
    assert "next safe action: написать парсер" in out.text and out.omitted
    assert len(brief.render(_input(rejected), 9000).text.encode("utf-8")) > max_bytes  # the bytes did it


def test_render_below_the_floor_is_still_within_its_bytes() -> None:
    rejected = [f"- R-{i:06x} 2026-11-29 rejected: {JAPANESE.format(i=i)}" for i in range(40)]
    out = brief.render(_input(rejected), 9000, 700)
    assert len(out.text.encode("utf-8")) <= 700 and "cut to fit" in out.text


def test_only_codex_s_own_tools_and_events_are_answered(repo: Path, state: State) -> None:
    """Each harness takes only its own tools and events: a tool name or an event of Claude Code or Gemini CLI sent
    to `rehydrate hook codex` gets no answer and writes no record (the installed matchers never send them)."""
    state.record("compaction", {"phase": "post", "session_id": "019a3c5e-7d21-7b90-a4c6-2f8e1b5d9c03"})
    patch = {"command": "*** Begin Patch\n*** Update File: db/schema.sql\n@@\n+DROP TABLE users;\n*** End Patch\n"}
    code, answer, _ = hook_answer("codex", hook_event(repo, "codex", "PreToolUse-apply_patch", tool_input=patch), repo)
    assert code == 0 and answer is not None  # its own tool, the same change: guarded
    schema = {"file_path": str(repo / "db" / "schema.sql"), "content": "DROP TABLE users;\n"}
    for tool, tool_input in (
        ("Edit", schema),
        ("Write", schema),
        ("write_file", schema),
        ("replace", schema),
        ("run_shell_command", {"command": "rm db/schema.sql"}),
    ):
        event = hook_event(repo, "codex", "PreToolUse-apply_patch", tool_name=tool, tool_input=tool_input)
        assert says_nothing("codex", event, repo), tool
    for name in ("BeforeTool", "BeforeAgent", "PreCompress"):
        event = hook_event(repo, "codex", "PreToolUse-apply_patch", hook_event_name=name, tool_input=patch)
        assert says_nothing("codex", event, repo), name


ROLLOUTS = Path(__file__).parent.parent / "fixtures" / "transcripts"


def test_post_compact_records_the_fingerprint_of_the_rollout_s_summary(repo: Path, state: State) -> None:
    """Codex's PostCompact carries no summary: the hook reads the rollout's last `compacted` line (a real 0.171.0
    rollout: its `message`) and records the summary's length and hash, never its text."""
    import hashlib

    rollout = ROLLOUTS / "codex-0.171.0-autocompact.jsonl"
    line = next(x for x in rollout.read_text().splitlines() if '"type":"compacted"' in x)
    message = json.loads(line)["payload"]["message"]
    event = hook_event(repo, "codex", "PostCompact", transcript_path=str(rollout))
    assert hook_answer("codex", event, repo)[:2] == (0, None)
    last = records(state.root)[-1]
    assert last["op"] == "compacted" and last["data"]["summary_source"] == "message"
    assert last["data"]["summary_sha256"] == hashlib.sha256(message.encode()).hexdigest()
    assert last["data"]["summary_chars"] == len(message) and message[:40] not in json.dumps(last)


def test_a_remote_compaction_s_encrypted_item_is_the_fingerprint(tmp_path: Path) -> None:
    """A newer Codex compacts remotely: the `compacted` line's message is empty and its replacement history ends with
    an encrypted `compaction` item (a real 0.142.5 rollout): that item, as canonical JSON, is the fingerprint."""
    import gzip

    from rehydrate.transcripts.codex import last_compaction

    rollout = tmp_path / "rollout.jsonl"
    rollout.write_bytes(gzip.decompress((ROLLOUTS / "compactions" / "codex-0.142.5-plan.jsonl.gz").read_bytes()))
    found = last_compaction(str(rollout))
    assert found is not None and found[1] == "replacement_history item" and '"encrypted_content"' in found[0]
    assert last_compaction(str(tmp_path / "missing.jsonl")) is None
    (tmp_path / "none.jsonl").write_text('{"type":"session_meta","payload":{}}\n')
    assert last_compaction(str(tmp_path / "none.jsonl")) is None
