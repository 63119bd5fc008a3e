"""live-state: git now against the checkpoint, one finding per aspect, on real repositories (tests/fakes/gitrepos.py).
Every ok or n/a finding names where it looked."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.fakes import gh as fakes_gh
from tests.fakes import gitrepos
from tests.fakes.gitrepos import commit, git

from rehydrate.checks import Context, Finding, confidence, livestate, run_all
from rehydrate.checks.livestate import LiveStateCheck
from rehydrate.store import gitinfo
from rehydrate.store.since import Since


def _state(repo: Path) -> Path:
    folder = repo / "state"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "00_goal.md").write_text("goal\n")
    return folder


NO_GH = "gh not installed (looked for gh on PATH): pull request and CI not looked at"


def _run(folder: Path, ckpt: dict[str, Any] | None, seq: int | None = 42, **env: str) -> list[Finding]:
    """live-state in hook scope, on a PATH of one folder holding git and no gh (unless env gives a PATH)."""
    since = Since()
    since.git, since.seq = ckpt, seq
    view: Any = SimpleNamespace(root=str(folder), actor="agent")
    path = env.pop("PATH", None) or fakes_gh.bin_path(folder.parent.parent / "nogh")
    context = Context(view, None, since=since, env={**os.environ, **env, "PATH": path})
    return run_all(context, [LiveStateCheck()])


def _lines(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.status, f.message) for f in findings]


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return gitrepos.remote_pair(tmp_path)[1]


@pytest.fixture
def ckpt(agent: Path) -> dict[str, Any]:
    return gitinfo.snapshot(str(_state(agent)))


def test_nothing_since_the_checkpoint_is_ok_and_says_where_it_looked(agent: Path, ckpt: dict[str, Any]) -> None:
    found = _run(agent / "state", ckpt)
    assert _lines(found) == [
        ("ok", f"HEAD {ckpt['head'][:7]} on feat is checkpoint 42's (git status, git log {ckpt['head'][:7]}..HEAD)"),
        ("ok", "feat is 0 ahead of origin/feat and 0 behind (git status --branch, as of the clone: never fetched)"),
        ("n/a", NO_GH),
    ]
    assert confidence(found) == "recovered"


def test_own_commits_since_are_named_and_read_first(agent: Path, ckpt: dict[str, Any]) -> None:
    for i in range(7):
        commit(agent, f"f{i}.py", "x\n", f"Step {i}")
    head, *rest = _run(agent / "state", ckpt)
    assert head.status == "degraded" and head.message.startswith("7 commit(s) on feat since checkpoint 42: ")
    assert '"Step 6"' in head.message and '"Step 2"' in head.message and '"Step 1"' not in head.message
    assert head.message.endswith("and 2 more")
    assert (
        head.next_action
        == f"read the 7 commit(s) since checkpoint 42 (git log {ckpt['head'][:7]}..HEAD) before its next step"
    )
    assert [f.status for f in rest] == ["ok", "n/a"]  # 7 ahead of the upstream: not behind; no gh


def test_a_rebase_quotes_the_reflog_and_asks_for_a_diff(agent: Path, ckpt: dict[str, Any]) -> None:
    gitrepos.rebase_head(agent)
    head = _run(agent / "state", ckpt)[0]
    assert head.status == "degraded" and "is not a descendant of checkpoint 42's" in head.message
    assert "(reflog: rebase" in head.message
    assert head.next_action == f"check that checkpoint 42's work survived: git diff {ckpt['head'][:7]} HEAD"


def test_a_branch_switch(agent: Path, ckpt: dict[str, Any]) -> None:
    gitrepos.switch(agent, "main")
    head = _run(agent / "state", ckpt)[0]
    assert head.status == "degraded"
    assert "checkpoint 42 was on feat (reflog: checkout: moving from feat to main)" in head.message
    assert head.next_action == "git switch feat, or confirm the switch was meant"


def test_dirty_files_the_checkpoint_did_not_record(agent: Path) -> None:
    (agent / "old.py").write_text("dirty before\n")
    ckpt = gitinfo.snapshot(str(_state(agent)))
    (agent / "notes.md").write_text("x\n")
    (agent / "app.py").write_text("x\n")
    (agent / "state" / "20_handoff.md").write_text("the state's own files are not work\n")
    found = _run(agent / "state", ckpt)
    dirty = [f for f in found if "changed now" in f.message]
    assert len(dirty) == 1 and dirty[0].status == "degraded"
    assert dirty[0].message == "2 file(s) changed now that checkpoint 42 did not record: app.py, notes.md (git status)"
    assert dirty[0].next_action is not None and "git diff -- app.py notes.md" in dirty[0].next_action


def test_behind_its_upstream_after_a_fetch(agent: Path, ckpt: dict[str, Any], tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "feat", str(tmp_path / "origin.git"), str(other))
    commit(other, "y.py", "y\n", "From another clone")
    git(other, "push", "-q", "origin", "feat")
    git(agent, "fetch", "-q")
    up = _run(agent / "state", ckpt)[-2]
    assert up.status == "degraded" and up.message.startswith(
        "feat is 0 ahead of origin/feat and 1 behind (git status --branch, as of the last fetch, "
    )
    assert up.next_action == "git pull: origin/feat has 1 commit(s) HEAD lacks"


def test_no_upstream_is_not_applicable(agent: Path, ckpt: dict[str, Any]) -> None:
    git(agent, "branch", "-q", "--unset-upstream")
    up = _run(agent / "state", ckpt)[-2]
    assert (up.status, up.message) == (
        "n/a",
        "feat has no upstream (git status --branch): ahead or behind not looked at",
    )


def test_an_unknown_checkpoint_commit(agent: Path) -> None:
    head = _run(_state(agent), {"head": "ab" * 20, "branch": "feat", "dirty": []})[0]
    assert head.status == "degraded" and "checkpoint 42's commit ababab" in head.message


def test_not_a_repository_then_or_now(tmp_path: Path) -> None:
    folder = _state(tmp_path / "plain")
    found = _run(folder, None, GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert _lines(found) == [("n/a", f"not a git repository, at checkpoint 42 or now (git status in {folder})")]


def test_no_checkpoint_known_gives_no_finding_and_starts_no_git(tmp_path: Path) -> None:
    folder = _state(tmp_path / "plain")
    assert _run(folder, None, seq=None) == []
    view: Any = SimpleNamespace(root=str(folder), actor="agent")
    context = Context(view, None)
    LiveStateCheck().start(context)
    assert context.shared == {}


def test_a_repository_that_is_gone(tmp_path: Path) -> None:
    folder = _state(tmp_path / "plain")
    found = _run(folder, {"head": "ab" * 20, "branch": "feat"}, GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert [f.status for f in found] == ["skipped"] and "checkpoint 42 recorded HEAD ababab" in found[0].message


def test_a_hanging_git_is_skipped_not_clean(
    agent: Path, ckpt: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!{sys.executable}\nimport time\ntime.sleep(3600)\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setattr(livestate, "HOOK_DEADLINE", 0.5)
    found = _run(agent / "state", ckpt, PATH=str(bin_dir))
    assert _lines(found) == [
        (
            "skipped",
            "git status did not answer within 0.5 s: HEAD, branch and changed files since checkpoint 42 not looked at",
        )
    ]
    assert confidence(found) == "degraded (live-state)"


def test_the_probe_is_started_once_and_shared(agent: Path, ckpt: dict[str, Any]) -> None:
    since = Since()
    since.git, since.seq = ckpt, 42
    view: Any = SimpleNamespace(root=str(agent / "state"), actor="agent")
    context = Context(view, None, since=since)
    check = LiveStateCheck()
    check.start(context)
    probe = context.shared["gitnow"]
    check.run(context)
    assert context.shared["gitnow"] is probe and probe.result() is probe.result()


def test_a_dirty_path_is_one_shell_word_in_the_suggested_diff(agent: Path, ckpt: dict[str, Any]) -> None:
    (agent / "a b.py").write_text("x\n")
    (agent / "it's.py").write_text("x\n")
    dirty = next(f for f in _run(agent / "state", ckpt) if "changed now" in f.message)
    assert dirty.next_action == (
        "look at git status and git diff -- 'a b.py' 'it'\\''s.py': no checkpoint recorded them"
    )
