"""A claim's work-tree hash reads the files git's index marks assume-unchanged or skip-worktree: a rewrite or a
deletion hidden from `git status` so still makes the claim stale. The real CLI on a real repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.conftest import git, rehydrate


def _ledger(repo: Path) -> tuple[int, list[str]]:
    res = rehydrate("recover", cwd=repo)
    return res.code, [line for line in res.out.splitlines() if "claim" in line]


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
@pytest.mark.parametrize("edit", ["rewrite", "delete"])
def test_an_edit_hidden_from_git_by_an_index_flag_leaves_the_claim_stale(repo: Path, flag: str, edit: str) -> None:
    """The work tree's hash reads a file whose index entry tells git not to look at it (assume-unchanged,
    skip-worktree): rewritten or deleted after the receipt, the claim is stale, not verified."""
    assert rehydrate("init", "--goal", "ship the parser", cwd=repo).code == 0
    assert rehydrate("run", "--claim", "tests pass", "--", "true", cwd=repo).code == 0
    assert rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=repo).code == 0
    assert any('claim "tests pass" verified' in line for line in _ledger(repo)[1])
    git(repo, "update-index", flag, "app.py")
    if edit == "rewrite":
        (repo / "app.py").write_text("raise SystemExit('the tests would fail now')\n")
    else:
        os.unlink(repo / "app.py")
    assert "app.py" not in git(repo, "status", "--porcelain")  # git itself no longer sees the edit
    code, lines = _ledger(repo)
    assert code == 1 and any('claim "tests pass" is stale' in line and "app.py changed" in line for line in lines), (
        lines
    )
    assert git(repo, "ls-files", "-v", "app.py").split()[0] in ("h", "S")  # the real index's mark is left as it was
