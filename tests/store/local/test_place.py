"""store/local/place.py: the per-worktree folder and HEAD, found without a git process, checked against git's own
answers in real repositories (a plain one, a linked worktree, $GIT_DIR, packed refs, a detached HEAD, no repository)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rehydrate.store.local import place as local


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    env.pop("GIT_DIR", None)
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "state").mkdir()
    (top / "f").write_text("x\n")
    git(top, "add", "f")
    git(top, "commit", "-q", "-m", "one")
    return top


def test_plain_repository_matches_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    found = local.repo(str(repo / "state"))
    assert found is not None
    assert found.top == str(repo)
    assert Path(found.git_dir) == repo / ".git"
    assert Path(local.local_dir(str(repo / "state"))) == repo / ".git" / "rehydrate" / "state"
    assert Path(git(repo, "rev-parse", "--absolute-git-dir")) == Path(found.git_dir)
    branch, commit = local.head(found)
    assert branch == "main"
    assert commit == git(repo, "rev-parse", "HEAD")


def test_linked_worktree_has_its_own_folder(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    wt = repo.parent / "wt2"
    git(repo, "worktree", "add", "-q", "-b", "feat", str(wt))
    (wt / "state").mkdir()
    found = local.repo(str(wt / "state"))
    assert found is not None and found.top == str(wt)
    # git's own per-worktree path for rehydrate/ is where ours goes
    assert Path(found.git_dir) / "rehydrate" == Path(wt / git(wt, "rev-parse", "--git-path", "rehydrate")).resolve()
    assert Path(found.common_dir) == (repo / ".git").resolve()
    assert local.local_dir(str(wt / "state")) != local.local_dir(str(repo / "state"))
    assert local.head(found) == ("feat", git(wt, "rev-parse", "HEAD"))


def test_packed_refs_and_detached_head(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    found = local.repo(str(repo / "state"))
    assert found is not None
    assert local.head(found) == ("main", git(repo, "rev-parse", "HEAD"))
    git(repo, "checkout", "-q", "--detach")
    assert local.head(found) == (None, git(repo, "rev-parse", "HEAD"))


def test_git_dir_from_the_environment_wins(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "elsewhere"
    (other / "state").mkdir(parents=True)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    found = local.repo(str(other / "state"))
    assert found is not None and Path(found.git_dir) == repo / ".git"


def test_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    (tmp_path / "plain" / "state").mkdir(parents=True)
    root = str(tmp_path / "plain" / "state")
    assert local.repo(root) is None
    assert local.local_dir(root) == os.path.join(root, local.LOCAL_DIR)


def test_nested_state_folder_key(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    (repo / "sub" / "state").mkdir(parents=True)
    assert local.local_dir(str(repo / "sub" / "state")).endswith(os.path.join("rehydrate", "sub%2Fstate"))


def test_a_garbled_dot_git_file_is_no_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    top = tmp_path / "odd"
    (top / "state").mkdir(parents=True)
    (top / ".git").write_text("not a gitdir line\n")
    assert local.repo(str(top / "state")) is None
