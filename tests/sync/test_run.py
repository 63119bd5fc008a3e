"""sync/run.py: where a sync may run, and what a dry run says without changing anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import git, tree

from rehydrate.errors import RehydrateError
from rehydrate.store.state import State
from rehydrate.sync import run


def test_a_sync_outside_a_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RehydrateError, match="is not inside a git repository"):
        run.context(str(tmp_path), "agent")


def test_a_dry_run_names_what_it_would_commit_and_changes_nothing(repo: Path) -> None:
    State.init(repo / "state", "Ship the parser", "all tests pass")
    before, index = tree(repo / "state"), (repo / ".git" / "index").read_bytes()
    report = run.dry_run(str(repo / "state"), "agent")
    assert "state/00_goal.md" in report.paths and "state/wal/agent.jsonl" in report.paths
    assert report.lines[-2].startswith(f"would commit {len(report.paths)} path(s): state/")
    assert report.lines[-1] == "would stop after the commit: no upstream"
    assert report.stopped == "no-upstream" and report.as_dict()["dry_run"] is True
    assert tree(repo / "state") == before and (repo / ".git" / "index").read_bytes() == index
    assert git(repo, "status", "--porcelain", "--", "state").count("??") == 1  # state/ itself, untracked
