"""`rehydrate sync` with real git: a bare remote and clones in a temporary folder (tests/git/gitutil.py).

The clones write to files of their own under state/ (`wal/<clone>.jsonl` lines: sync does not read records), so that
two clones' changes never touch one file the readers of today would see as one forked log; the single-writer test
uses the real CLI's records and verifies them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from .gitutil import IDENTITY, Team, append_lines, snapshot


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_sync_commits_only_the_state_folder_and_runs_no_commit_hook(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    hook = a / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path / 'hook-ran'}\nexit 1\n")
    hook.chmod(0o755)
    (a / "app.py").write_text("print('mine')\n")
    team.git(a, "add", "app.py")
    (a / "notes.txt").write_text("untracked\n")
    assert team.rh(a, "checkpoint", "--done", "lexer", "--next", "parser").code == 0
    r = team.sync(a)
    assert r.code == 0 and "committed 2 path(s) under state/" in r.out and "pushed" in r.out, r
    changed = team.git(a, "diff-tree", "-r", "--name-only", "HEAD~1", "HEAD").split()
    assert changed == ["state/99_next.md", "state/wal/agent.jsonl"], changed
    assert team.remote_head() == team.head(a)
    assert not (tmp_path / "hook-ran").exists()
    assert team.git(a, "status", "--porcelain").splitlines() == ["M  app.py", "?? notes.txt"]
    assert team.rh(a, "verify").code == 0


def test_two_clones_syncing_in_turn_converge_with_every_line_once(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    for n in range(3):
        append_lines(a / "state/wal/alice.jsonl", f"a{n}")
        append_lines(b / "state/wal/bob.jsonl", f"b{n}")
        append_lines(a / "state/mail/all" / f"a{n}.md", "from a")
        assert team.sync(a).code == 0
        r = team.sync(b)  # diverged: b's state commit rebased in memory on a's
        assert r.code == 0 and "rebased 1 state commit(s)" in r.out and "pushed" in r.out, r
    assert team.sync(a).code == 0
    assert team.head(a) == team.head(b) == team.remote_head()
    assert team.tree(a) == team.tree(b)
    assert lines(a / "state/wal/alice.jsonl") == ["a0", "a1", "a2"]
    assert lines(a / "state/wal/bob.jsonl") == ["b0", "b1", "b2"]
    assert team.git(a, "status", "--porcelain") == team.git(b, "status", "--porcelain") == ""
    history = team.git(a, "log", "--format=%P").splitlines()
    assert all(len(parents.split()) <= 1 for parents in history)  # linear: no merge commit


def test_one_writer_per_pair_of_syncs_keeps_a_verified_log(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    for n, (writer, reader) in enumerate([(a, b), (b, a), (a, b)]):
        assert team.rh(writer, "checkpoint", "--done", f"step {n}", "--next", f"step {n + 1}").code == 0
        assert team.sync(writer).code == 0
        r = team.sync(reader)
        assert r.code == 0 and "fast-forwarded" in r.out, r
    assert team.head(a) == team.head(b)
    assert team.rh(a, "verify").code == 0 and team.rh(b, "verify").code == 0
    assert 'next "step 3"' in team.rh(b, "status").out or "step 3" in team.rh(b, "status").out


def test_concurrent_syncs_of_two_clones_converge(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    for n in range(3):
        append_lines(a / "state/wal/alice.jsonl", f"a{n}")
        append_lines(b / "state/wal/bob.jsonl", f"b{n}")
        both = [team.start_rh(a, "sync", "--json"), team.start_rh(b, "sync", "--json")]
        outs = [p.communicate(timeout=120) for p in both]
        for p, (out, err) in zip(both, outs, strict=True):
            assert p.returncode == 0 and "Traceback" not in err, (out, err)
            assert json.loads(out)["pushed"] or json.loads(out)["stopped"] is None
    assert team.sync(a).code == 0 and team.sync(b).code == 0
    assert team.head(a) == team.head(b) == team.remote_head()
    assert lines(a / "state/wal/alice.jsonl") == lines(b / "state/wal/alice.jsonl") == ["a0", "a1", "a2"]
    assert lines(a / "state/wal/bob.jsonl") == lines(b / "state/wal/bob.jsonl") == ["b0", "b1", "b2"]


def test_a_rejected_push_is_retried_after_a_new_fetch(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    append_lines(b / "state/wal/bob.jsonl", "b0")
    team.git(b, "add", "-A")
    team.git(b, "commit", "-qm", "b's state")
    # a's first push races b's: a pre-push hook pushes b first, once
    hook = a / ".git" / "hooks" / "pre-push"
    flag = tmp_path / "raced"
    hook.write_text(
        "#!/bin/sh\nunset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n"
        f"if [ ! -e {flag} ]; then touch {flag}; git -C {b} push -q origin main || exit 3; fi\nexit 0\n"
    )
    hook.chmod(0o755)
    append_lines(a / "state/wal/alice.jsonl", "a0")
    r = team.sync(a, "--json")
    report = json.loads(r.out)
    assert r.code == 0 and report["attempts"] == 2 and report["pushed"] == team.remote_head(), r
    assert any("push rejected" in line for line in report["actions"]), report["actions"]
    assert lines(a / "state/wal/bob.jsonl") == ["b0"] and lines(a / "state/wal/alice.jsonl") == ["a0"]


def test_fast_forward_and_nothing_to_do(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    append_lines(b / "state/wal/bob.jsonl", "b0")
    assert team.sync(b).code == 0
    r = team.sync(a, "--json")
    report = json.loads(r.out)
    assert r.code == 0 and report["pulled"] == 1 and report["committed"] is None and report["pushed"] is None, r
    assert any(line.startswith("fast-forwarded") for line in report["actions"])
    assert team.head(a) == team.remote_head() and lines(a / "state/wal/bob.jsonl") == ["b0"]
    before = (team.head(a), team.remote_head())
    again = team.sync(a)
    assert again.code == 0 and again.out.startswith("up to date with origin/main"), again
    assert (team.head(a), team.remote_head()) == before


def test_own_commits_outside_the_state_folder_stop_the_sync_after_its_commit(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    append_lines(b / "state/wal/bob.jsonl", "b0")
    assert team.sync(b).code == 0
    mine = team.commit_code(a, "feature.py", "x = 1\n", "my feature")
    append_lines(a / "state/wal/alice.jsonl", "a0")
    remote = team.remote_head()
    r = team.sync(a, "--json")
    report = json.loads(r.out)
    assert r.code == 1 and report["stopped"] == "local-commits" and report["committed"], r
    assert "feature.py" in " ".join(report["actions"])
    assert team.remote_head() == remote and team.git(a, "rev-parse", "HEAD~1").strip() == mine


def test_no_identity_commits_as_rehydrate_actor(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    append_lines(a / "state/wal/alice.jsonl", "a0")
    no_identity = dict.fromkeys(IDENTITY, "")  # as unset: git has no name nor email for this command
    r = team.rh(a, "sync", env={**no_identity, "REHYDRATE_ACTOR": "alice"})
    assert r.code == 0, r
    who = team.git(a, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip()
    assert who == "rehydrate alice <alice@rehydrate.invalid>|rehydrate alice <alice@rehydrate.invalid>"


def _force_back(team: Team, to: str) -> None:
    team.git(team.remote, "update-ref", "refs/heads/main", to)


def test_a_forced_push_of_state_commits_is_named_and_not_pushed_again(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    seed = team.remote_head()
    append_lines(b / "state/wal/bob.jsonl", "b-dropped-1", "b-dropped-2")
    assert team.sync(b).code == 0
    assert team.sync(a).code == 0  # a integrated b's commit: remotes.json holds it
    dropped = team.remote_head()
    _force_back(team, seed)  # someone rewrote main without it
    append_lines(a / "state/wal/alice.jsonl", "a0")
    r = team.sync(a, "--json")
    report = json.loads(r.out)
    assert r.code == 0 and report["pushed"] == team.remote_head(), r
    forced = report["forced_push"]
    assert forced == {"remote": "origin/main", "old": dropped, "new": seed, "left": 1, "records": 2}, forced
    said = " ".join(report["actions"])
    assert f"origin/main was rewritten by a forced push since this clone's last sync: {dropped[:7]}..{seed[:7]}" in said
    assert f"`git log {dropped[:7]}`" in said
    pushed = team.tree(a, team.remote_head())
    assert "state/wal/bob.jsonl" not in pushed and "state/wal/alice.jsonl" in pushed
    assert team.git(a, "merge-base", "--is-ancestor", seed, "HEAD", check=False) == ""
    again = team.sync(a, "--json")  # named once: the tip it integrated is recorded
    assert json.loads(again.out)["forced_push"] is None


def test_a_forced_push_that_dropped_a_code_commit_is_named_and_not_pushed_again(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    seed = team.remote_head()
    team.commit_code(b, "lib.py", "y = 2\n", "b's code")
    team.git(b, "push", "-q", "origin", "main")
    assert team.sync(a).code == 0 and (a / "lib.py").exists()
    dropped = team.remote_head()
    _force_back(team, seed)
    append_lines(a / "state/wal/alice.jsonl", "a0")
    r = team.sync(a, "--json")
    report = json.loads(r.out)
    assert r.code == 0 and report["forced_push"]["old"] == dropped and report["forced_push"]["left"] == 1, r
    assert report["forced_push"]["records"] == 0
    assert "lib.py" not in team.tree(a, team.remote_head()) and "state/wal/alice.jsonl" in team.tree(a, "origin/main")


def test_dry_run_changes_nothing_at_all(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    append_lines(b / "state/wal/bob.jsonl", "b0")
    assert team.sync(b).code == 0
    append_lines(a / "state/wal/alice.jsonl", "a0")
    (a / "app.py").write_text("print('dirty')\n")
    before = snapshot(team, a)
    local = sorted(p.name for p in (a / ".git").rglob("*"))
    remote = team.remote_head()
    r = team.sync(a, "--dry-run", "--json")
    report = json.loads(r.out)
    assert r.code == 0 and report["dry_run"] and report["paths"] == ["state/wal/alice.jsonl"], r
    assert report["committed"] is None and report["pushed"] is None
    assert any("not fetched yet" in line for line in report["actions"]), report
    assert snapshot(team, a) == before
    assert sorted(p.name for p in (a / ".git").rglob("*")) == local
    assert team.remote_head() == remote
    assert team.sync(a).code == 0  # and the real one does it
    r = team.sync(a, "--dry-run")
    assert r.code == 0 and "nothing to commit" in r.out and "0 commit(s) ahead" in r.out, r


def test_a_conflict_on_a_union_able_state_file_is_merged_line_by_line_without_the_attributes(tmp_path: Path) -> None:
    """git merge-tree reads the attributes of the working tree; with them overridden (a local
    `merge=text`) both sides' appends to one log conflict, and sync settles them as the union driver would."""
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    append_lines(b / "state/wal/shared.jsonl", "b0", "b1")
    assert team.sync(b).code == 0
    (a / ".git" / "info" / "attributes").write_text("* merge=text\n")
    append_lines(a / "state/wal/shared.jsonl", "a0")
    r = team.sync(a)
    assert r.code == 0 and "merged 1 state file(s) line by line (union): state/wal/shared.jsonl" in r.out, r
    assert lines(a / "state/wal/shared.jsonl") == ["b0", "b1", "a0"]
    assert team.git(a, "show", "origin/main:state/wal/shared.jsonl").splitlines() == ["b0", "b1", "a0"]
    team.git(b, "pull", "-q", "--ff-only")  # a conflict outside the union-able files stops it, changing nothing
    append_lines(b / "state/00_goal.md", "b's edit")
    assert team.sync(b).code == 0
    append_lines(a / "state/00_goal.md", "a's edit")
    head, remote = team.head(a), team.remote_head()
    r = team.sync(a)
    assert r.code == 1 and "conflicts in state/00_goal.md" in r.out and team.head(a, "HEAD~1") == head, r
    assert team.remote_head() == remote and team.git(a, "status", "--porcelain") == ""


def _waiting_for_a_lock(pid: int) -> bool:
    """Whether the process is blocked on a flock (a `->` line of /proc/locks names the waiters)."""
    with open("/proc/locks") as f:
        return any("->" in line and f" {pid} " in line for line in f)


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux's /proc/locks to see a waiter")
def test_sync_commits_and_integrates_under_the_state_lock(tmp_path: Path) -> None:
    """A writer holding the state's lock keeps sync from committing half a write; sync waits for it and
    then commits the whole of it."""
    from rehydrate.fs import lock as fslock

    team = Team(tmp_path)
    a = team.clone("a")
    append_lines(a / "state/wal/alice.jsonl", "a0")
    with fslock.locked(str(a / "state")):
        sync = team.start_rh(a, "sync")
        deadline = time.monotonic() + 60
        while not _waiting_for_a_lock(sync.pid):  # the observable event: sync blocked on the lock
            assert sync.poll() is None and time.monotonic() < deadline, sync.communicate()
            time.sleep(0.005)
        append_lines(a / "state/wal/alice.jsonl", "a1")  # the rest of the writer's work, under its lock
    out, err = sync.communicate(timeout=120)
    assert sync.returncode == 0, (out, err)
    assert team.git(a, "show", "origin/main:state/wal/alice.jsonl") == "a0\na1\n"


def test_a_git_lock_held_by_another_process_is_retried(tmp_path: Path) -> None:
    """git's "Unable to create .../index.lock" (another git process at work) is another round, not a
    failure. A git on PATH that answers the first `reset` so (a fake: the real git does the rest)."""
    import shutil

    team = Team(tmp_path)
    a = team.clone("a")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(
        "#!/bin/sh\n"
        f'if [ "$3" = reset ] && [ ! -e {tmp_path / "once"} ]; then touch {tmp_path / "once"}; '
        "echo \"fatal: Unable to create '$2/.git/index.lock': File exists.\" >&2; exit 128; fi\n"
        f'exec {shutil.which("git")} "$@"\n'
    )
    (fake / "git").chmod(0o755)
    append_lines(a / "state/wal/alice.jsonl", "a0")
    r = team.rh(a, "sync", "--json", env={"PATH": f"{fake}:{os.environ['PATH']}"})
    report = json.loads(r.out)
    assert r.code == 0 and report["attempts"] == 2 and report["pushed"] == team.remote_head(), r
    assert (tmp_path / "once").exists()
    said = " ".join(report["actions"])
    assert "git was busy" in said and "finished an interrupted sync" in said, said
    assert team.git(a, "status", "--porcelain") == ""


def test_two_worktrees_of_one_clone_sync_their_branches_at_once(tmp_path: Path) -> None:
    """Each worktree has its own sync.lock, pending marker and remote tips (its own git folder); refs are shared."""
    team = Team(tmp_path)
    a = team.clone("a")
    wt = tmp_path / "wt"
    team.git(a, "worktree", "add", "-q", "-b", "feat", str(wt))
    team.git(wt, "push", "-q", "-u", "origin", "feat")
    append_lines(a / "state/wal/alice.jsonl", "main 0")
    append_lines(wt / "state/wal/alice.jsonl", "feat 0")
    both = [team.start_rh(a, "sync"), team.start_rh(wt, "sync")]
    for p in both:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and "pushed" in out, (out, err)
    assert team.git(team.remote, "show", "main:state/wal/alice.jsonl") == "main 0\n"
    assert team.git(team.remote, "show", "feat:state/wal/alice.jsonl") == "feat 0\n"
    assert (a / ".git" / "rehydrate" / "state" / "remotes.json").exists()
    assert (a / ".git" / "worktrees" / "wt" / "rehydrate" / "state" / "remotes.json").exists()


@pytest.mark.slow
def test_three_clones_syncing_concurrently_in_random_order_converge(tmp_path: Path) -> None:
    import random

    rng = random.Random(13)
    team = Team(tmp_path)
    clones = {name: team.clone(name) for name in ("a", "b", "c")}
    written: dict[str, list[str]] = {name: [] for name in clones}
    for n in range(10):
        for name, path in clones.items():
            if rng.random() < 0.7:
                written[name].append(f"{name}{n}")
                append_lines(path / f"state/wal/{name}.jsonl", f"{name}{n}")
        chosen = rng.sample(sorted(clones), rng.randint(1, 3))
        running = [team.start_rh(clones[name], "sync") for name in chosen]
        for p in running:
            out, err = p.communicate(timeout=180)
            assert p.returncode == 0 and "Traceback" not in err, (out, err)
    for path in [*clones.values(), *clones.values()]:
        assert team.sync(path).code == 0
    heads = {team.head(path) for path in clones.values()}
    assert heads == {team.remote_head()}
    for path in clones.values():
        for other in clones:
            assert lines(path / f"state/wal/{other}.jsonl") == written[other]
        assert team.git(path, "status", "--porcelain") == ""


def test_sync_pushes_to_the_upstream_branch_s_own_name(tmp_path: Path) -> None:
    """A local branch `work` tracking origin/main publishes to main, never to a new `work`."""
    team = Team(tmp_path)
    a = team.clone("a")
    team.git(a, "checkout", "-q", "-b", "work", "--track", "origin/main")
    append_lines(a / "state/wal/alice.jsonl", "a0")
    r = team.sync(a)
    assert r.code == 0 and "pushed" in r.out and "origin/main" in r.out, r
    assert team.remote_head() == team.head(a)
    assert team.git(team.remote, "branch", "--list", "work") == ""
