"""sync never touches the user's work outside the state folder: staged, unstaged, untracked, ignored, deleted,
renamed and chmod'ed paths are byte for byte and index entry for index entry as they were, after a fast-forward and
after an in-memory rebase of state-only commits (the remote's commits are state-only here); the stash is
untouched; and sync refuses, changing nothing, in the middle of a merge."""

from __future__ import annotations

import os
from pathlib import Path

from .gitutil import Team, append_lines, outside, snapshot


def user_work(team: Team, a: Path) -> None:
    """Every kind of uncommitted change a user can have, outside state/."""
    for name in ("staged.py", "both.py", "gone.py", "moved.py", "tool.sh", "kept.py"):
        (a / name).write_text(f"# {name}\n")
    team.git(a, "add", ".")
    team.git(a, "commit", "-qm", "user files")
    team.git(a, "push", "-q", "origin", "main")
    (a / "stash.py").write_text("stashed\n")
    team.git(a, "add", "stash.py")
    team.git(a, "stash", "push", "-q", "-m", "user stash")
    (a / "staged.py").write_text("# staged change\n")
    team.git(a, "add", "staged.py")
    (a / "both.py").write_text("# staged\n")
    team.git(a, "add", "both.py")
    (a / "both.py").write_text("# staged, then changed again\n")
    (a / "gone.py").unlink()
    team.git(a, "mv", "moved.py", "renamed.py")
    os.chmod(a / "tool.sh", 0o755)
    (a / "untracked.txt").write_text("new\n")
    (a / ".git" / "info" / "exclude").write_text("*.log\n")
    (a / "debug.log").write_text("ignored\n")
    (a / "new_staged.py").write_text("added\n")
    team.git(a, "add", "new_staged.py")


def test_user_work_outside_the_state_folder_is_untouched_by_fast_forward_and_rebase(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    user_work(team, a)
    team.git(b, "pull", "-q", "--ff-only")
    before = outside(snapshot(team, a))
    assert before["stash"] and len(before["status"]) >= 8, before
    # 1. a fast-forward: b's state commit, nothing of a's own
    append_lines(b / "state/wal/bob.jsonl", "b0")
    assert team.sync(b).code == 0
    r = team.sync(a)
    assert r.code == 0 and "fast-forwarded" in r.out, r
    assert outside(snapshot(team, a)) == before
    # 2. an in-memory rebase: both sides have state commits
    append_lines(b / "state/wal/bob.jsonl", "b1")
    assert team.sync(b).code == 0
    assert team.rh(a, "checkpoint", "--done", "lexer", "--next", "parser").code == 0
    r = team.sync(a)
    assert r.code == 0 and "rebased 1 state commit(s)" in r.out and "pushed" in r.out, r
    assert outside(snapshot(team, a)) == before
    assert team.git(a, "diff", "--cached", "--name-only", "--", "state").strip() == ""
    assert team.git(a, "status", "--porcelain", "--", "state").strip() == ""
    pushed = team.git(a, "diff-tree", "-r", "--name-only", "HEAD~1", "HEAD").split()
    assert pushed and all(p.startswith("state/") for p in pushed), pushed


def test_sync_refuses_in_the_middle_of_a_merge_and_changes_nothing(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    team.commit_code(b, "app.py", "print('b')\n", "b")
    team.git(b, "push", "-q", "origin", "main")
    team.commit_code(a, "app.py", "print('a')\n", "a")
    team.git(a, "fetch", "-q")
    team.git(a, "merge", "origin/main", check=False)
    append_lines(a / "state/wal/alice.jsonl", "a0")
    before = snapshot(team, a)
    for args in ([], ["--dry-run"]):
        r = team.sync(a, *args)
        assert r.code == 3 and "a merge is in progress" in r.err and "rehydrate resolve" in r.err, r
        assert snapshot(team, a) == before


def test_sync_refuses_outside_a_repository(tmp_path: Path) -> None:
    team = Team(tmp_path)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert team.rh(plain, "init", "--goal", "g").code == 0
    r = team.sync(plain)
    assert r.code == 3 and "not inside a git repository" in r.err, r


def test_a_detached_head_or_a_branch_without_upstream_is_committed_and_stops(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    remote = team.remote_head()
    team.git(a, "checkout", "-q", "--detach")
    append_lines(a / "state/wal/alice.jsonl", "a0")
    r = team.sync(a, "--json")
    assert r.code == 1 and '"stopped": "detached"' in r.out and "HEAD is detached" in r.out, r
    assert team.git(a, "diff-tree", "-r", "--name-only", "HEAD~1", "HEAD").split() == ["state/wal/alice.jsonl"]
    team.git(a, "checkout", "-q", "-b", "topic")
    append_lines(a / "state/wal/alice.jsonl", "a1")
    r = team.sync(a)
    assert r.code == 1 and "`git push -u origin topic`" in r.out and "committed 1 path(s)" in r.out, r
    assert team.remote_head() == remote and team.git(a, "status", "--porcelain") == ""


def test_sync_refuses_unmerged_paths_left_by_a_stash_pop(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    (a / "app.py").write_text("print('stashed')\n")
    team.git(a, "stash", "push", "-q")
    team.commit_code(a, "app.py", "print('committed')\n")
    team.git(a, "stash", "pop", check=False)
    before = snapshot(team, a)
    r = team.sync(a)
    assert r.code == 3 and "unmerged paths" in r.err, r
    assert snapshot(team, a) == before


def test_sync_refuses_a_git_older_than_2_38(tmp_path: Path) -> None:
    import shutil

    team = Team(tmp_path)
    a = team.clone("a")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(
        '#!/bin/sh\nif [ "$3" = version ]; then echo "git version 2.37.1"; exit 0; fi\n'
        f'exec {shutil.which("git")} "$@"\n'
    )
    (fake / "git").chmod(0o755)
    append_lines(a / "state/wal/alice.jsonl", "a0")
    before = snapshot(team, a)
    r = team.rh(a, "sync", env={"PATH": f"{fake}:{os.environ['PATH']}"})
    assert r.code == 3 and "sync needs git 2.38 or later (this is 2.37.1)" in r.err, r
    assert snapshot(team, a) == before
