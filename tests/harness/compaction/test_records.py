"""The hooks' records that let a recovery find the transcript, and the capture's wiring (harness/events.py).

`compaction` (PreCompact, phase pre), `compacted` (Claude Code's PostCompact) and Gemini's `precompress` carry
store.wal.since.ref_fields: the harness, this host, the transcript's path as the harness sent it and its size (None when
the file does not exist yet, so that a recovery tells a file never written from one gone since). PreCompact also
records the capture (harness/compaction/capture.py) in the same single record; a capture that raises never costs the
compaction its record. Every hook runs as a real subprocess; the capture is replaced, where a test needs to see what it
was given, by a `sitecustomize` on PYTHONPATH (the subprocess's only difference).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import hook_event, records, rehydrate, run_hook
from rehydrate.store.state import State
from rehydrate.store.wal import since
from scenarios.transcripts import Claude, Codex, Gemini

PRECOMPACT = {"claude": "PreCompact-auto", "codex": "PreCompact"}

FAKE = """
import os
from rehydrate.harness.compaction import capture


def fake(root, event, since, config):
    mode = os.environ["FAKE_CAPTURE"]
    if mode == "raise":
        raise RuntimeError("boom\\nsecond line")
    if mode == "none":
        return None
    return {"v": 1, "root": root, "since": {"seq": since.seq, "ts": since.ts}, "config": config,
            "session": event.get("session_id")}


capture.capture = fake
"""


@pytest.fixture
def fake_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(FAKE)
    monkeypatch.setenv("PYTHONPATH", str(shim))
    return monkeypatch


def _hook(repo: Path, harness: str, fixture: str, **changes: object) -> dict[str, object]:
    """Run the hook; the one record it appended: to the committed log, or for Gemini's PreCompress (fired before
    every model request) to the worktree's journal."""
    journal = repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"

    def noted() -> list[dict[str, object]]:
        return [json.loads(x) for x in journal.read_text().splitlines()] if journal.exists() else []

    before, before_noted = len(records(repo / "state")), len(noted())
    code, out, err = run_hook(harness, hook_event(repo, harness, fixture, **changes), repo)
    assert (code, out) == (0, ""), err
    after = records(repo / "state") if harness != "gemini" else noted()
    assert len(after) == (before if harness != "gemini" else before_noted) + 1, "one event, one record"
    assert harness != "gemini" or len(records(repo / "state")) == before, "nothing in the committed log"
    return after[-1]


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_precompact_records_the_capture_since_the_checkpoint(
    repo: Path, state: State, fake_capture: pytest.MonkeyPatch, harness: str
) -> None:
    fake_capture.setenv("FAKE_CAPTURE", "dict")
    Path(state.path("config.json")).write_text(json.dumps({"capture_user": False}))
    checkpoint = [r for r in records(state.root) if r["op"] == "checkpoint"][-1]
    state.record("resume", {"chars": 1})  # a record after the checkpoint: since.find reads back past it
    rec = _hook(repo, harness, PRECOMPACT[harness])
    assert rec["op"] == "compaction" and rec["data"]["phase"] == "pre"
    capture = rec["data"]["capture"]
    assert capture["since"] == {"seq": checkpoint["seq"], "ts": checkpoint["ts"]}
    assert capture["config"] == {"capture_user": False}  # state/config.json, as store/config.py reads it
    assert os.path.realpath(capture["root"]) == os.path.realpath(repo)  # the project's root, not state/
    assert capture["session"] == json.loads(hook_event(repo, harness, PRECOMPACT[harness]))["session_id"]
    assert rec["data"]["harness"] == harness


def test_a_capture_that_raises_keeps_the_compaction_record(
    repo: Path, state: State, fake_capture: pytest.MonkeyPatch
) -> None:
    fake_capture.setenv("FAKE_CAPTURE", "raise")
    checkpoint = [r for r in records(state.root) if r["op"] == "checkpoint"][-1]
    rec = _hook(repo, "claude", "PreCompact-auto")
    assert rec["op"] == "compaction" and rec["data"]["phase"] == "pre" and rec["data"]["trigger"] == "auto"
    assert rec["data"]["capture"] == {
        "v": 2,
        "harness": "claude",
        "since": {"seq": checkpoint["seq"], "ts": checkpoint["ts"]},
        "error": "the capture failed: RuntimeError: boom second line",
    }
    assert state.verify().ok


def test_no_capture_key_when_the_capture_is_off(repo: Path, state: State, fake_capture: pytest.MonkeyPatch) -> None:
    fake_capture.setenv("FAKE_CAPTURE", "none")
    rec = _hook(repo, "claude", "PreCompact-auto")
    assert rec["op"] == "compaction" and "capture" not in rec["data"]


def test_postcompact_never_captures(repo: Path, state: State, fake_capture: pytest.MonkeyPatch) -> None:
    fake_capture.setenv("FAKE_CAPTURE", "raise")  # it would show up as an error if it were called
    rec = _hook(repo, "claude", "PostCompact")
    assert rec["op"] == "compacted" and "capture" not in rec["data"] and rec["data"]["harness"] == "claude"


def _refs(state: State) -> list[since.TranscriptRef]:
    with state.reading() as snap:
        return since.find(state, snap).transcripts


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini"])
def test_the_records_name_the_transcript_a_recovery_reads(
    repo: Path, state: State, isolated_home: Path, harness: str
) -> None:
    if harness == "claude":
        built: Claude | Codex | Gemini = Claude(isolated_home, repo)
        fixture = "PreCompact-auto"
    elif harness == "codex":
        built = Codex(isolated_home, repo)
        fixture = "PreCompact"
    else:
        built = Gemini(isolated_home, repo)
        fixture = "PreCompress-auto"
    if isinstance(built, Codex):
        built.user_message("now do binding powers")
    else:
        built.user("now do binding powers")
    rec = _hook(repo, harness, fixture, transcript_path=str(built.path))
    assert rec["op"] == ("precompress" if harness == "gemini" else "compaction")
    size = built.path.stat().st_size
    data = rec["data"]
    assert (data["harness"], data["host"], data["transcript_path"]) == (harness, since.host(), str(built.path))
    assert data["transcript_size"] == size > 0
    [ref] = _refs(state)
    assert (ref.path, ref.size, ref.harness, ref.host, ref.op) == (
        str(built.path),
        size,
        harness,
        since.host(),
        rec["op"],
    )


def test_a_transcript_not_written_yet_is_recorded_without_a_size(repo: Path, state: State) -> None:
    missing = repo / "not-yet.jsonl"
    rec = _hook(repo, "claude", "PreCompact-auto", transcript_path=str(missing))
    assert rec["data"]["transcript_path"] == str(missing) and rec["data"]["transcript_size"] is None


def test_a_path_with_nul_is_not_recorded(repo: Path, state: State) -> None:
    """Its cleaned form would name another file: the record keeps no path at all, and since.find none."""
    planted = repo / "evil.jsonl"
    planted.write_text("{}\n")
    rec = _hook(repo, "claude", "PreCompact-auto", transcript_path=str(planted) + "\x00.txt")
    assert "transcript_path" not in rec["data"] and "transcript_size" not in rec["data"]
    assert rec["data"]["harness"] == "claude" and _refs(state) == []


def test_log_shows_a_capture_as_counts(repo: Path, state: State) -> None:
    capture = {
        "v": 1,
        "todos": {
            "tool": "TodoWrite",
            "line": 3,
            "before_checkpoint": False,
            "items": [["secret plan", "pending"]],
            "more": 2,
        },
        "edited": {"files": ["calc/parser.py", "tests/test_parser.py"], "more": 0},
        "failed": [{"line": 9, "tool": "Bash", "command": "pytest -q", "exit": 1, "error": "boom", "later_ok": False}],
        "user": [{"line": 2, "ts": None, "text": "now do binding powers"}],
    }
    state.record("compaction", {"phase": "pre", "trigger": "auto", "capture": capture})
    result = rehydrate("log", cwd=repo)
    assert result.code == 0, result.err
    last = result.out.strip().splitlines()[-1]
    assert last.endswith("phase pre, trigger auto, captured: 3 todos, 2 files edited, 1 failed command")
    assert "binding powers" not in result.out and "secret plan" not in result.out
