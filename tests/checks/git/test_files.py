"""checks.git.files: what the repository's own files say, read without a git process, against real repositories
in temporary folders (tests/fakes/gitrepos.py): HEAD, the refs loose or packed, FETCH_HEAD's time, in a worktree or a
submodule; a FIFO planted where a file should be never blocks the read."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.fakes import gitrepos
from tests.fakes.gitrepos import commit, git

from rehydrate.checks.git import files as gitfiles


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    return gitrepos.remote_pair(tmp_path)


def test_the_last_fetch_is_found_without_git_in_a_worktree_and_a_submodule(
    pair: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, agent, _ = pair
    assert gitfiles.fetched(str(agent / "calc")) is None  # cloned, never fetched
    git(agent, "fetch", "-q")
    stamp = os.stat(agent / ".git" / "FETCH_HEAD").st_mtime
    os.utime(agent / ".git" / "FETCH_HEAD", (stamp, 1_000_000_000))
    at = "2001-09-09T01:46:40Z"
    assert gitfiles.fetched(str(agent / "calc")) == at
    git(agent, "worktree", "add", "-q", "-b", "other", "../linked")  # .git is a file: gitdir:, then commondir
    assert (tmp_path / "linked" / ".git").is_file()
    assert gitfiles.fetched(str(tmp_path / "linked" / "calc")) == at
    module = tmp_path / "super" / "sub"  # a submodule's .git file: a relative gitdir, no commondir
    module.mkdir(parents=True)
    (tmp_path / "super" / "modules").mkdir()
    (tmp_path / "super" / "modules" / "FETCH_HEAD").write_text("")
    os.utime(tmp_path / "super" / "modules" / "FETCH_HEAD", (stamp, 1_000_000_000))
    (module / ".git").write_text("gitdir: ../modules\n")
    assert gitfiles.fetched(str(module)) == at
    (module / ".git").write_text("not a gitdir line\n")
    assert gitfiles.fetched(str(module)) is None


def test_files_read_packed_refs_a_detached_head_and_a_worktree(pair: tuple[Path, Path, Path], tmp_path: Path) -> None:
    agent = pair[1]
    head = git(agent, "rev-parse", "HEAD")
    loose = gitfiles.files(str(agent / "calc"))
    git(agent, "pack-refs", "--all")
    packed = gitfiles.files(str(agent / "calc"))
    assert loose is not None and packed is not None
    assert (packed.head, packed.refs) == (loose.head, loose.refs) == (head, packed.refs)
    assert packed.refs is not None and packed.refs["refs/heads/main"] == git(agent, "rev-parse", "main")
    git(agent, "switch", "-q", "--detach", "main")
    detached = gitfiles.files(str(agent))
    assert detached is not None and detached.head == git(agent, "rev-parse", "main")
    git(agent, "worktree", "add", "-q", "-b", "other", "../linked", "feat")
    commit(tmp_path / "linked", "y.py", "y\n", "In the worktree")
    linked = gitfiles.files(str(tmp_path / "linked"))
    assert linked is not None and linked.head == git(tmp_path / "linked", "rev-parse", "HEAD") != head
    assert linked.common == str(agent / ".git") and linked.refs == detached.refs
    (agent / ".git" / "HEAD").write_text("ref: refs/../../etc/passwd\n")  # not a plain branch: not followed
    assert gitfiles.files(str(agent)).head is None  # type: ignore[union-attr]
    assert gitfiles.files(str(tmp_path / "nowhere")) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_planted_in_the_git_folder_never_blocks_the_files_read(tmp_path: Path) -> None:
    """A .git file pointing at a folder whose HEAD and packed-refs are FIFOs: the in-process read refuses them (not
    regular files) instead of blocking on open; git is then asked, under its deadline. Run in a subprocess so that a
    read that blocks fails the test by its timeout instead of hanging the suite."""
    import subprocess

    repo, gd = tmp_path / "repo", tmp_path / "fakegd"
    repo.mkdir()
    (gd / "refs" / "heads").mkdir(parents=True)
    os.mkfifo(gd / "HEAD")
    os.mkfifo(gd / "packed-refs")
    (repo / ".git").write_text(f"gitdir: {gd}\n")
    code = f"from rehydrate.checks.git import files; r = files.files({str(repo)!r}); print(r and (r.head, r.refs))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() in ("None", "(None, None)"), done
