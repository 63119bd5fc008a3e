"""Real-git fixtures: a git environment with no user or system config, repositories, branches, clones of a bare
remote, worktrees, and rehydrate run as a subprocess (`sys.executable -m rehydrate`) in a given folder.

Shared by every test under tests/git/. Git runs with HOME under tmp_path, GIT_CONFIG_NOSYSTEM=1,
GIT_CONFIG_GLOBAL=/dev/null and a fixed author and committer (and dates), so that its behaviour does not depend on
the machine. `git pull` is always given its flag (`--no-rebase` or `--rebase`): with no config, git 2.39 refuses a
divergent pull without one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_SRC = str(Path(__file__).resolve().parents[2] / "src")


class Done:
    """A finished process: its exit code and output."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    def json(self) -> Any:
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"Done(code={self.code}, out={self.out[-2000:]!r}, err={self.err[-2000:]!r})"


class Git:
    """The environment every git and rehydrate process of a test runs in, and helpers over it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "REHYDRATE_"))}
        env.update(
            {
                "HOME": str(home),
                "XDG_CONFIG_HOME": str(home / ".config"),
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "GIT_AUTHOR_NAME": "Test Author",
                "GIT_AUTHOR_EMAIL": "author@example.invalid",
                "GIT_COMMITTER_NAME": "Test Committer",
                "GIT_COMMITTER_EMAIL": "committer@example.invalid",
                "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
                "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_EDITOR": "true",
                "GIT_MERGE_AUTOEDIT": "no",
            }
        )
        env["PYTHONPATH"] = _SRC + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.env = env

    # ------------------------------------------------------------------------------------------------ processes

    def git(self, cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> Done:
        """`git ARGS` in cwd; with check, a non-zero exit fails the test with git's output."""
        p = subprocess.run(
            ["git", *args], cwd=cwd, env={**self.env, **(env or {})}, capture_output=True, text=True, check=False
        )
        done = Done(p.returncode, p.stdout, p.stderr)
        if check and p.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed in {cwd.name}: {done!r}")
        return done

    def rh(self, cwd: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Done:
        """`rehydrate ARGS` (sys.executable -m rehydrate) in cwd; the exit code is the caller's to check."""
        p = subprocess.run(
            [sys.executable, "-m", "rehydrate", *args],
            cwd=cwd,
            env={**self.env, **(env or {})},
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
        return Done(p.returncode, p.stdout, p.stderr)

    def ok(self, cwd: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Done:
        """rh, and its exit code must be 0."""
        done = self.rh(cwd, *args, stdin=stdin, env=env)
        assert done.code == 0, f"rehydrate {' '.join(args)} exited {done.code}: {done!r}"
        return done

    # ------------------------------------------------------------------------------------------------ repositories

    def repo(self, path: Path, goal: str | None = "ship the feature", branch: str = "main") -> Path:
        """A new repository at path on `branch`; with a goal, a state initialized and committed ("init")."""
        path.mkdir(parents=True, exist_ok=True)
        self.git(path, "init", "-q", "-b", branch)
        (path / "README.txt").write_text("code\n")
        self.git(path, "add", "README.txt")
        self.commit(path, "initial")
        if goal is not None:
            self.ok(path, "init", "--goal", goal)
            self.commit(path, "rehydrate init", "state")
        return path

    def commit(self, cwd: Path, message: str, *paths: str) -> str:
        """Add paths (all tracked and untracked changes when none) and commit; returns the new HEAD."""
        self.git(cwd, "add", "-A", "--", *(paths or (".",)))
        self.git(cwd, "commit", "-q", "--allow-empty", "-m", message)
        return self.head(cwd)

    def head(self, cwd: Path, rev: str = "HEAD") -> str:
        return self.git(cwd, "rev-parse", rev).out.strip()

    def branch(self, cwd: Path, name: str, start: str = "HEAD") -> None:
        """Create branch `name` at start and switch to it."""
        self.git(cwd, "switch", "-q", "-c", name, start)

    def switch(self, cwd: Path, name: str) -> None:
        self.git(cwd, "switch", "-q", name)

    def merge(self, cwd: Path, other: str, *flags: str) -> Done:
        """`git merge --no-edit other`; fails the test on a conflict."""
        return self.git(cwd, "merge", "--no-edit", *flags, other)

    def bare(self, path: Path, seed: Path | None = None) -> Path:
        """A bare repository at path; with seed, seeded with its current branch (pushed, upstream set)."""
        self.git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
        if seed is not None:
            self.git(seed, "remote", "add", "origin", str(path))
            self.git(seed, "push", "-q", "-u", "origin", "HEAD")
        return path

    def clone(self, remote: Path, path: Path) -> Path:
        self.git(remote.parent, "clone", "-q", str(remote), str(path))
        return path

    def worktree(self, repo: Path, path: Path, branch: str) -> Path:
        """A linked worktree of repo at path, on a new branch."""
        self.git(repo, "worktree", "add", "-q", "-b", branch, str(path))
        return path

    def unmerged(self, cwd: Path) -> list[str]:
        """Paths git holds as unmerged (a conflict)."""
        out = self.git(cwd, "ls-files", "-u", "-z").out
        return sorted({entry.split("\t", 1)[1] for entry in out.split("\0") if "\t" in entry})

    def porcelain(self, cwd: Path) -> str:
        return self.git(cwd, "status", "--porcelain").out

    def records(self, cwd: Path, actor: str | None = None) -> list[dict[str, Any]]:
        """Every record of the state, from `rehydrate log --json` (one JSON object per line)."""
        args = ["log", "--json"] + (["--actor", actor] if actor else [])
        return [json.loads(line) for line in self.ok(cwd, *args).out.splitlines() if line.strip()]

    def wal_lines(self, cwd: Path, actor: str = "agent") -> list[dict[str, Any]]:
        """The lines of state/wal/<actor>.jsonl, parsed (duplicates and all, in file order)."""
        text = (cwd / "state" / "wal" / f"{actor}.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Git]:
    """A Git helper whose processes see no user or system config, HOME under tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    for var in list(os.environ):
        if var.startswith("REHYDRATE_"):
            monkeypatch.delenv(var)
    yield Git(home)


@pytest.fixture
def make_repo(git_env: Git, tmp_path: Path) -> Callable[..., Path]:
    """make_repo(name="repo", goal=...) -> a repository under tmp_path with a committed, initialized state."""

    def make(name: str = "repo", goal: str | None = "ship the feature", branch: str = "main") -> Path:
        return git_env.repo(tmp_path / name, goal, branch)

    return make
