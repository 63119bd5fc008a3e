"""`rehydrate hook claude`, as Claude Code calls it: JSON on stdin, a real subprocess, exit 0 whatever happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_hook as _run_hook
from rehydrate.store import wal
from rehydrate.store.state import State


def hook(event: dict | str | bytes, cwd: Path) -> tuple[int, str, str]:  # type: ignore[type-arg]
    return _run_hook("claude", event, cwd)


def common(repo: Path, name: str, **fields: object) -> dict[str, object]:
    return {
        "session_id": "9f1c7d2e-0000-4000-8000-000000000001",
        "transcript_path": "/home/user/.claude/projects/-home-user-project/9f1c7d2e.jsonl",
        "cwd": str(repo),
        "hook_event_name": name,
        "permission_mode": "default",
        **fields,
    }


def records(state: State) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x) for x in Path(state.wal_path).read_text().splitlines()]


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_injects_the_brief(repo: Path, state: State, source: str) -> None:
    code, out, err = hook(common(repo, "SessionStart", source=source), repo)
    assert code == 0, err
    answer = json.loads(out)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert len(context) <= 9000  # Claude Code cuts hook output at 10,000
    assert "Ship the parser" in context and "next safe action: write the parser" in context
    assert context.startswith("A context compaction just happened") == (source == "compact")
    assert records(state)[-1]["op"] == "resume"


def test_session_start_from_a_subfolder_finds_the_state(repo: Path, state: State) -> None:
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    code, out, _ = hook(common(sub, "SessionStart", source="startup"), sub)
    assert code == 0 and "Ship the parser" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_pre_compact_and_post_compact_are_recorded(repo: Path, state: State) -> None:
    code, out, _ = hook(common(repo, "PreCompact", trigger="auto", custom_instructions=""), repo)
    assert (code, out) == (0, "")
    pre = records(state)[-1]
    assert pre["op"] == "compaction" and pre["data"] == {
        "phase": "pre",
        "trigger": "auto",
        "session_id": "9f1c7d2e-0000-4000-8000-000000000001",
        "transcript_path": "/home/user/.claude/projects/-home-user-project/9f1c7d2e.jsonl",
    }
    summary = "The user asked for a parser. We decided on Pratt."
    code, out, _ = hook(common(repo, "PostCompact", trigger="manual", compact_summary=summary), repo)
    assert records(state)[-1]["op"] == "compacted"  # the same compaction's end: one compaction, one `compaction`
    post = records(state)[-1]["data"]
    assert code == 0 and "phase" not in post and post["summary_chars"] == len(summary)
    assert post["summary_sha256"] == wal.sha256(summary.encode()) and summary not in json.dumps(post)
    assert state.verify().ok


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Edit", {"file_path": "{repo}/db/schema.sql", "old_string": "a", "new_string": "b"}),
        ("Write", {"file_path": "db/schema.sql", "content": "x"}),
        ("Bash", {"command": "sed -i s/a/b/ db/schema.sql"}),
    ],
)
def test_a_guarded_edit_gets_the_configured_decision(repo: Path, state: State, tool: str, tool_input: dict) -> None:  # type: ignore[type-arg]
    tool_input = {k: v.replace("{repo}", str(repo)) for k, v in tool_input.items()}
    event = common(repo, "PreToolUse", tool_name=tool, tool_input=tool_input)
    for config, decision in ((None, "ask"), ({"guard": "deny"}, "deny"), ({"guard": "bogus"}, "ask")):
        if config is not None:
            Path(state.path("config.json")).write_text(json.dumps(config))
        code, out, _ = hook(event, repo)
        answer = json.loads(out)["hookSpecificOutput"]
        assert code == 0 and answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == decision
        assert (
            "rejected: Edit db/schema.sql directly because: every schema change needs a migration"
            in answer["permissionDecisionReason"]
        )
    Path(state.path("config.json")).write_text('{"guard": "warn"}')
    code, out, err = hook(event, repo)
    answer = json.loads(out)
    assert code == 0 and err == "" and "permissionDecision" not in out and "decision" not in answer
    warning = answer["systemMessage"]  # shown to the user, and the same text given to the model
    assert answer["hookSpecificOutput"] == {"hookEventName": "PreToolUse", "additionalContext": warning}
    assert "rejected: Edit db/schema.sql directly because: every schema change needs a migration" in warning
    assert "A rejected approach stays rejected" in warning


def test_an_unguarded_edit_says_nothing(repo: Path, state: State) -> None:
    for tool, tool_input in (
        ("Edit", {"file_path": str(repo / "app.py")}),
        ("Bash", {"command": "pytest -q"}),
        ("Read", {"file_path": str(repo / "db" / "schema.sql")}),
    ):
        assert hook(common(repo, "PreToolUse", tool_name=tool, tool_input=tool_input), repo) == (0, "", "")


def test_stop_never_blocks(repo: Path, state: State, tmp_path: Path) -> None:
    """The Stop hook answers with its reminder when configured (a plain systemMessage: no model turn), says nothing
    while a stop hook keeps the agent going, and never answers with a decision that blocks the stop."""
    transcript = _transcript(tmp_path / "session.jsonl", 3, "2999-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2}')
    event = common(repo, "Stop", stop_hook_active=False, transcript_path=str(transcript))
    code, out, err = hook(event, repo)
    answer = json.loads(out)
    assert (code, err) == (0, "") and set(answer) == {"systemMessage"}
    assert answer["systemMessage"].startswith("rehydrate: 3 tool calls since the last checkpoint (")
    assert "rehydrate checkpoint --done" in answer["systemMessage"]
    assert hook({**event, "stop_hook_active": True}, repo) == (0, "", "")  # already continuing: no loop
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 2, "block_on_error": true}')
    Path(state.wal_path).write_bytes(b"not a WAL\n")  # an error in the Stop hook: it still never blocks by itself
    code, out, err = hook(common(repo, "Stop", transcript_path=str(transcript)), repo)
    assert code in (0, 2) and '"decision"' not in out and '"block"' not in out


@pytest.mark.parametrize("stdin", [b"not json", b"[1, 2]", b"\xff\xfe\x00", b'{"cwd": 7, "source": [}'])
def test_bad_stdin_still_exits_0_and_says_what_it_can(repo: Path, state: State, stdin: bytes) -> None:
    """An input that names no event: the reduced brief (the state as far as it can be read) and the problem."""
    code, out, err = hook(stdin, repo)
    assert code == 0 and "Traceback" not in err and "could not read the hook's input" in err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart" and "Ship the parser" in answer["additionalContext"]
    assert "could not read the hook's input" in answer["additionalContext"]


@pytest.mark.parametrize("stdin", [b"", b"  \n", b"{}", b'{"hook_event_name": 7}', b'{"hook_event_name": "Later"}'])
def test_an_event_this_version_does_not_handle_gets_no_answer(repo: Path, state: State, stdin: bytes) -> None:
    assert hook(stdin, repo) == (0, "", "")


def test_missing_state_exits_0_with_a_pointer(repo: Path) -> None:
    """No state: nothing injected (hooks installed for the user run in every repository), one line on stderr."""
    code, out, err = hook(common(repo, "SessionStart", source="startup"), repo)
    assert (code, out) == (0, "") and "Traceback" not in err
    assert "rehydrate init" in err and len(err.splitlines()) == 1
    assert hook(common(repo, "PreCompact", trigger="auto"), repo)[0] == 0
    assert hook(common(repo, "PreToolUse", tool_name="Edit", tool_input={"file_path": "x"}), repo) == (0, "", "")


def test_broken_state_gives_a_reduced_brief_and_the_problem(repo: Path, state: State) -> None:
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"decision", b"decisi0n")
    log.write_bytes(b"\n".join(lines))
    code, out, err = hook(common(repo, "SessionStart", source="compact"), repo)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and "Traceback" not in err
    assert context.startswith("A context compaction just happened") and "Ship the parser" in context
    assert "line 2" in context and "confidence: degraded" in context
    assert hook(common(repo, "PreCompact", trigger="auto"), repo)[0] == 0


def test_a_reduced_brief_after_a_compaction_keeps_its_end(repo: Path, state: State) -> None:
    """The compaction notice is part of the budget: the reduced brief is never cut after it was rendered."""
    state.handoff("Long notes on the parser. " * 800)  # more than the budget holds
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"decision", b"decisi0n")
    log.write_bytes(b"\n".join(lines))
    code, out, err = hook(common(repo, "SessionStart", source="compact"), repo)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and len(context) <= 9000 and context.startswith("A context compaction just happened")
    next_line = f"next safe action: fix the state first: {err.splitlines()[0]}"
    assert "line 2" in next_line and next_line in context.split("\n")
    assert "confidence: degraded" in context and "Ship the parser" in context
    assert context.split(next_line)[1].strip() in ("", err.strip())  # after it, the whole problem or nothing


def test_ten_hooks_at_once_lose_nothing(repo: Path, state: State) -> None:
    before = len(records(state))
    events = [common(repo, "PreCompact", trigger="auto", session_id=f"s{i}") for i in range(5)]
    events += [common(repo, "SessionStart", source="compact") for _ in range(5)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rehydrate", "hook", "claude"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=repo,
        )
        for _ in events
    ]
    for p, e in zip(procs, events, strict=True):
        _out, err = p.communicate(json.dumps(e).encode(), timeout=60)
        assert p.returncode == 0, err
    recs = records(state)
    assert len(recs) == before + 10
    assert sorted(r["data"]["session_id"] for r in recs if r["op"] == "compaction") == [f"s{i}" for i in range(5)]
    assert state.verify().ok


def _transcript(path: Path, calls: int, at: str) -> Path:
    lines = [{"type": "user", "timestamp": at, "message": {"role": "user", "content": "go"}}]
    for i in range(calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}
        lines.append({"type": "assistant", "timestamp": at, "message": {"role": "assistant", "content": [block]}})
    lines.append({"type": "assistant", "timestamp": at, "message": {"content": [{"type": "text", "text": "done"}]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"type": "assistant", "torn')
    return path


def test_stop_reminds_to_checkpoint_only_when_configured(repo: Path, state: State, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "session.jsonl", 5, "2999-01-01T00:00:00.000Z")
    event = common(repo, "Stop", stop_hook_active=False, transcript_path=str(transcript))
    assert hook(event, repo) == (0, "", "")  # not configured: silent
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 5}')
    code, out, _ = hook(event, repo)
    answer = json.loads(out)
    assert code == 0 and "5 tool calls since the last checkpoint" in answer["systemMessage"]
    assert set(answer) == {"systemMessage"}  # never blocks, adds no model turn
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 6}')
    assert hook(event, repo) == (0, "", "")
    state.checkpoint(done="x", next="y")  # calls stamped before the last checkpoint do not count
    old = _transcript(tmp_path / "old.jsonl", 9, "2000-01-01T00:00:00.000Z")
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 1}')
    assert hook(common(repo, "Stop", transcript_path=str(old)), repo) == (0, "", "")


def test_tool_calls_are_counted_in_a_real_transcript() -> None:
    from rehydrate.transcripts.claude import tool_calls_since

    real = Path(__file__).parent.parent.parent.parent / "shared" / "fixtures" / "transcripts"
    path = real / "claude-code-2.1.39-manual-compact.jsonl"
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail("CI must have shared/fixtures beside the checkout")
        pytest.skip("shared/fixtures is not beside this checkout")
    assert tool_calls_since(str(path), "") > 50
    assert tool_calls_since(str(path), "2999") == 0


def test_blocking_only_when_the_user_asked_for_it(repo: Path, state: State) -> None:
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"decision", b"decisi0n")
    log.write_bytes(b"\n".join(lines))
    event = common(repo, "PreCompact", trigger="auto")
    code, _, err = hook(event, repo)
    assert code == 0 and "line 2" in err
    Path(state.path("config.json")).write_text('{"block_on_error": true}')
    code, _, err = hook(event, repo)
    assert code == 2 and "line 2" in err and "Traceback" not in err
