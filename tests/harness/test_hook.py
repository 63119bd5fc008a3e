"""The hook's core (harness/hook.py, harness/salvage.py): `hook.run` dispatches each harness's input to its answer,
reads what it can of an input it cannot parse, and says nothing where there is no state.

Golden files: each harness's exact answer to its documented hook input (tests/golden/hooks/). The clock and the
brief's token (`brief.new_token`, the seam for this) are pinned so that ids, dates and the quote delimiters are the
same on every run. After a deliberate change of output, rewrite the files with REHYDRATE_UPDATE_GOLDEN=1 and read the
diff before committing it.

Where there is no state, a hook says nothing: with hooks installed for the user (`install --user`),
every session in every repository calls them. A repository without a rehydrate state folder (none at all, or a
`state/` that belongs to something else) gets no context injected: exit 0, empty stdout, and at most one short line on
stderr. Every documented event of every harness, in a real subprocess.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HOOK_FIXTURES, caller, claude_event, hook_answer, hook_event, records, run_hook, tree
from rehydrate import brief
from rehydrate.brief.compose import RECORD
from rehydrate.harness import hook
from rehydrate.store.local import journal
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import since

GOLDEN = Path(__file__).parent.parent / "golden" / "hooks"

CASES = [
    ("claude", "PreToolUse-Edit", "ask"),
    ("claude", "PreToolUse-Edit", "deny"),
    ("claude", "PreToolUse-Edit", "warn"),
    ("claude", "PreToolUse-Bash", "ask"),
    ("codex", "PreToolUse-apply_patch", "ask"),
    ("codex", "PreToolUse-apply_patch", "deny"),
    ("gemini", "BeforeTool-write_file", "ask"),
    ("gemini", "BeforeTool-write_file", "deny"),
]


RECORDS = [
    ("claude", "PreCompact-auto"),
    ("claude", "PostCompact"),
    ("codex", "PreCompact"),
    ("gemini", "PreCompress-auto"),
]


@pytest.fixture
def pinned(repo: Path, monkeypatch: pytest.MonkeyPatch) -> State:
    monkeypatch.setattr(wal, "now", lambda: "2026-11-29T22:04:26.123Z")
    st, _ = State.init(repo / "state", "Ship the parser")
    st.reject("Edit src/auth by hand", because="it is generated", guard="src/auth*")
    st.reject("Run the migrations by hand", because="the deploy runs them", guard="*migrate*")
    return st


def _check(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("REHYDRATE_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
    assert path.read_text() == actual, f"{name} differs from its golden file"


@pytest.mark.parametrize(("harness", "fixture", "decision"), CASES, ids=str)
def test_guard_answers(repo: Path, pinned: State, harness: str, fixture: str, decision: str) -> None:
    Path(pinned.path("config.json")).write_text(json.dumps({"guard": decision}))
    event = json.loads(hook_event(repo, harness, fixture))
    if fixture == "PreToolUse-Bash":
        event["tool_input"]["command"] = "python manage.py migrate --fake"
    elif harness == "claude":
        event["tool_input"]["file_path"] = str(repo / "src" / "auth.py")
    answer = hook.run(harness, json.dumps(event).encode())
    assert answer.code == 0
    _check(f"{harness}-{fixture}-{decision}.json", json.dumps(json.loads(answer.stdout), indent=2) + "\n")


@pytest.mark.parametrize(("harness", "fixture"), RECORDS, ids=str)
def test_compaction_records(
    repo: Path, pinned: State, harness: str, fixture: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(since, "host", lambda: "host-1")  # the record names this host: pinned
    answer = hook.run(harness, hook_event(repo, harness, fixture))
    assert (answer.code, answer.stdout) == (0, "")
    log = Path(pinned.wal_path)
    if harness == "gemini":  # a note before every model request: in the worktree's journal, not the committed log
        log = repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"
    last = json.loads(log.read_text().splitlines()[-1])
    # Gemini's is no compaction; Claude's PostCompact ends the compaction its PreCompact recorded
    expected = {"gemini": "precompress"}.get(harness, "compacted" if fixture == "PostCompact" else "compaction")
    assert last["op"] == expected
    _check(f"{harness}-{fixture}-record.json", json.dumps(last["data"], indent=2, sort_keys=True) + "\n")


@pytest.fixture
def plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pinned state outside git, so that the brief holds nothing that changes from run to run."""
    monkeypatch.setattr(wal, "now", lambda: "2026-11-29T22:04:26.123Z")
    monkeypatch.setattr(brief, "new_token", lambda: "t0k3n0f8r13f", raising=False)
    monkeypatch.setattr(since, "host", lambda: "host-1")  # a record that names this host: pinned
    project = tmp_path / "project"
    project.mkdir()
    st, _ = State.init(project / "state", "Ship the parser", "all tests pass")
    st.invariant("Parse with a Pratt parser", because="precedence stays in one table")
    st.reject("Edit src/auth by hand", because="it is generated", guard="src/auth*")
    st.checkpoint(done="the tokenizer", next="binding powers")
    return project


@pytest.mark.parametrize(
    ("harness", "fixtures"),
    [
        ("claude", ["SessionStart-compact"]),
        ("codex", ["SessionStart-compact"]),
        ("gemini", ["BeforeModel-compressed"]),  # the brief after the summary, in the request
    ],
    ids=str,
)
def test_brief_after_a_compaction(plain: Path, harness: str, fixtures: list[str]) -> None:
    for fixture in fixtures:
        answer = hook.run(harness, hook_event(plain, harness, fixture))
    assert answer.code == 0
    text = json.dumps(json.loads(answer.stdout), indent=2) + "\n"
    for where in (os.path.realpath(plain), str(plain)):  # the header names the state folder's real path
        text = text.replace(where, "<project>")
    _check(f"{harness}-{fixtures[-1]}-brief.json", text)


CAPTURE = {  # schema v1 (harness/compaction/capture.py), as the PreCompact hook records it
    "v": 1,
    "harness": "claude",
    "since": {"seq": 4, "ts": "2026-11-29T22:04:26.123Z"},
    "read": {"from": 0, "to": 52113, "cut": False, "lines": 61, "bad": 0},
    "tool_calls": 9,
    "user_turns": 1,
    "todos": {
        "tool": "TodoWrite",
        "line": 40,
        "before_checkpoint": False,
        "items": [["Binding powers for + and *", "completed"], ["Right associativity of ^", "in_progress"]],
        "more": 0,
    },
    "user": [{"line": 31, "ts": "2026-11-29T22:10:00.000Z", "text": "now do binding powers"}],
    "edited": {"files": ["calc/parser.py"], "more": 0},
    "failed": [{"line": 55, "tool": "Bash", "command": "pytest -q", "exit": 1, "error": "1 failed", "later_ok": False}],
    "assistant": {"line": 60, "ts": "2026-11-29T22:11:00.000Z", "text": "The ^ case still fails."},
    "error": None,
}


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_brief_after_a_compaction_with_a_capture(plain: Path, harness: str) -> None:
    """The capture the PreCompact hook recorded is shown as "Just before the compaction"."""
    event = json.loads(hook_event(plain, harness, "PreCompact-auto" if harness == "claude" else "PreCompact"))
    data = {k: event[k] for k in ("trigger", "session_id", "transcript_path")}
    State.open(plain / "state").record(
        "compaction", {"phase": "pre", **data, "capture": {**CAPTURE, "harness": harness}}
    )
    answer = hook.run(harness, hook_event(plain, harness, "SessionStart-compact"))
    assert answer.code == 0
    text = json.dumps(json.loads(answer.stdout), indent=2) + "\n"
    for where in (os.path.realpath(plain), str(plain)):
        text = text.replace(where, "<project>")
    _check(f"{harness}-SessionStart-compact-capture-brief.json", text)


# ------------------------------------------------------------------------------------------------ input and salvage


@pytest.mark.parametrize("stdin", [b"not json", b"[1, 2]", b"\xff\xfe\x00", b'{"cwd": 7, "source": [}'])
def test_bad_stdin_still_exits_0_and_says_what_it_can(repo: Path, state: State, stdin: bytes) -> None:
    """An input that names no event: the reduced brief (the state as far as it can be read) and the problem."""
    code, out, err = run_hook("claude", stdin, repo)
    assert code == 0 and "Traceback" not in err and "could not read the hook's input" in err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart" and "Ship the parser" in answer["additionalContext"]
    assert "could not read the hook's input" in answer["additionalContext"]


@pytest.mark.parametrize("stdin", [b"", b"  \n", b"{}", b'{"hook_event_name": 7}', b'{"hook_event_name": "Later"}'])
def test_an_event_this_version_does_not_handle_gets_no_answer(repo: Path, state: State, stdin: bytes) -> None:
    assert run_hook("claude", stdin, repo) == (0, "", "")


def test_broken_state_gives_a_reduced_brief_and_the_problem(repo: Path, state: State) -> None:
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"decision", b"decisi0n")
    log.write_bytes(b"\n".join(lines))
    code, out, err = run_hook("claude", claude_event(repo, "SessionStart", source="compact"), repo)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and "Traceback" not in err
    assert context.startswith("A context compaction just happened") and "Ship the parser" in context
    assert "line 2" in context and "confidence: degraded" in context
    assert run_hook("claude", claude_event(repo, "PreCompact", trigger="auto"), repo)[0] == 0


def test_a_reduced_brief_after_a_compaction_keeps_its_end(repo: Path, state: State) -> None:
    """The compaction notice is part of the budget: the reduced brief is never cut after it was rendered."""
    state.handoff("Long notes on the parser. " * 800)  # more than the budget holds
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"decision", b"decisi0n")
    log.write_bytes(b"\n".join(lines))
    code, out, err = run_hook("claude", claude_event(repo, "SessionStart", source="compact"), repo)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and len(context) <= 9000 and context.startswith("A context compaction just happened")
    next_line = f"next safe action: fix the state first: {err.splitlines()[0]}"
    assert "line 2" in next_line and next_line in context.split("\n")
    assert "confidence: degraded" in context and "Ship the parser" in context
    after = context.split(next_line)[1].strip()  # after it, the whole problem or nothing, then how to record
    assert after.removesuffix(RECORD).strip() in ("", err.strip())


def test_blocking_only_when_the_user_asked_for_it(repo: Path, state: State) -> None:
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"decision", b"decisi0n")
    log.write_bytes(b"\n".join(lines))
    event = claude_event(repo, "PreCompact", trigger="auto")
    code, _, err = run_hook("claude", event, repo)
    assert code == 0 and "line 2" in err
    Path(state.path("config.json")).write_text('{"block_on_error": true}')
    code, _, err = run_hook("claude", event, repo)
    assert code == 2 and "line 2" in err and "Traceback" not in err


def test_ten_hooks_at_once_lose_nothing(repo: Path, state: State) -> None:
    before = len(records(state.root))
    events = [claude_event(repo, "PreCompact", trigger="auto", session_id=f"s{i}") for i in range(5)]
    events += [claude_event(repo, "SessionStart", source="compact") for _ in range(5)]
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
    # Every event is written (a few KB: the pipe takes it whole) before any answer is waited for: a hook reads its
    # stdin for at most 2 s, so feeding them one after another's exit would starve the last ones on a loaded machine.
    for p, e in zip(procs, events, strict=True):
        assert p.stdin is not None
        p.stdin.write(json.dumps(e).encode())
        p.stdin.close()
    for p in procs:
        assert p.stdout is not None and p.stderr is not None
        with p.stdout, p.stderr:
            p.stdout.read()  # an answer is at most a brief, well within a pipe's buffer: stderr cannot fill meanwhile
            err = p.stderr.read()
        assert p.wait(timeout=60) == 0, err
    recs = records(state.root)
    assert len(recs) == before + 5  # the compactions; the five reads are logged in the journal, one chain
    assert sorted(r["data"]["session_id"] for r in recs if r["op"] == "compaction") == [f"s{i}" for i in range(5)]
    reads = journal.tail(state, 10)
    assert [r["op"] for r in reads] == ["resume"] * 5 and [r["seq"] for r in reads] == [5, 4, 3, 2, 1]
    assert all(new["prev"] == old["h"] for new, old in itertools.pairwise(reads))
    assert state.verify().ok


# ------------------------------------------------------------------------------------------------ no state


EVENTS = sorted((p.parent.name, p.stem) for p in HOOK_FIXTURES.glob("*/*.json"))


def _silent(harness: str, stdin: bytes, cwd: Path) -> str:
    code, out, err = hook_answer(harness, stdin, cwd)
    assert (code, out) == (0, None), err
    assert "\n" not in err.rstrip("\n") and len(err) <= 120, err  # at most one short line
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("harness", "name"), EVENTS, ids=str)
def test_no_state_folder_no_answer(repo: Path, harness: str, name: str) -> None:
    before = tree(repo)
    err = _silent(caller(harness, name), hook_event(repo, harness, name), repo)
    if not name.startswith("SessionStart") or harness == "gemini":
        assert err == ""  # the one line is for a session's start; Gemini CLI would show it to the user as a message
    assert not (repo / "state").exists() and tree(repo) == before  # nothing created, nothing written


@pytest.mark.parametrize(("harness", "name"), EVENTS, ids=str)
def test_a_state_folder_of_something_else_is_no_state(repo: Path, harness: str, name: str) -> None:
    """A project's own `state/` (no WAL, no view file) is not a rehydrate state: not complained about, not touched."""
    (repo / "state").mkdir()
    (repo / "state" / "app.db").write_bytes(b"\x00data")
    before = tree(repo)
    _silent(caller(harness, name), hook_event(repo, harness, name), repo)
    assert tree(repo) == before


@pytest.mark.parametrize("stdin", [b"", b"not json", b'{"cwd": 7, "source": [}'])
def test_an_unreadable_input_without_state_says_nothing(repo: Path, stdin: bytes) -> None:
    _silent("claude", stdin, repo)


def test_a_broken_state_still_gets_the_reduced_brief(repo: Path) -> None:
    """Silence is for no state only: a state folder whose log is gone still says what it can, and the problem."""
    (repo / "state").mkdir()
    (repo / "state" / "00_goal.md").write_text("# Goal\n\nShip the parser\n")
    code, out, err = hook_answer("claude", hook_event(repo, "claude", "SessionStart-startup"), repo)
    assert code == 0 and out is not None and "no WAL" in err
    assert "Ship the parser" in out["hookSpecificOutput"]["additionalContext"]


def test_missing_state_exits_0_with_a_pointer(repo: Path) -> None:
    """No state: nothing injected (hooks installed for the user run in every repository), one line on stderr."""
    code, out, err = run_hook("claude", claude_event(repo, "SessionStart", source="startup"), repo)
    assert (code, out) == (0, "") and "Traceback" not in err
    assert "rehydrate init" in err and len(err.splitlines()) == 1
    assert run_hook("claude", claude_event(repo, "PreCompact", trigger="auto"), repo)[0] == 0
    assert run_hook(
        "claude", claude_event(repo, "PreToolUse", tool_name="Edit", tool_input={"file_path": "x"}), repo
    ) == (0, "", "")
