"""No hook hangs, whatever it is given: a FIFO or an endless device as state/config.json or as the transcript, or a
stdin that never closes. Each case runs the real `rehydrate hook` in a subprocess; the generous timeout only turns a
hang into a failure (the hook answers in a fraction of a second, or after its short stdin deadline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import run_hook as _run_hook
from rehydrate.harness import percall
from rehydrate.store.state import State

TIMEOUT = 60  # far above the harnesses' own (10 s for PreToolUse and Stop): only a hang reaches it
AT = "2999-01-01T00:00:00.000Z"  # after any checkpoint the test makes


def run_hook(event: dict[str, Any], cwd: Path) -> tuple[int, str, str]:
    return _run_hook("claude", event, cwd, timeout=TIMEOUT)


def run_hook_stdin_open(data: bytes, cwd: Path) -> tuple[int, str, str]:
    """The hook with `data` on a stdin whose writer stays open until the hook has exited."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rehydrate", "hook", "claude"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
        code = proc.wait(timeout=TIMEOUT)  # its answer (a few kB) fits in the pipes: it never waits on them
        return code, proc.stdout.read().decode(), proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()


def event(repo: Path, name: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": "s1", "cwd": str(repo), "hook_event_name": name, **fields}


def guarded_write(repo: Path) -> dict[str, Any]:
    return event(repo, "PreToolUse", tool_name="Write", tool_input={"file_path": "db/schema.sql", "content": "x"})


def transcript(path: Path, calls: int) -> Path:
    lines = [{"type": "user", "timestamp": AT, "message": {"content": "go"}}]
    for i in range(calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}
        lines.append({"type": "assistant", "timestamp": AT, "message": {"content": [block]}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def stop(repo: Path, path: Path) -> dict[str, Any]:
    return event(repo, "Stop", stop_hook_active=False, transcript_path=str(path))


def fifo(path: Path) -> None:
    os.mkfifo(path)  # nobody writes: a blocking open waits for ever


def endless(path: Path) -> None:
    path.symlink_to("/dev/zero")  # a read never ends


@pytest.mark.parametrize("make", [fifo, endless], ids=["fifo", "dev-zero"])
def test_a_config_that_is_no_regular_file_hangs_no_hook(
    repo: Path, state: State, tmp_path: Path, make: Callable[[Path], None]
) -> None:
    make(Path(state.path("config.json")))
    code, out, err = run_hook(guarded_write(repo), repo)
    answer = json.loads(out)["hookSpecificOutput"]
    assert code == 0 and err == "" and answer["permissionDecision"] == "ask"  # the default decision: still guarded
    assert "Edit db/schema.sql directly" in answer["permissionDecisionReason"]
    assert run_hook(stop(repo, transcript(tmp_path / "t.jsonl", 5)), repo) == (0, "", "")  # defaults: no reminder


@pytest.mark.parametrize("make", [fifo, endless], ids=["fifo", "dev-zero"])
def test_a_transcript_that_is_no_regular_file_hangs_no_stop(
    repo: Path, state: State, tmp_path: Path, make: Callable[[Path], None]
) -> None:
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 1}')
    path = tmp_path / "session.jsonl"
    make(path)
    assert run_hook(stop(repo, path), repo) == (0, "", "")  # nothing counted: no reminder, and no hang


def test_a_stdin_that_never_closes_hangs_no_hook(repo: Path, state: State, tmp_path: Path) -> None:
    # A whole event, and the writer keeps stdin open: answered as soon as the writer pauses.
    code, out, err = run_hook_stdin_open(json.dumps(guarded_write(repo)).encode(), repo)
    assert code == 0 and err == "" and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "ask"
    Path(state.path("config.json")).write_text('{"stop_reminder_after": 3}')
    code, out, err = run_hook_stdin_open(json.dumps(stop(repo, transcript(tmp_path / "t.jsonl", 4))).encode(), repo)
    assert code == 0 and "4 tool calls since the last checkpoint" in json.loads(out)["systemMessage"]
    # Half an event: answered after the stdin deadline, from what came; a tool event still gets a decision.
    code, out, err = run_hook_stdin_open(json.dumps(guarded_write(repo)).encode()[:-40], repo)
    assert code == 0 and f"stdin still open after {percall.STDIN_SECONDS:g} s" in err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == "ask"
    # Nothing at all: the reduced brief, and the reason.
    code, out, err = run_hook_stdin_open(b"", repo)
    assert code == 0 and "stdin still open" in err
    assert "Ship the parser" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
