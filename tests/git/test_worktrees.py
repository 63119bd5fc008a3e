"""Two worktrees of one repository, an agent in each on its own branch, writing at the same time:
neither touches the other's state or per-worktree knowledge, and both merge back with no conflict in state/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import Git

WRITES = 30


def writer(git_env: Git, cwd: Path, tag: str) -> subprocess.Popen[str]:
    """One process that writes WRITES records through the library, as an agent's hooks and commands would."""
    code = (
        "import sys\n"
        "from rehydrate.store.state import State\n"
        "s = State.open('state')\n"
        f"for i in range({WRITES}):\n"
        "    if i % 3 == 0:\n"
        f"        s.invariant('{tag} decision %d' % i, 'worktree test')\n"
        "    else:\n"
        f"        s.checkpoint('{tag} step %d' % i, '{tag} step %d' % (i + 1))\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], cwd=cwd, env=git_env.env, text=True)


def test_two_worktrees_write_at_once_and_merge_back(git_env: Git, make_repo: Any) -> None:
    main = make_repo()
    wt = git_env.worktree(main, main.parent / "wt2", "feat")
    git_env.branch(main, "work")
    procs = [writer(git_env, main, "main"), writer(git_env, wt, "feat")]
    assert [p.wait() for p in procs] == [0, 0]
    for cwd in (main, wt):
        assert git_env.rh(cwd, "verify").code == 0
        assert git_env.ok(cwd, "status", "--json").json()["ok"]
    main_lines = (main / "state" / "10_invariants.md").read_text()
    wt_lines = (wt / "state" / "10_invariants.md").read_text()
    assert "feat decision" not in main_lines and "main decision" not in wt_lines
    # each worktree keeps its own knowledge in its own git folder
    assert (main / ".git" / "rehydrate").is_dir()
    assert (main / ".git" / "worktrees" / "wt2" / "rehydrate").is_dir()
    git_env.commit(main, "main's state", "state")
    git_env.commit(wt, "feat's state", "state")
    git_env.merge(main, "feat")
    assert git_env.unmerged(main) == []
    merged = (main / "state" / "10_invariants.md").read_text()
    for i in range(0, WRITES, 3):
        assert merged.count(f"main decision {i} ") == 1 and merged.count(f"feat decision {i} ") == 1
    status = git_env.ok(main, "status", "--json").json()
    assert status["ok"], status
    git_env.ok(main, "checkpoint", "--done", "merged both", "--next", "ship")
    assert git_env.rh(main, "verify").code == 0
