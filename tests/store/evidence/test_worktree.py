"""store/evidence/worktree.py: the tree of what is on disk, whatever marks git's index holds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import git, git_repo

from rehydrate.store.evidence import worktree


def test_the_tree_reads_files_behind_index_marks_of_any_name_and_in_any_number(tmp_path: Path) -> None:
    """tree_of is the tree of what is on disk however many entries the index marks assume-unchanged or
    skip-worktree (more than one `git update-index` command line holds) and whatever their names (a space, a
    leading dash, a non-ASCII letter); the real index keeps its marks."""
    repo = git_repo(tmp_path / "repo")
    (repo / "state").mkdir()
    names = [f"d/{'x' * 40}-{n:04}.txt" for n in range(2000)] + ["-lead dash.py", "é.py"]
    (repo / "d").mkdir()
    for name in names:
        (repo / name).write_text("before\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "many")
    half = len(names) // 2
    git(repo, "update-index", "--assume-unchanged", "--", *names[:half], "é.py")
    git(repo, "update-index", "--skip-worktree", "--", *names[half:])
    for name in (names[0], names[-3], "-lead dash.py", "é.py"):
        (repo / name).write_text("after\n")
    expected = tmp_path / "expected.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(expected)}
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    want = subprocess.run(["git", "write-tree"], cwd=repo, env=env, check=True, capture_output=True, text=True)
    assert worktree.tree_of(str(repo / "state")).sha == want.stdout.strip()
    tags = {line[0] for line in git(repo, "ls-files", "-v").splitlines()}
    assert tags == {"h", "S", "s", "H"}  # app.py plain, é.py marked both ways, the others one way


def test_the_tree_reads_a_file_behind_a_mark_in_a_split_index(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "state").mkdir()
    git(repo, "update-index", "--split-index")
    before = worktree.tree_of(str(repo / "state")).sha
    git(repo, "update-index", "--assume-unchanged", "app.py")
    (repo / "app.py").write_text("changed behind the mark\n")
    after = worktree.tree_of(str(repo / "state")).sha
    assert before is not None and after is not None and after != before
