"""direction: commits by others on the main line since the checkpoint, on real repositories (tests/fakes/gitrepos.py):
local refs only, nothing fetches."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.fakes import gitrepos
from tests.fakes.gitrepos import TEAMMATE, commit, git

from rehydrate.checks import Context, Finding, run_all
from rehydrate.checks.direction import DirectionCheck
from rehydrate.checks.git import probe as gitnow
from rehydrate.checks.livestate import LiveStateCheck
from rehydrate.store.git import info as gitinfo
from rehydrate.store.wal.since import Since


def _run(agent: Path, ckpt: dict[str, Any] | None, ts: str | None = None, **env: str) -> list[Finding]:
    since = Since()
    since.git, since.seq, since.ts = ckpt, 42, ts
    view: Any = SimpleNamespace(root=str(agent / "state"), actor="agent")
    context = Context(view, None, since=since, env={**os.environ, **env} if env else None)
    return [f for f in run_all(context, [LiveStateCheck(), DirectionCheck()]) if f.check == "direction"]


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    pair = gitrepos.remote_pair(tmp_path)
    (pair[1] / "state").mkdir()
    return pair


def _ckpt(agent: Path) -> dict[str, Any]:
    return gitinfo.snapshot(str(agent / "state"))


def test_nothing_moved_on_the_main_line(pair: tuple[Path, Path, Path]) -> None:
    ckpt = _ckpt(pair[1])
    (found,) = _run(pair[1], ckpt)
    assert (found.status, found.said()) == (
        "ok",
        "origin/main: no commit by others since checkpoint 42 that HEAD lacks"
        " (as of the clone: never fetched; git log)",
    )


def test_a_teammate_merged_what_the_checkpoint_waited_for(pair: tuple[Path, Path, Path]) -> None:
    ckpt = _ckpt(pair[1])
    sha = gitrepos.teammate_merge(pair, "Fix tokenizer (#12)")
    (found,) = _run(pair[1], ckpt)
    assert found.status == "degraded"
    assert found.said().startswith(
        "origin/main moved: 1 commit(s) by others since checkpoint 42 that HEAD lacks: "
        f'{sha[:7]} "Fix tokenizer (#12)" ("Ann") (as of the last fetch, '
    )
    assert found.said_next() == (
        "read them (git log HEAD..origin/main) before going on: one may be what checkpoint 42 was waiting for"
    )


def test_own_commits_on_the_main_line_are_counted_not_listed(pair: tuple[Path, Path, Path]) -> None:
    agent = pair[1]
    ckpt = _ckpt(agent)
    git(agent, "config", "user.email", "ann@example.com")  # the teammate's commits are now "yours"
    gitrepos.teammate_merge(pair, "Mine after all")
    (found,) = _run(agent, ckpt)
    assert found.status == "ok" and "; 1 of your own (" in found.said()


def test_the_checkpoint_time_never_hides_a_commit_head_lacks(pair: tuple[Path, Path, Path]) -> None:
    """Commit dates say when a commit was made, not when it reached origin/main: the walk is bounded by HEAD and
    the checkpoint's commit only, so a checkpoint stamped after every commit (or a forged stamp) hides nothing."""
    ckpt = _ckpt(pair[1])
    gitrepos.teammate_merge(pair, "Old news")
    (found,) = _run(pair[1], ckpt, ts="2099-01-01T00:00:00.000Z")
    assert found.status == "degraded" and '"Old news"' in found.said()


def test_a_local_main_line_when_there_is_no_origin(tmp_path: Path) -> None:
    repo = tmp_path / "solo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "a.py", "a\n", "Start")
    git(repo, "switch", "-q", "-c", "feat")
    (repo / "state").mkdir()
    ckpt = _ckpt(repo)
    git(repo, "switch", "-q", "main")
    sha = commit(repo, "b.py", "b\n", "Hotfix on main", who=TEAMMATE)
    git(repo, "switch", "-q", "feat")
    (found,) = _run(repo, ckpt)
    assert found.status == "degraded" and f'{sha[:7]} "Hotfix on main" ("Ann") (a local branch)' in found.said()


def test_no_main_line(tmp_path: Path) -> None:
    repo = tmp_path / "solo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    commit(repo, "a.py", "a\n", "Start")
    (repo / "state").mkdir()
    (found,) = _run(repo, _ckpt(repo))
    assert (found.status, found.said()) == (
        "n/a",
        "no main line to compare (git for-each-ref: looked for origin/HEAD, origin/main, origin/master, main, master)",
    )


def test_on_main_itself_the_local_main_is_no_main_line(tmp_path: Path) -> None:
    repo = tmp_path / "solo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "a.py", "a\n", "Start")
    (repo / "state").mkdir()
    (found,) = _run(repo, _ckpt(repo))
    assert (found.status, found.said()) == (
        "n/a",
        "HEAD on main is the main line; no remote one (git for-each-ref: origin/HEAD, origin/main, origin/master)",
    )


def test_a_hanging_git_is_skipped(
    pair: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ckpt = _ckpt(pair[1])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!{sys.executable}\nimport time\ntime.sleep(3600)\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setattr(gitnow, "HOOK_DEADLINE", 0.5)
    (found,) = _run(pair[1], ckpt, PATH=str(bin_dir))
    assert (found.status, found.said()) == (
        "skipped",
        "git status did not answer within 0.5 s: the main line not looked at",
    )


def test_no_answer_from_for_each_ref_is_skipped_not_no_main_line(pair: tuple[Path, Path, Path], tmp_path: Path) -> None:
    ckpt = _ckpt(pair[1])
    gitrepos.teammate_merge(pair, "Fix tokenizer (#12)")
    bin_dir = tmp_path / "failing-refs"
    bin_dir.mkdir()
    real = os.path.realpath(shutil.which("git") or "git")
    (bin_dir / "git").write_text(
        f"#!{sys.executable}\nimport os, sys\n"
        "if 'for-each-ref' in sys.argv:\n    sys.stderr.write('fatal: simulated\\n')\n    sys.exit(128)\n"
        f"os.execv({real!r}, ['git', *sys.argv[1:]])\n"
    )
    (bin_dir / "git").chmod(0o755)
    (pair[1] / ".git" / "reftable").mkdir()  # refs the probe cannot read from the files: for-each-ref is asked
    (found,) = _run(pair[1], ckpt, PATH=str(bin_dir))
    assert (found.status, found.said()) == (
        "skipped",
        'git for-each-ref exit 128: "fatal: simulated": the main line not looked at',
    )
