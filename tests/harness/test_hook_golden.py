"""Golden files: each harness's exact answer to its documented hook input (tests/golden/hooks/).

The clock and the brief's token (`brief.new_token`, the seam for this) are pinned so that ids, dates and the quote
delimiters are the same on every run. After a deliberate change of output, rewrite
the files with REHYDRATE_UPDATE_GOLDEN=1 and read the diff before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rehydrate import brief
from rehydrate.harness import hook
from rehydrate.store import wal
from rehydrate.store.state import State

FIXTURES = Path(__file__).parent.parent / "fixtures" / "hooks"
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


def _event(repo: Path, harness: str, name: str) -> bytes:
    return (FIXTURES / harness / f"{name}.json").read_text().replace("/home/user/project", str(repo)).encode()


def _check(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("REHYDRATE_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
    assert path.read_text() == actual, f"{name} differs from its golden file"


@pytest.mark.parametrize(("harness", "fixture", "decision"), CASES, ids=str)
def test_guard_answers(repo: Path, pinned: State, harness: str, fixture: str, decision: str) -> None:
    Path(pinned.path("config.json")).write_text(json.dumps({"guard": decision}))
    event = json.loads(_event(repo, harness, fixture))
    if fixture == "PreToolUse-Bash":
        event["tool_input"]["command"] = "python manage.py migrate --fake"
    elif harness == "claude":
        event["tool_input"]["file_path"] = str(repo / "src" / "auth.py")
    answer = hook.run(harness, json.dumps(event).encode())
    assert answer.code == 0
    _check(f"{harness}-{fixture}-{decision}.json", json.dumps(json.loads(answer.stdout), indent=2) + "\n")


@pytest.mark.parametrize(("harness", "fixture"), RECORDS, ids=str)
def test_compaction_records(repo: Path, pinned: State, harness: str, fixture: str) -> None:
    answer = hook.run(harness, _event(repo, harness, fixture))
    assert (answer.code, answer.stdout) == (0, "")
    last = json.loads(Path(pinned.wal_path).read_text().splitlines()[-1])
    # Gemini's is no compaction; Claude's PostCompact ends the compaction its PreCompact recorded
    expected = {"gemini": "precompress"}.get(harness, "compacted" if fixture == "PostCompact" else "compaction")
    assert last["op"] == expected
    _check(f"{harness}-{fixture}-record.json", json.dumps(last["data"], indent=2, sort_keys=True) + "\n")


@pytest.fixture
def plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pinned state outside git, so that the brief holds nothing that changes from run to run."""
    monkeypatch.setattr(wal, "now", lambda: "2026-11-29T22:04:26.123Z")
    monkeypatch.setattr(brief, "new_token", lambda: "t0k3n0f8r13f", raising=False)
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
        ("gemini", ["BeforeAgent"]),
    ],
    ids=str,
)
def test_brief_after_a_compaction(plain: Path, harness: str, fixtures: list[str]) -> None:
    if harness == "gemini":  # a compaction of the fixtures' session, confirmed (Gemini's PreCompress is not one)
        session = json.loads(_event(plain, harness, "BeforeAgent"))["session_id"]
        State.open(plain / "state").record("compaction", {"phase": "post", "session_id": session})
    for fixture in fixtures:
        answer = hook.run(harness, _event(plain, harness, fixture))
    assert answer.code == 0
    text = json.dumps(json.loads(answer.stdout), indent=2) + "\n"
    for where in (os.path.realpath(plain), str(plain)):  # the header names the state folder's real path
        text = text.replace(where, "<project>")
    _check(f"{harness}-{fixtures[-1]}-brief.json", text)
