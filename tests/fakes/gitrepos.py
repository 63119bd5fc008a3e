"""Real git repositories in a test's temporary folder, shaped like the recovery scenarios: an origin with a main
line, the agent's clone on a feature branch with an upstream, a teammate's clone (see tests/fakes/__init__.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_WHO = {
    "GIT_AUTHOR_NAME": "Agent",
    "GIT_AUTHOR_EMAIL": "agent@example.com",
    "GIT_COMMITTER_NAME": "Agent",
    "GIT_COMMITTER_EMAIL": "agent@example.com",
}
TEAMMATE = {
    "GIT_AUTHOR_NAME": "Ann",
    "GIT_AUTHOR_EMAIL": "ann@example.com",
    "GIT_COMMITTER_NAME": "Ann",
    "GIT_COMMITTER_EMAIL": "ann@example.com",
}


def git(cwd: Path, *args: str, who: dict[str, str] | None = None, **extra: str) -> str:
    """Runs git in cwd (as the agent unless `who` says otherwise) and gives its stdout; fails the test on an error."""
    env = {**os.environ, **(who or _WHO), **extra}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def commit(cwd: Path, name: str, text: str, message: str, who: dict[str, str] | None = None) -> str:
    """Writes one file, commits it, gives the new HEAD."""
    (cwd / name).parent.mkdir(parents=True, exist_ok=True)
    (cwd / name).write_text(text)
    git(cwd, "add", name, who=who)
    git(cwd, "commit", "-q", "-m", message, who=who)
    return git(cwd, "rev-parse", "HEAD")


def remote_pair(tmp: Path) -> tuple[Path, Path, Path]:
    """(origin_bare, agent, teammate): a bare origin whose main holds one commit; the agent's clone on branch feat
    (one commit, pushed, tracking origin/feat); the teammate's clone on main."""
    origin, agent, teammate = tmp / "origin.git", tmp / "agent", tmp / "teammate"
    seed = tmp / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    commit(seed, "README.md", "calc\n", "Start calc")
    git(tmp, "clone", "-q", "--bare", str(seed), str(origin))
    git(tmp, "clone", "-q", str(origin), str(agent))
    git(tmp, "clone", "-q", str(origin), str(teammate))
    git(agent, "switch", "-q", "-c", "feat")
    commit(agent, "calc/parser.py", "def parse(): ...\n", "Parser skeleton")
    git(agent, "push", "-q", "-u", "origin", "feat")
    return origin, agent, teammate


def teammate_merge(pair: tuple[Path, Path, Path], message: str) -> str:
    """The teammate commits on main and pushes; the agent fetches (nothing of the agent's own branch moves). Gives
    the teammate's commit."""
    _, agent, teammate = pair
    git(teammate, "pull", "-q", "--ff-only", who=TEAMMATE)
    sha = commit(teammate, "calc/tokenizer.py", f"# {message}\n", message, who=TEAMMATE)
    git(teammate, "push", "-q", "origin", "main", who=TEAMMATE)
    git(agent, "fetch", "-q", "origin")
    return sha


def rebase_head(agent: Path) -> str:
    """Rewrites HEAD's commit through a real rebase (reflog "rebase ..."), with a new committer date so that its
    hash changes; gives the new HEAD."""
    git(agent, "rebase", "-q", "--force-rebase", "HEAD~1", GIT_COMMITTER_DATE="2001-02-03T04:05:06Z")
    return git(agent, "rev-parse", "HEAD")


def switch(agent: Path, branch: str) -> None:
    """Switches to branch, creating it from HEAD when it does not exist."""
    known = git(agent, "branch", "--list", branch)
    git(agent, "switch", "-q", *(() if known else ("-c",)), branch)
