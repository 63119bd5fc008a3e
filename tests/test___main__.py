"""rehydrate/__main__.py: a hook call that percall does not answer goes to the whole dispatch without the command
line, and is written and ended as the command line would; every hook call runs without the cyclic collector and ends
without the interpreter's teardown, so nothing the teardown would do may be left for it: an exit handler, a thread,
a file open for writing, output not yet written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HOOK_FIXTURES, caller, hook_event, rehydrate
from rehydrate import __main__ as entry
from rehydrate.errors import ExitCode
from rehydrate.harness import hook as dispatch
from rehydrate.harness import percall
from rehydrate.harness.base import Answer

# Every documented input of every harness, answered one after another in one process as the script answers it
# (rehydrate.__main__.hook), then `checkpoint` and `resume`; after each, what the teardown would have had to finish.
LEFT_PROBE = r"""
import atexit, gc, io, json, os, sys
from rehydrate.__main__ import hook
from rehydrate.cli import main as command_line
std = {id(s) for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)}
std |= {id(getattr(s, "buffer", None)) for s in (sys.stdout, sys.stderr)}
left = {}
def look(name):
    sys.stdout.flush()
    writing = [
        repr(o) for o in gc.get_objects()
        if isinstance(o, io.IOBase) and id(o) not in std and not o.closed and o.writable()
    ]
    threads = sys.modules["threading"].active_count() if "threading" in sys.modules else 1
    if atexit._ncallbacks() or threads != 1 or writing:
        left[name] = [atexit._ncallbacks(), threads, writing]
for args, path in json.loads(sys.argv[1]):
    with open(path, "rb") as sys.stdin:
        hook(args)
    look(" ".join(args) + " " + os.path.basename(path))
for args in (["checkpoint", "--done", "a", "--next", "b"], ["resume"], ["checkpoint", "--done", "b", "--next", "c"]):
    command_line(args)
    look(" ".join(args))
print(json.dumps(left), file=sys.stderr)
"""


def test_a_hook_call_leaves_nothing_for_the_interpreter_s_teardown(repo: Path, tmp_path: Path) -> None:
    """Nor do `checkpoint` and `resume`, which end the same way."""
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("reject", "Edit the schema by hand", "--because", "migrations", "--guard", "db/*").code == 0
    assert rehydrate("checkpoint", "--done", "a", "--next", "b").code == 0
    calls = []
    for fixture in sorted(HOOK_FIXTURES.glob("*/*.json")):
        harness, name = fixture.parent.name, fixture.stem
        path = tmp_path / f"{harness}-{name}.json"
        path.write_bytes(hook_event(repo, harness, name))
        calls.append((caller(harness, name).split(), str(path)))
    assert len(calls) > 40
    r = subprocess.run(
        [sys.executable, "-c", LEFT_PROBE, json.dumps(calls)], cwd=repo, capture_output=True, text=True, check=True
    )
    assert json.loads(r.stderr.strip().splitlines()[-1]) == {}, r.stderr[-3000:]


GC_PROBE = r"""
import gc, os, sys
from rehydrate.__main__ import main
gc.callbacks.append(lambda phase, info: os.write(2, b"collected\n") if phase == "start" else None)
sys.argv = ["rehydrate", *sys.argv[1:]]
sys.exit(main())
"""


def test_the_script_answers_a_session_start_whole_without_the_collector(repo: Path) -> None:
    """The brief, written out whole before the process ends at once, and no collection while it was made."""
    assert rehydrate("init", "--goal", "Ship the parser").code == 0
    event = hook_event(repo, "claude", "SessionStart-startup")
    r = subprocess.run(
        [sys.executable, "-c", GC_PROBE, "hook", "claude"], cwd=repo, input=event, capture_output=True, check=False
    )
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    brief = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Ship the parser" in brief and "\nconfidence: recovered\n" in brief, brief[-2000:]


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("fixture", ["SessionStart-startup", "PreToolUse-Write"])
def test_a_reader_that_closed_its_pipe_keeps_the_exit_code_and_sees_no_traceback(
    repo: Path, fixture: str, buffered: bool
) -> None:
    """The harness gave up on the call (it closed the pipe it reads): the answer cannot be written, and the hook ends
    with its own code and nothing on stderr, as the command line ends on a closed pipe. The answer fails when the
    stream is flushed as the process ends, or as it is written when the stream is unbuffered (PYTHONUNBUFFERED)."""
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("reject", "Edit the schema by hand", "--because", "migrations", "--guard", "db/*").code == 0
    event = hook_event(repo, "claude", fixture, tool_input={"file_path": str(repo / "db" / "a.sql"), "content": "x"})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    out_r, out_w = os.pipe()
    os.close(out_r)  # nobody will read the answer
    try:
        r = subprocess.run(
            [sys.executable, "-m", "rehydrate", "hook", "claude"],
            cwd=repo, input=event, stdout=out_w, stderr=subprocess.PIPE, check=False, env=env,
        )  # fmt: skip
    finally:
        os.close(out_w)
    assert (r.returncode, r.stderr) == (0, b""), r.stderr.decode()


HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202egnp.\x85"  # a title, a cleared screen, a bidi override, a C1 control


def _handed_over(monkeypatch: pytest.MonkeyPatch, data: bytes = b"{}") -> None:
    """percall reads the input and answers nothing: the call goes to the whole dispatch."""
    monkeypatch.setattr(percall, "answer", lambda args: percall.Input(data))


def test_the_whole_dispatch_s_answer_is_made_terminal_safe(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A call the whole dispatch answers is written as the command line would write it: every control character out
    of both streams."""

    def answer(harness: str, data: percall.Input, event_name: str | None = None) -> Answer:
        assert (harness, data.head, event_name) == ("copilot", b"{}", "sessionStart")
        return Answer(stdout=f"brief {HOSTILE}", stderr=f"note {HOSTILE}\n", code=0)

    _handed_over(monkeypatch)
    monkeypatch.setattr(dispatch, "answer", answer)
    assert entry.hook(["copilot", "sessionStart"]) == 0
    out, err = capsys.readouterr()
    assert out == "brief ]0;owned[2Jgnp.\n" and err == "note ]0;owned[2Jgnp.\n", (out, err)


def test_a_bug_in_the_whole_dispatch_ends_as_the_command_line_ends_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the dispatch never raises but a call may (a bug, an interrupt) is told by cli.failed: a message naming
    the crash log (made terminal-safe), and the command line's exit codes."""

    def broken(harness: str, data: percall.Input, event_name: str | None = None) -> Answer:
        raise RuntimeError(f"broken {HOSTILE}")

    _handed_over(monkeypatch)
    monkeypatch.setattr(dispatch, "answer", broken)
    assert entry.hook(["claude"]) == ExitCode.BUG
    err = capsys.readouterr().err
    assert err.startswith("rehydrate: internal error (RuntimeError: broken ]0;owned[2Jgnp.); details in "), err
    assert "crash.log" in err

    def interrupted(harness: str, data: percall.Input, event_name: str | None = None) -> Answer:
        raise KeyboardInterrupt

    monkeypatch.setattr(dispatch, "answer", interrupted)
    assert entry.hook(["claude"]) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err == "rehydrate: interrupted\n"


@pytest.mark.parametrize("command", [["hook", "claude"], ["checkpoint", "--done", "a", "--next", "b"]])
def test_an_answer_that_cannot_be_written_is_never_taken_for_delivered(repo: Path, command: list[str]) -> None:
    """stdout on a full disk (/dev/full): the flush at the end fails, and the process says so on stderr and exits
    with what the interpreter's own end would give (120), never with the call's 0."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    assert rehydrate("init", "--goal", "g").code == 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    event = hook_event(repo, "claude", "SessionStart-startup") if command[0] == "hook" else b""
    with open("/dev/full", "wb") as full:
        r = subprocess.run(
            [sys.executable, "-m", "rehydrate", *command],
            cwd=repo, input=event, stdout=full, stderr=subprocess.PIPE, check=False, env=env,
        )  # fmt: skip
    assert r.returncode == entry.UNWRITTEN, (r.returncode, r.stderr)
    assert r.stderr.decode().endswith("rehydrate: the answer could not be written: No space left on device\n")
