"""harness/compaction/marks.py: which sessions had a compaction their brief has not yet followed, so that a hook
after every tool call reads two small files instead of the WAL, and never misses a compaction."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import hook_event, run_hook, tree
from rehydrate.harness.compaction import marks
from rehydrate.store.local import place as local
from rehydrate.store.state import State


@pytest.fixture
def root(repo: Path) -> str:
    State.init(str(repo / "state"), "mark compactions")
    return str(repo / "state")


def _event(session: object) -> dict[str, object]:
    return {"session_id": session}


@pytest.mark.parametrize(
    ("session", "named"),
    [
        ("3f6c1a2e-8b4d-4e7a-9c15-2d7e0b9a4f61", True),
        ("a_b.c-D9", True),
        ("../escape", False),
        (".hidden", False),
        ("a/b", False),
        ("a\\b", False),
        ("", False),
        ("x" * 129, False),
        (7, False),
        (None, False),
    ],
)
def test_only_a_plain_session_id_names_a_mark(session: object, named: bool) -> None:
    assert (marks.key(_event(session)) is not None) is named


def test_a_compaction_is_unseen_until_the_wal_is_read_for_it(root: str) -> None:
    event = _event("s1")
    assert marks.unseen(root, event) is None  # no compaction yet
    marks.compacted(root, event)
    first = marks.unseen(root, event)
    assert first not in (None, marks.UNMARKED)
    marks.seen(root, event, first)
    assert marks.unseen(root, event) is None
    marks.compacted(root, event)  # another one
    assert marks.unseen(root, event) not in (None, first)
    assert marks.unseen(root, _event("s2")) is None  # another session's are its own


def test_a_compaction_recorded_while_the_wal_is_read_stays_unseen(root: str) -> None:
    """The reading began on one mark; a compaction came before it ended: seen(old mark) leaves the new one unseen."""
    event = _event("s1")
    marks.compacted(root, event)
    began = marks.unseen(root, event)
    marks.compacted(root, event)
    marks.seen(root, event, began)
    assert marks.unseen(root, event) not in (None, began)


def test_a_session_without_a_plain_id_always_reads_the_wal(root: str) -> None:
    event = _event("a/b")
    marks.compacted(root, event)  # writes nothing
    assert marks.unseen(root, event) == marks.UNMARKED
    marks.seen(root, event, marks.UNMARKED)
    assert marks.unseen(root, event) == marks.UNMARKED
    assert not os.path.exists(os.path.join(local.local_dir(root), marks.FOLDER))


def test_the_marks_live_in_the_worktree_s_git_folder_never_in_the_state(root: str, repo: Path) -> None:
    marks.compacted(root, _event("s1"))
    folder = Path(local.local_dir(root), marks.FOLDER)
    assert (folder / "s1.compacted").is_file() and repo / ".git" in folder.parents
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_no_compaction_is_recorded_without_its_mark(root: str, repo: Path) -> None:
    """A mark that cannot be written (a file where its folder goes) fails the PreCompact hook before its record:
    a record without a mark would be missed by the calls that trust the marks."""
    folder = Path(local.local_dir(root), marks.FOLDER)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("in the way")
    before = tree(root)
    code, _, err = run_hook("copilot preCompact", hook_event(repo, "copilot", "preCompact-auto"), repo)
    assert code == 0 and "rehydrate hook copilot" in err, err
    assert tree(root) == before  # no record
    folder.unlink()
    assert run_hook("copilot preCompact", hook_event(repo, "copilot", "preCompact-auto"), repo)[0] == 0
    assert tree(root) != before  # (the same call, the mark written: the record too)


def test_a_session_with_an_odd_id_still_gets_its_brief_after_a_compaction(root: str, repo: Path) -> None:
    """No marks for it: every call reads the WAL, as before the marks."""
    odd = {"sessionId": "session/with/slashes"}
    assert run_hook("copilot preCompact", hook_event(repo, "copilot", "preCompact-auto", **odd), repo)[0] == 0
    out = run_hook("copilot postToolUse", hook_event(repo, "copilot", "postToolUse", **odd), repo)[1]
    assert "A context compaction just happened" in json.loads(out)["additionalContext"]
    assert run_hook("copilot postToolUse", hook_event(repo, "copilot", "postToolUse", **odd), repo)[1] == ""


def test_once_the_brief_followed_a_compaction_the_marks_say_so(root: str, repo: Path) -> None:
    """The whole reading (events.after_compaction) leaves the session seen: the next calls read no WAL."""
    event = json.loads(hook_event(repo, "copilot", "postToolUse"))
    named = {"session_id": event["sessionId"]}
    assert run_hook("copilot preCompact", hook_event(repo, "copilot", "preCompact-auto"), repo)[0] == 0
    assert marks.unseen(root, named) not in (None, marks.UNMARKED)
    out = run_hook("copilot postToolUse", hook_event(repo, "copilot", "postToolUse"), repo)[1]
    assert "A context compaction just happened" in json.loads(out)["additionalContext"]
    assert marks.unseen(root, named) is None
