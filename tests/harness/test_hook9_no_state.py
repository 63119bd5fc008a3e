"""Issue 9 item 12: where there is no state, a hook says nothing.

With hooks installed for the user (`install --user`), every session in every repository calls them. A repository
without a rehydrate state folder (none at all, or a `state/` that belongs to something else) gets no context injected:
exit 0, empty stdout, and at most one short line on stderr. Every documented event of every harness, in a real
subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_hook_harnesses import FIXTURES, event, hook

EVENTS = sorted((p.parent.name, p.stem) for p in FIXTURES.glob("*/*.json"))


def _tree(folder: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(folder)), p.read_bytes() if p.is_file() else b"") for p in folder.rglob("*"))


def _silent(harness: str, stdin: bytes, cwd: Path) -> str:
    code, out, err = hook(harness, stdin, cwd)
    assert (code, out) == (0, None), err
    assert "\n" not in err.rstrip("\n") and len(err) <= 120, err  # at most one short line
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("harness", "name"), EVENTS, ids=str)
def test_no_state_folder_no_answer(repo: Path, harness: str, name: str) -> None:
    before = _tree(repo)
    err = _silent(harness, event(repo, harness, name), repo)
    if not name.startswith("SessionStart") or harness == "gemini":
        assert err == ""  # the one line is for a session's start; Gemini CLI would show it to the user as a message
    assert not (repo / "state").exists() and _tree(repo) == before  # nothing created, nothing written


@pytest.mark.parametrize(("harness", "name"), EVENTS, ids=str)
def test_a_state_folder_of_something_else_is_no_state(repo: Path, harness: str, name: str) -> None:
    """A project's own `state/` (no WAL, no view file) is not a rehydrate state: not complained about, not touched."""
    (repo / "state").mkdir()
    (repo / "state" / "app.db").write_bytes(b"\x00data")
    before = _tree(repo)
    _silent(harness, event(repo, harness, name), repo)
    assert _tree(repo) == before


@pytest.mark.parametrize("stdin", [b"", b"not json", b'{"cwd": 7, "source": [}'])
def test_an_unreadable_input_without_state_says_nothing(repo: Path, stdin: bytes) -> None:
    _silent("claude", stdin, repo)


def test_a_broken_state_still_gets_the_reduced_brief(repo: Path) -> None:
    """Silence is for no state only: a state folder whose log is gone still says what it can, and the problem."""
    (repo / "state").mkdir()
    (repo / "state" / "00_goal.md").write_text("# Goal\n\nShip the parser\n")
    code, out, err = hook("claude", event(repo, "claude", "SessionStart-startup"), repo)
    assert code == 0 and out is not None and "no WAL" in err
    assert "Ship the parser" in out["hookSpecificOutput"]["additionalContext"]
