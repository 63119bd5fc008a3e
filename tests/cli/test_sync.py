"""The git transport's commands (cli/sync.py) on a real repository without an upstream: `sync` commits only the
state folder and stops with exit 1 (`--dry-run` changes nothing), `team init` says what it set up, `resolve` finds
nothing to settle; each refuses with exit 3 where there is no state folder. The transport itself: tests/git/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, rehydrate


@pytest.mark.parametrize("argv", [["sync"], ["team", "init"], ["resolve"]], ids=str)
def test_no_state_folder_is_refused(repo: Path, argv: list[str]) -> None:
    r = rehydrate(*argv)
    assert r.code == 3 and r.err.startswith(f"rehydrate: no state folder at {repo / 'state'}\n"), r.err


def test_sync_commits_the_state_folder_and_stops_without_an_upstream(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    (repo / "app.py").write_text("print('changed, not committed by sync')\n")
    head = git(repo, "rev-parse", "HEAD")
    r = rehydrate("sync", "--dry-run", "--json")
    data = json.loads(r.out)
    assert r.code == 1 and data["ok"] is False and data["stopped"] == "no-upstream" and data["dry_run"] is True
    assert "state/00_goal.md" in data["paths"] and data["actions"][-1] == "would stop after the commit: no upstream"
    assert git(repo, "rev-parse", "HEAD") == head  # a dry run changes nothing
    r = rehydrate("sync")
    assert r.code == 1 and r.out.startswith("committed ") and "has no upstream" in r.out, r
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert committed and all(p.startswith("state/") for p in committed)
    assert git(repo, "status", "--porcelain", "app.py").strip() == "M app.py"  # the user's work is left alone


def test_team_init_says_each_action_and_resolve_finds_nothing(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    r = rehydrate("team", "init")
    assert r.code == 0 and r.out.splitlines()[-1].startswith("next: commit state/.gitattributes"), r
    data = json.loads(rehydrate("team", "init", "--json").out)
    assert data["ok"] and data["action"] == "init" and data["actions"] and data["advice"] in r.out
    r = rehydrate("resolve")
    assert (r.code, r.out) == (0, "nothing to resolve: no unmerged path\n")
    data = json.loads(rehydrate("resolve", "--json").out)
    assert (data["ok"], data["resolved"], data["left"]) == (True, [], [])
