"""live-state and rehydrate's own set-up (store/layout.SETUP_FILES: the hooks, boot rules and MCP entries `install`
writes): a first session after the set-up, committed or not, is not degraded by it; anything else still is."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.fakes import gh as fakes_gh
from tests.fakes import gitrepos
from tests.fakes.gitrepos import commit, git

from rehydrate.checks import Context, Finding, confidence, run_all
from rehydrate.checks.livestate import LiveStateCheck
from rehydrate.store.git import info as gitinfo
from rehydrate.store.wal.since import Since


def _run(folder: Path, ckpt: dict[str, Any], outside: Path | None = None) -> list[Finding]:
    """live-state in hook scope, on a PATH of one folder (outside the repository) holding git and no gh."""
    since = Since()
    since.git, since.seq = ckpt, 1
    view: Any = SimpleNamespace(root=str(folder), actor="agent")
    path = fakes_gh.bin_path((outside or folder.parent.parent) / "nogh")
    return run_all(Context(view, None, since=since, env={**os.environ, "PATH": path}), [LiveStateCheck()])


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    repo = gitrepos.remote_pair(tmp_path)[1]
    (repo / "state").mkdir()
    (repo / "state" / "00_goal.md").write_text("goal\n")
    return repo


def _setup(repo: Path) -> None:
    """What `init --rules` and `install claude` and `install codex` leave: a rules block in a committed file, new
    settings in untracked folders."""
    (repo / "CLAUDE.md").write_text("# mine\n\n<!-- rehydrate -->\nread state/ first\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{}\n")
    (repo / ".codex").mkdir()
    (repo / ".codex" / "hooks.json").write_text("{}\n")
    (repo / "AGENTS.md").write_text("read state/ first\n")


def test_the_set_up_left_uncommitted_is_ok_and_named(agent: Path) -> None:
    ckpt = gitinfo.snapshot(str(agent / "state"))
    _setup(agent)
    found = _run(agent / "state", ckpt)
    [ours] = [f for f in found if "set-up" in f.said()]
    assert ours.status == "ok"
    listed = ".claude/, .codex/, AGENTS.md, CLAUDE.md"
    assert ours.said() == f"only rehydrate's own set-up changed since checkpoint 1: {listed} (git status)"
    assert confidence(found) == "recovered"


def test_the_set_up_committed_is_ok(agent: Path) -> None:
    ckpt = gitinfo.snapshot(str(agent / "state"))
    _setup(agent)
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "add rehydrate")
    found = _run(agent / "state", ckpt)
    assert found[0].status == "ok" and "rehydrate's own set-up" in found[0].said(), found[0].said()
    assert confidence(found) == "recovered"


def test_other_work_beside_the_set_up_is_still_degraded_and_named_alone(agent: Path) -> None:
    ckpt = gitinfo.snapshot(str(agent / "state"))
    _setup(agent)
    (agent / "app.py").write_text("edited\n")
    found = _run(agent / "state", ckpt)
    [dirty] = [f for f in found if "changed now" in f.said()]
    assert dirty.status == "degraded"
    assert dirty.said() == "1 file(s) changed now that checkpoint 1 did not record: app.py (git status)"
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "add rehydrate and more")  # a commit that holds more than the set-up
    assert _run(agent / "state", ckpt)[0].status == "degraded"


def test_a_harness_folder_with_more_than_the_set_up_is_work(agent: Path) -> None:
    """An untracked .claude/ (git names the folder) is ours only when every file in it is: a user's own agent in
    it, or a folder linked in it, is not."""
    ckpt = gitinfo.snapshot(str(agent / "state"))
    (agent / ".claude" / "agents").mkdir(parents=True)
    (agent / ".claude" / "settings.json").write_text("{}\n")
    (agent / ".claude" / "agents" / "reviewer.md").write_text("review\n")
    assert confidence(_run(agent / "state", ckpt)).startswith("degraded")
    (agent / ".claude" / "agents" / "reviewer.md").unlink()
    (agent / ".claude" / "agents").rmdir()
    elsewhere = agent.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("x\n")
    os.symlink(elsewhere, agent / ".claude" / "linked")
    assert confidence(_run(agent / "state", ckpt)).startswith("degraded")
    (agent / ".claude" / "linked").unlink()
    assert confidence(_run(agent / "state", ckpt)) == "recovered"


def test_a_file_of_the_same_name_outside_the_project_is_work(tmp_path: Path) -> None:
    """The set-up is the project's (the state folder's parent): a CLAUDE.md in another folder of the repository
    is the user's work."""
    repo = gitrepos.remote_pair(tmp_path)[1]
    project = repo / "sub"
    commit(repo, "sub/app.py", "code\n", "the project in a folder of the repository")
    (project / "state").mkdir()
    (project / "state" / "00_goal.md").write_text("goal\n")
    ckpt = gitinfo.snapshot(str(project / "state"))
    (project / "CLAUDE.md").write_text("ours\n")
    assert confidence(_run(project / "state", ckpt, tmp_path)) == "recovered"
    (repo / "CLAUDE.md").write_text("another folder's\n")
    found = _run(project / "state", ckpt, tmp_path)
    assert any(f.status == "degraded" and "CLAUDE.md" in f.said() and "sub/" not in f.said() for f in found)
    commit(repo, "CLAUDE.md", "committed\n", "top-level notes")
    assert confidence(_run(project / "state", ckpt, tmp_path)).startswith("degraded")
