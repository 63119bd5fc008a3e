"""checks.git.probe: the git probe live-state and direction share, against real repositories
in temporary folders (tests/fakes/gitrepos.py); every git call bounded, the recorded HEAD never trusted as a revision
expression."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.fakes import gitrepos
from tests.fakes.gitrepos import commit, git

from rehydrate import proc
from rehydrate.checks import Context, livestate
from rehydrate.checks.git import files as gitfiles
from rehydrate.checks.git import probe as gitnow
from rehydrate.store.git import info as gitinfo
from rehydrate.store.wal.since import Since


def _state(repo: Path) -> Path:
    folder = repo / "state"
    folder.mkdir(exist_ok=True)
    (folder / "00_goal.md").write_text("goal\n")
    return folder


def _context(folder: Path, ckpt: dict[str, Any] | None, scope: str = "hook", **env: str) -> Context:
    since = Since()
    since.git = ckpt
    view: Any = SimpleNamespace(root=str(folder), actor="agent")
    return Context(view, None, scope=scope, since=since, env={**os.environ, **env} if env else None)


def _probe(folder: Path, ckpt: dict[str, Any] | None, **kw: Any) -> gitnow.GitNow:
    return gitnow.probe(_context(folder, ckpt, **kw)).result()


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    return gitrepos.remote_pair(tmp_path)


def _checkpoint(folder: Path) -> dict[str, Any]:
    """The `git` a checkpoint records (store/git/info.py, as `rehydrate checkpoint` takes it)."""
    return gitinfo.snapshot(str(folder))


def test_nothing_since_the_checkpoint(pair: tuple[Path, Path, Path]) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    now = _probe(folder, ckpt)
    assert (now.repo, now.head, now.branch, now.known, now.descendant) == (True, ckpt["head"], "feat", True, True)
    assert (now.commits, now.more, now.dirty, now.unanswered) == ([], False, [], {})
    assert (now.upstream, now.ahead, now.behind) == ("origin/feat", 0, 0)
    assert now.refs["refs/remotes/origin/HEAD"] == "ref: refs/remotes/origin/main"
    assert now.refs["refs/remotes/origin/main"] == git(agent, "rev-parse", "origin/main")
    assert "refs/heads/main" in now.refs and "refs/heads/master" not in now.refs
    assert now.reflog == []  # asked only when HEAD was rewritten or the branch changed


def test_own_commits_dirty_files_and_upstream_counts(pair: tuple[Path, Path, Path]) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    commit(agent, "calc/lexer.py", "x\n", "Lexer")
    commit(agent, "calc/eval.py", "y\n", "Evaluator")
    (agent / "notes.md").write_text("dirty\n")
    (folder / "20_handoff.md").write_text("state files are left out\n")
    now = _probe(folder, ckpt)
    assert [c.subject for c in now.commits] == ["Evaluator", "Lexer"]
    assert now.commits[1].parents == [ckpt["head"]] and now.commits[0].author == "Agent"
    assert (now.descendant, now.ahead, now.behind, now.dirty) == (True, 2, 0, ["notes.md"])


def test_behind_the_upstream_as_of_the_last_fetch(pair: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "feat", str(pair[0]), str(other))
    commit(other, "x.py", "x\n", "Pushed by another clone")
    git(other, "push", "-q", "origin", "feat")
    assert _probe(folder, ckpt).fetched is None  # never fetched: the clone wrote no FETCH_HEAD
    git(agent, "fetch", "-q")
    now = _probe(folder, ckpt)
    assert (now.ahead, now.behind) == (0, 1) and now.fetched is not None and now.fetched.endswith("Z")


def test_a_rebase_is_not_a_descendant_and_the_reflog_says_so(pair: tuple[Path, Path, Path]) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    gitrepos.rebase_head(agent)
    now = _probe(folder, ckpt)
    assert now.known is True and now.descendant is False
    assert any(s.startswith("rebase") for s in now.reflog)


def test_a_branch_switch_brings_the_reflog(pair: tuple[Path, Path, Path]) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    gitrepos.switch(agent, "main")
    now = _probe(folder, ckpt)
    assert now.branch == "main" and now.descendant is False
    assert "checkout: moving from feat to main" in now.reflog


def test_more_commits_than_counted_are_settled_by_is_ancestor(pair: tuple[Path, Path, Path]) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    for i in range(gitnow.MAX_COMMITS + 2):
        git(agent, "commit", "-q", "--allow-empty", "-m", f"step {i}")
    now = _probe(folder, ckpt)
    assert len(now.commits) == gitnow.MAX_COMMITS and now.more
    assert now.commits[0].subject == f"step {gitnow.MAX_COMMITS + 1}"
    assert now.descendant is True and now.unanswered == {}


def test_an_unknown_checkpoint_commit(pair: tuple[Path, Path, Path]) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    now = _probe(folder, {"head": "ab" * 20, "branch": "feat", "dirty": []})
    assert (now.known, now.descendant, now.commits, now.unanswered) == (False, False, [], {})


@pytest.mark.parametrize("recorded", ["HEAD~1", "--output=x", "a1b2c3d..HEAD", "", None, 7])
def test_a_recorded_head_that_is_not_a_hash_is_never_given_to_git(pair: tuple[Path, Path, Path], recorded: Any) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    now = _probe(folder, {"head": recorded, "branch": "feat", "dirty": []})
    assert now.repo is True and now.known is None and now.descendant is None
    assert sorted(p.name for p in folder.iterdir()) == ["00_goal.md"]


def test_not_a_repository(tmp_path: Path) -> None:
    folder = _state(tmp_path)
    now = _probe(folder, None, GIT_CEILING_DIRECTORIES=str(tmp_path.parent))
    assert (now.repo, now.head, now.unanswered) == (False, None, {})


def test_git_not_installed(tmp_path: Path) -> None:
    folder = _state(tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()
    now = _probe(folder, None, PATH=str(empty))
    assert now.repo is None and now.unanswered == {"status": "git is not installed"}


def test_a_hanging_git_is_unanswered_at_its_deadline(
    pair: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, agent, _ = pair
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(3600)\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(gitnow, "HOOK_DEADLINE", 0.5)
    now = _probe(folder, ckpt, PATH=str(bin_dir))
    assert now.repo is None and now.unanswered == {"status": "did not answer within 0.5 s"}


def test_recover_scope_gives_git_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert gitnow.deadline("hook") == gitnow.HOOK_DEADLINE == 2.0
    assert gitnow.deadline("recover") == gitnow.RECOVER_DEADLINE == 10.0


def test_parse_upstream_reads_the_headers_parse_leaves_out() -> None:
    out = b"# branch.oid " + b"a" * 40 + b"\0# branch.head feat\0# branch.upstream origin/feat\0# branch.ab +2 -1\0"
    assert gitinfo.parse_upstream(out) == {"upstream": "origin/feat", "ahead": 2, "behind": 1}
    gone = b"# branch.head feat\0# branch.upstream origin/gone\0? x.py\0"
    assert gitinfo.parse_upstream(gone) == {"upstream": "origin/gone", "ahead": None, "behind": None}
    assert gitinfo.parse_upstream(b"# branch.head feat\0")["upstream"] is None
    assert "upstream" not in gitinfo.parse(out)  # a checkpoint's `git` does not change


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The git subcommands proc.start is asked to run, in order."""
    from rehydrate import proc

    started: list[str] = []
    real = proc.start

    def spy(cmds: Any, **kw: Any) -> proc.Batch:
        started.extend(list(c)[3] for c in cmds)
        return real(cmds, **kw)

    monkeypatch.setattr(proc, "start", spy)
    return started


def test_the_files_spare_processes(pair: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    agent = pair[1]
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    started = _spied(monkeypatch)
    now = _probe(folder, ckpt)
    # HEAD is the checkpoint's: no log; refs read from the files: no for-each-ref; direction's log joins this one
    # round, origin/main being known from the files (user.email read from the config files: no process)
    assert started == ["status", "log"]
    assert (now.known, now.descendant, now.commits) == (True, True, [])
    assert now.refs == {
        "refs/remotes/origin/HEAD": "ref: refs/remotes/origin/main",
        "refs/remotes/origin/main": git(agent, "rev-parse", "origin/main"),
        "refs/heads/main": git(agent, "rev-parse", "main"),
    }
    commit(agent, "x.py", "x\n", "Since")
    started.clear()
    assert [c.subject for c in _probe(folder, ckpt).commits] == ["Since"]
    assert started == ["status", "log", "log"]  # one round: since (with its files), direction's
    (agent / ".git" / "reftable").mkdir()  # refs this probe cannot read itself: git is asked
    started.clear()
    assert _probe(folder, ckpt).refs == now.refs and started == ["status", "for-each-ref", "log"]  # no main
    # line known from the files: direction asks its own round


def test_a_head_that_moved_after_the_files_were_read_is_logged_after_all(
    pair: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = pair[1]
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    stale = gitfiles.files(str(folder))
    commit(agent, "x.py", "x\n", "Between the read and git status")
    monkeypatch.setattr(gitnow, "files", lambda root: stale)
    started = _spied(monkeypatch)
    now = _probe(folder, ckpt)
    # the files said "the checkpoint's HEAD"; git status did not: the log (with its files) asked after all
    assert started == ["status", "log", "log"]
    assert [c.subject for c in now.commits] == ["Between the read and git status"] and now.descendant is True


def test_the_log_of_a_range_is_asked_once_and_kept(
    pair: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log since the checkpoint is asked up to HEAD's hash, and its answer kept in the state's local folder: the
    next probe of the same two commits starts no log and reads the same commits. Another HEAD, a kept file whose
    bytes do not match its stamp, or a HEAD that moved after the files were read: asked again."""
    from rehydrate.store.local import place

    agent = pair[1]
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    kept = Path(place.ensure(place.local_dir(str(folder)))) / gitnow.KEPT
    commit(agent, "x.py", "x\n", "Since")
    started = _spied(monkeypatch)

    def seen() -> tuple[Any, ...]:
        now = _probe(folder, ckpt)
        return now.known, now.descendant, [(c.subject, c.files) for c in now.commits], now.unanswered

    first = seen()
    assert first == (True, True, [("Since", ["x.py"])], {}) and started == ["status", "log", "log"]
    assert kept.is_file()
    started.clear()
    assert seen() == first and started == ["status", "log"]  # direction's log alone
    good = kept.read_bytes()
    data = bytearray(good)
    data[-3] ^= 0x20  # one bit of the kept answer
    kept.write_bytes(bytes(data))
    started.clear()
    assert seen() == first and started == ["status", "log", "log"]
    elsewhere = kept.parent / "planted"
    elsewhere.write_bytes(good)
    kept.unlink()
    kept.symlink_to(elsewhere)  # never followed, neither read nor written through
    os.mkfifo(elsewhere.parent / "fifo")
    for planted in (kept, elsewhere.parent / "fifo"):
        if planted.name == "fifo":
            kept.unlink()
            os.rename(planted, kept)  # a FIFO: never waited on
        started.clear()
        assert seen() == first and started == ["status", "log", "log"]
    assert kept.is_fifo() and elsewhere.read_bytes() == good
    kept.unlink()
    assert seen() == first and kept.is_file()
    commit(agent, "y.py", "y\n", "Then")
    started.clear()
    assert [c.subject for c in _probe(folder, ckpt).commits] == ["Then", "Since"]
    assert started == ["status", "log", "log"]
    stale = gitfiles.files(str(folder))
    commit(agent, "z.py", "z\n", "Between the read and git status")
    monkeypatch.setattr(gitnow, "files", lambda root: stale)
    started.clear()
    now = _probe(folder, ckpt)  # the kept answer is the files' HEAD's: git status names a newer one
    assert [c.subject for c in now.commits] == ["Between the read and git status", "Then", "Since"]
    assert started == ["status", "log", "log"]


def test_a_rename_staged_at_the_checkpoint_is_named_as_git_status_named_it(tmp_path: Path) -> None:
    """The checkpoint records a staged rename by its new name (git status); the log of its commit names that file the
    same way, so the commit holds only what the checkpoint recorded (not the old name as a file it changed)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "old.txt", "the same text, long enough to be found renamed\n", "start")
    folder = _state(repo)
    git(repo, "mv", "old.txt", "new.txt")
    ckpt = _checkpoint(folder)
    assert ckpt["dirty"] == ["new.txt"]
    git(repo, "commit", "-qm", "the rename")
    assert [c.files for c in _probe(folder, ckpt).commits] == [["new.txt"]]


def test_direction_takes_its_answers_from_round_1(
    pair: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With origin/main known from the files, live-state and direction together start one round of processes:
    direction asks nothing more, and its finding is the one its own round would give."""
    from rehydrate.checks import direction, run_all

    agent = pair[1]
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    gitrepos.teammate_merge(pair, "Fix tokenizer (#12)")
    context = _context(folder, ckpt)
    assert context.since is not None
    context.since.seq, context.since.complete = 2, True
    started = _spied(monkeypatch)
    found = run_all(context, [livestate.LiveStateCheck(), direction.DirectionCheck()])
    assert started == ["status", "log"]
    (moved,) = [f for f in found if f.check == "direction"]
    assert moved.status == "degraded" and '"Fix tokenizer (#12)"' in moved.said()


def test_a_commit_of_a_nested_state_folder_alone_changes_no_file_outside_it(tmp_path: Path) -> None:
    """The state folder deep in the work tree (tools/agent/state): --name-only names its files from the top, and
    they are left out of the commit's files; a file beside it (tools/agent/statefile.py) is not in it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "a.py", "a\n", "Start")
    folder = repo / "tools" / "agent" / "state"
    folder.mkdir(parents=True)
    (folder / "00_goal.md").write_text("goal\n")
    ckpt = _checkpoint(folder)
    git(repo, "add", "tools/agent/state")
    git(repo, "commit", "-q", "-m", "the state")
    commit(repo, "tools/agent/statefile.py", "x\n", "Beside it")
    now = _probe(folder, ckpt)
    assert [(c.subject, c.files) for c in now.commits] == [
        ("Beside it", ["tools/agent/statefile.py"]),
        ("the state", []),
    ]


def test_a_git_status_started_before_the_probe_is_the_one_it_reads(
    pair: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session start runs git status before it reads the state (status_started): the probe takes that one from
    context.shared, starts no other, and reads it as its own."""
    agent = pair[1]
    folder = _state(agent)
    ckpt = _checkpoint(folder)
    commit(agent, "calc/lexer.py", "x\n", "Lexer")
    (agent / "notes.md").write_text("dirty\n")
    started = _spied(monkeypatch)
    status = gitnow.status_started(str(folder), None)
    context = _context(folder, ckpt)
    context.shared[gitnow.STATUS_KEY] = status
    now = gitnow.probe(context).result()
    assert started == ["status", "log", "log"]  # the early status, then the probe's round: since's, direction's
    assert gitnow.STATUS_KEY not in context.shared
    assert (now.repo, now.dirty, [c.subject for c in now.commits]) == (True, ["notes.md"], ["Lexer"])


def test_an_early_git_status_s_deadline_counts_from_when_the_probe_takes_it(
    pair: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started before the state was read (and its lock waited for), a git status is given its whole deadline from
    when the probe takes it: the clock moved on 10 s meanwhile, and git's answer is still read, not killed unread."""
    import time

    folder = _state(pair[1])
    context = _context(folder, _checkpoint(folder))
    context.shared[gitnow.STATUS_KEY] = gitnow.status_started(str(folder), None)
    real = time.monotonic
    monkeypatch.setattr(time, "monotonic", lambda: real() + 10)
    now = gitnow.probe(context).result()
    assert (now.repo, now.unanswered) == (True, {})


def test_a_git_status_nobody_took_is_stopped(tmp_path: Path) -> None:
    """No probe took it (no checkpoint to compare with): stop() kills a git that still runs, reaps it and closes its
    pipes (the no_leaked_descriptors fixture watches), at once; after that, or after a wait, stop() does nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(3600)\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    status = gitnow.status_started(str(tmp_path), {**os.environ, "PATH": str(bin_dir)})
    child = status._children[0]
    assert not isinstance(child, proc.Result)
    status.stop()
    with pytest.raises(ChildProcessError):  # reaped: no zombie left
        os.waitpid(child.pid, os.WNOHANG)
    assert child.result is not None and child.result.timed_out
    status.stop()
    with pytest.raises(RuntimeError):
        status.wait(1)


def test_a_prestarted_git_status_is_taken_once_and_otherwise_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """prestart starts one git status per state root; status_started takes it for that root in this process's own
    environment (a given environment gets a git of its own); stop_prestarted stops and reaps what nobody took."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(3600)\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    gitnow.prestart(a)
    early = gitnow._PRESTARTED[a]
    gitnow.prestart(a)  # one per root
    gitnow.prestart(b)
    assert list(gitnow._PRESTARTED) == [a, b] and gitnow._PRESTARTED[a] is early
    other = gitnow.status_started(a, {**os.environ})  # not this process's own environment: not the prestarted one
    assert other is not early
    assert gitnow.status_started(a, os.environ) is early
    again = gitnow.status_started(a, None)  # taken once: a git of its own
    assert again is not early
    children = [gitnow._PRESTARTED[b]._children[0], early._children[0], other._children[0], again._children[0]]
    gitnow.stop_prestarted()
    assert not gitnow._PRESTARTED
    for batch in (early, other, again):
        batch.stop()
    for child in children:
        with pytest.raises(ChildProcessError):  # each reaped: no zombie left
            os.waitpid(child.pid, os.WNOHANG)
