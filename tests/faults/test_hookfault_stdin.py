"""The hook's stdin as hostile or unlucky input: nested too deeply, larger than any bound, cut short.

Whatever arrives, the real `rehydrate hook` exits 0 with a sane answer, and a tool event is never answered with a
SessionStart brief: the guard decides on the target it can establish, and when a rejected approach has a guard and
the target cannot be established, it fails closed to the configured decision (ask unless the user chose otherwise).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_hook as _run_hook
from rehydrate.harness import percall
from rehydrate.store.state import State

DEEP = "[" * 100_000 + "]" * 100_000


def run_hook(stdin: bytes, cwd: Path, harness: str = "claude") -> tuple[int, str, str]:
    return _run_hook(harness, stdin, cwd)


def write_event(repo: Path, tool_input: dict[str, Any], tool: str = "Write", **fields: Any) -> dict[str, Any]:
    """A Claude Code PreToolUse event, its keys in Claude Code's order (the tool's input near the end)."""
    return {
        "session_id": "9f1c7d2e-0000-4000-8000-000000000001",
        "transcript_path": "/home/user/.claude/projects/-p/9f1c7d2e.jsonl",
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
        **fields,
    }


def decision(out: str) -> dict[str, Any]:
    """The PreToolUse decision in a Claude Code answer (never a SessionStart brief)."""
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse", answer
    assert "additionalContext" not in answer  # a brief is no decision
    return answer  # type: ignore[no-any-return]


GUARDED = "rejected: Edit db/schema.sql directly because: every schema change needs a migration"


# ------------------------------------------------------------------------------------------------ deep JSON


def test_json_nested_too_deeply_on_stdin_exits_0(repo: Path, state: State) -> None:
    code, out, err = run_hook(DEEP.encode(), repo)
    assert code == 0 and "Traceback" not in err and "nested too deeply" in err
    assert "Ship the parser" in json.loads(out)["hookSpecificOutput"]["additionalContext"]  # the reduced brief
    start = f'{{"hook_event_name": "SessionStart", "source": "compact", "cwd": "{repo}", "x": {DEEP}}}'
    code, out, err = run_hook(start.encode(), repo)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and context.startswith("A context compaction just happened") and "Ship the parser" in context
    tool = json.dumps(write_event(repo, {"file_path": "db/schema.sql", "content": "@"})).replace('"@"', DEEP)
    code, out, err = run_hook(tool.encode(), repo)
    assert code == 0 and "Traceback" not in err
    assert decision(out)["permissionDecision"] == "ask" and GUARDED in decision(out)["permissionDecisionReason"]


# ---------------------------------------------------------------------------------------- large and cut inputs


def test_a_5_mb_write_to_a_guarded_path_is_decided(repo: Path, state: State) -> None:
    event = write_event(repo, {"file_path": str(repo / "db" / "schema.sql"), "content": "x" * (5 << 20)})
    code, out, err = run_hook(json.dumps(event).encode(), repo)
    assert code == 0 and err == ""
    assert decision(out)["permissionDecision"] == "ask" and GUARDED in decision(out)["permissionDecisionReason"]


def _huge(repo: Path, path: str, before: int, after: int = 0) -> bytes:
    """An Edit event larger than the hook reads whole: `before` bytes of old_string, then the path, then `after`."""
    data = {"old_string": "o" * before, "file_path": path, "new_string": "n" * after}
    return json.dumps(write_event(repo, data, tool="Edit")).encode()


def test_an_input_past_the_bound_still_gets_its_decision(repo: Path, state: State) -> None:
    over = percall.MAX_STDIN + (1 << 20)
    code, out, err = run_hook(_huge(repo, "db/schema.sql", over), repo)  # the path in the input's last bytes
    assert code == 0 and "could not read the hook's input" in err and "more than the" in err
    answer = decision(out)
    assert answer["permissionDecision"] == "ask" and answer["permissionDecisionReason"].startswith(
        "rehydrate: Edit on db/schema.sql matches an approach rejected"
    )
    assert run_hook(_huge(repo, "app.py", over), repo)[:2] == (0, "")  # the target is known and not guarded
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    lost = _huge(repo, "app.py", percall.MAX_STDIN + 16, after=2 * percall.STDIN_TAIL)  # the path read by neither end
    code, out, err = run_hook(lost, repo)
    answer = decision(out)
    assert code == 0 and answer["permissionDecision"] == "deny"  # fails closed: the configured decision
    reason = answer["permissionDecisionReason"]
    assert "could not be read whole" in reason and "this Edit call" in reason and GUARDED in reason


@pytest.mark.parametrize(("config", "expected"), [(None, "ask"), ('{"guard": "deny"}', "deny")])
def test_a_cut_input_fails_closed_when_a_guard_exists(repo: Path, state: State, config: str, expected: str) -> None:
    if config:
        Path(state.path("config.json")).write_text(config)
    # The content holds the text of a harmless target; the real path comes after it and is cut off.
    event = write_event(repo, {"content": 'x = {"file_path": "app.py"}\n' * 50, "file_path": "db/schema.sql"})
    cut = json.dumps(event).encode()[:1500]
    assert b'\\"file_path\\": \\"app.py\\"' in cut and b'"file_path": "db' not in cut
    code, out, err = run_hook(cut, repo)
    assert code == 0 and "could not read the hook's input" in err
    answer = decision(out)
    assert answer["permissionDecision"] == expected
    assert "cannot tell what this Write call changes" in answer["permissionDecisionReason"]
    assert GUARDED in answer["permissionDecisionReason"]


def test_a_cut_input_says_nothing_when_no_guard_exists(repo: Path) -> None:
    st, _ = State.init(repo / "state", "Ship the parser")
    st.reject("Use a regex parser", because="the grammar is not regular")  # rejected, but no guard
    event = write_event(repo, {"content": "x" * 5000, "file_path": "db/schema.sql"})
    code, out, err = run_hook(json.dumps(event).encode()[:1500], repo)
    assert (code, out) == (0, "") and "could not read the hook's input" in err


def test_other_harnesses_fail_closed_in_their_own_shape(repo: Path, state: State) -> None:
    Path(state.path("config.json")).write_text('{"guard": "deny"}')
    gemini = {"cwd": str(repo), "hook_event_name": "BeforeTool", "tool_name": "write_file"}
    gemini["tool_input"] = {"content": "x" * 5000, "file_path": "db/schema.sql"}
    code, out, _ = run_hook(json.dumps(gemini).encode()[:1000], repo, "gemini")
    assert code == 0 and json.loads(out)["decision"] == "deny"
    patch = "*** Begin Patch\n" + "*** Update File: src/x.rs\n+x\n" * 200 + "*** Update File: db/schema.sql\n"
    codex = {"cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "apply_patch"}
    codex["tool_input"] = {"command": patch}
    code, out, _ = run_hook(json.dumps(codex).encode()[:2000], repo, "codex")
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    Path(state.path("config.json")).write_text('{"guard": "ask"}')  # Codex has no ask: a warning
    code, out, _ = run_hook(json.dumps(codex).encode()[:2000], repo, "codex")
    assert "could not be read whole" in json.loads(out)["systemMessage"]


def test_an_unnamed_unreadable_input_gets_the_reduced_brief(repo: Path, state: State) -> None:
    code, out, err = run_hook(b'{"source": "compact", "cwd": "' + str(repo).encode() + b'", "x": [', repo)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "could not read the hook's input" in err
    assert code == 0 and context.startswith("A context compaction just happened") and "Ship the parser" in context


# ------------------------------------------------------------------------------------------------ a capped read


def _model_request(repo: Path, mb: int) -> bytes:
    """Gemini CLI's BeforeModel input for a compressed history, mb megabytes of messages after its first ones, as
    JSON.stringify writes it."""
    from conftest import HOOK_FIXTURES

    event = json.loads((HOOK_FIXTURES / "gemini" / "BeforeModel-compressed.json").read_text())
    event["cwd"] = str(repo)
    event["llm_request"]["messages"] += [{"role": "model", "content": "z" * (1 << 20)}] * mb
    return json.dumps(event, separators=(",", ":")).encode()


def test_a_model_request_is_read_up_to_its_cap_and_the_rest_drained(tmp_path: Path) -> None:
    """read_input with Gemini's read_cap keeps what shallow can need and consumes the rest unread: the writer, which
    writes all of it, is never left blocked, and the input counts as ended."""
    import os
    import threading

    from rehydrate.harness import gemini

    data = _model_request(tmp_path, 6)
    need = gemini.read_cap(data[: percall.CAP_PROBE])
    assert need is not None and need < len(data)
    for cap in (gemini.read_cap, None):
        r, w = os.pipe()
        writer = threading.Thread(target=_write_all, args=(w, data))
        writer.start()
        try:
            got = percall.read_input(r, cap=cap)
        finally:
            writer.join(30)
            os.close(r)
        assert not writer.is_alive() and got.ended and got.size == len(data)
        if cap is None:
            assert got.head == data and not got.capped  # no cap: all of it, as before
        else:
            assert got.capped and got.head == data[:need]


def _write_all(fd: int, data: bytes) -> None:
    import os

    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def test_a_capped_model_request_gets_its_brief(repo: Path, state: State) -> None:
    code, out, err = run_hook(_model_request(repo, 6), repo, harness="gemini")
    assert code == 0, err
    messages = json.loads(out)["hookSpecificOutput"]["llm_request"]["messages"]
    assert "A context compaction just happened" in messages[0]["content"]
