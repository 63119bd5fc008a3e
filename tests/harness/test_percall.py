"""harness/percall.py: a per-call event answered before the command line loads, exactly as the whole dispatch
(harness/hook.py) answers it, or handed over with its input; and the input read without select when it is all there.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import HOOK_FIXTURES, caller, hook_event, tree
from rehydrate.harness import hook, percall
from rehydrate.harness.guard import snapshot
from rehydrate.store.state import State

FIXTURES = sorted((p.parent.name, p.stem) for p in HOOK_FIXTURES.glob("*/*.json"))
# The states a call can find: none; one that guards nothing; one whose guarded file is as the check by effect last
# saw it; that file changed since; a rejected approach added since (the snapshot is then the old view's).
STATES = ("none", "unguarded", "guarded", "changed", "new-view")


def _state(repo: Path, kind: str) -> None:
    if kind == "none":
        return
    state, _ = State.init(str(repo / "state"), "answer per call")
    state.checkpoint(done="the tokenizer", next="the parser")
    if kind == "unguarded":
        assert hook.run("claude", hook_event(repo, "claude", "Stop")).code == 0  # the check by effect's first look
        return
    (repo / "db").mkdir()
    (repo / "db" / "schema.sql").write_text("create table t (id int);\n")
    state.reject("Edit the schema by hand", because="migrations own it", guard="db/*")
    state.reject("Run the migrations by hand", because="the deploy runs them", guard="*migrate*")
    snapshot_taken = hook.run("claude", hook_event(repo, "claude", "Stop"))  # the check by effect's snapshot, taken
    assert snapshot_taken.code == 0 and snapshot.quiet(str(repo / "state")) is not None
    if kind == "changed":
        (repo / "db" / "schema.sql").write_text("drop table t;\n")
    elif kind == "new-view":
        state.reject("Edit the lockfile", because="the tool owns it", guard="*.lock")


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Give percall.answer an input: a pipe holding it whole (written and closed), as sys.stdin."""
    opened: list[int] = []

    def give(data: bytes) -> None:
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        opened.append(r)
        monkeypatch.setattr(sys, "stdin", os.fdopen(r, "rb", closefd=False))

    yield give
    for fd in opened:
        os.close(fd)


def _local(repo: Path) -> dict[str, bytes | None]:
    return {**tree(repo / "state"), **{f".git/{k}": v for k, v in tree(repo / ".git" / "rehydrate").items()}}


@pytest.mark.parametrize("kind", STATES)
def test_a_call_answered_here_gets_the_whole_dispatch_s_answer_and_writes_nothing(
    repo: Path, kind: str, stdin: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every documented input of every harness, in every kind of state: what percall answers (stdout, stderr,
    exit code) is what the whole dispatch answers, which then writes nothing either; percall itself never writes (the
    whole dispatch alone saves the check by effect's snapshot); what it does not answer is handed over whole."""
    _state(repo, kind)
    answered = []
    for harness, name in FIXTURES:
        data = hook_event(repo, harness, name)
        args = caller(harness, name).split()
        before = _local(repo)
        stdin(data)
        got = percall.answer(args)
        out, err = capsys.readouterr()
        assert _local(repo) == before, (harness, name)
        assert got is not None, (harness, name)  # its input was read
        whole = hook.answer(args[0], percall.Input(data), args[1] if len(args) == 2 else None)
        if isinstance(got, percall.Input):
            assert (got.head, got.whole) == (data, True) and not out and not err, (harness, name)
            continue
        answered.append(name)
        assert _local(repo) == before, (harness, name)  # nothing to do: the whole dispatch writes nothing either
        expected = whole.stdout + ("\n" if whole.stdout and not whole.stdout.endswith("\n") else "")
        assert (got, out, err) == (whole.code, expected, whole.stderr), (harness, name, kind)
    guard_calls = {n for h, n in FIXTURES if n.split("-")[0] in ("PreToolUse", "BeforeTool", "preToolUse")}
    # a tool call is answered here in a state where the check by effect has nothing to do; never a session's start
    if kind in ("none", "unguarded", "guarded"):
        assert guard_calls <= set(answered), guard_calls - set(answered)
        # after a tool call that is no task tool's, before a model request that needs no brief, and (GitHub Copilot
        # CLI) after a tool call of a session that had no compaction
        assert {"PostToolUse-Bash", "BeforeModel", "postToolUse"} <= set(answered), answered
    else:
        assert not {n for n in answered if n.startswith(("PostToolUse", "AfterTool"))}, answered
    assert not {n for n in answered if n.lower().startswith("sessionstart")}


def test_a_changed_guarded_file_is_left_to_the_whole_check(repo: Path, stdin: Any) -> None:
    """The check by effect after a call that changed a guarded file says so: percall hands the call over."""
    _state(repo, "changed")
    data = hook_event(repo, "claude", "PostToolUse-Bash")
    stdin(data)
    assert isinstance(percall.answer(["claude"]), percall.Input)
    said = hook.answer("claude", percall.Input(data))
    assert "db/schema.sql was changed" in said.stdout


def test_the_arguments_of_no_harness_s_call_leave_stdin_unread(stdin: Any) -> None:
    stdin(b'{"hook_event_name": "PreToolUse"}')
    for args in (["nosuch"], ["claude", "PreToolUse"], ["copilot", "--help"]):
        assert percall.answer(args) is None, args
    assert sys.stdin.read() == b'{"hook_event_name": "PreToolUse"}'


def test_a_pipe_written_whole_is_read_at_once_and_left_blocking() -> None:
    r, w = os.pipe()
    try:
        os.write(w, b'{"a": 1}')
        os.close(w)
        w = -1
        got = percall.read_input(r)
        assert (got.head, got.whole) == (b'{"a": 1}', True)
        assert os.get_blocking(r)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_an_input_still_coming_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that has not written everything yet: the first reads find the pipe empty, the rest is polled for
    (the poller is made then, and the rest written only once it is: no sleep)."""
    r, w = os.pipe()
    made = percall._poller
    writer: list[threading.Thread] = []

    def poller(fd: int) -> Any:
        got = made(fd)
        thread = threading.Thread(target=lambda: (os.write(w, b' "b": 2}'), os.close(w)))
        thread.start()
        writer.append(thread)
        return got

    monkeypatch.setattr(percall, "_poller", poller)
    try:
        os.write(w, b'{"a": 1,')
        got = percall.read_input(r)
        assert writer, "the input was read without waiting"
        writer[0].join()
        assert (got.head, got.whole) == (b'{"a": 1, "b": 2}', True)
        assert os.get_blocking(r)
    finally:
        os.close(r)


def test_a_file_given_as_stdin_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_bytes(b'{"a": 1}\n')
    fd = os.open(path, os.O_RDONLY)
    try:
        got = percall.read_input(fd)
        assert (got.head, got.whole) == (b'{"a": 1}\n', True) and os.get_blocking(fd)
    finally:
        os.close(fd)


def test_what_it_prints_is_printable_ascii(repo: Path, stdin: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """An answer given here is not passed through the command line's terminal_safe: it is JSON whose every
    character outside printable ASCII is escaped, whatever the rejected approach and the path hold."""
    _state(repo, "guarded")
    State.open(str(repo / "state")).reject("Edit \u202eevil\u202c and caf\u00e9 by hand", because="odd", guard="db/*")
    odd = {"file_path": str(repo / "db" / "\u202e\x1b[31mred.sql"), "content": "x"}
    stdin(hook_event(repo, "claude", "PreToolUse-Write", tool_input=odd))
    assert percall.answer(["claude"]) == 0
    out, err = capsys.readouterr()
    assert "permissionDecision" in out and not err
    assert all(" " <= c <= "~" for c in out.rstrip("\n")), out
    assert "\\u202e" in out  # (escaped, not dropped)
