"""Scenarios for live-state, direction and gh together, each a real state (State.init, a real checkpoint, the WAL read
back by store.wal.since.find) in the agent's clone of a real bare origin (tests/fakes/gitrepos.py), with the fake gh on
a PATH of one folder: never a network, never a real gh. Each gives its ledger (checks.ledger.summarize)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.fakes import gh, gitrepos
from tests.fakes.gitrepos import commit, git

from rehydrate.checks import Context, Finding, run_all
from rehydrate.checks.direction import DirectionCheck
from rehydrate.checks.ledger import Ledger, summarize
from rehydrate.checks.livestate import LiveStateCheck
from rehydrate.store.state import State
from rehydrate.store.wal import since as since_mod
from rehydrate.text import named

WAIT = "wait for #12, then binding powers"


class Proj:
    """The agent's clone on feat (tracking origin/feat), a state in it with one checkpoint, the teammate's clone."""

    def __init__(self, tmp: Path, next_step: str = "binding powers") -> None:
        self.tmp = tmp
        self.pair = gitrepos.remote_pair(tmp)
        self.agent = self.pair[1]
        self.state, _ = State.init(self.agent / "state", "Ship the parser", "all tests pass")
        self.state.checkpoint(done="wrote the lexer", next=next_step)
        self.head = git(self.agent, "rev-parse", "HEAD")

    def ledger(self, path: str, scope: str = "recover", config: dict[str, Any] | None = None) -> tuple[Ledger, Context]:
        with self.state.reading() as snap:
            since = since_mod.find(self.state, snap)
        assert since.complete and since.git is not None and since.git["head"] == self.head
        env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
        context = Context(self.state, None, scope=scope, since=since, config=config, env={**env, "PATH": path})
        found = run_all(context, [LiveStateCheck(), DirectionCheck()])
        deferred = context.shared.get("deferred", [])
        return summarize(found, checkpoint_next=since.next, goal_present=True, deferred=deferred), context


def _lines(ledger: Ledger) -> list[tuple[str, str, str]]:
    return [(f.check, f.status, f.said()) for f in ledger.findings]


def _of(ledger: Ledger, check: str, status: str) -> list[Finding]:
    return [f for f in ledger.findings if f.check == check and f.status == status]


def _after_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 2))


def test_all_clean_is_recovered_and_says_where_it_looked(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    ledger, _ = p.ledger(gh.bin_path(tmp_path, "fake", current=None))
    assert ledger.confidence == "recovered" and ledger.said(ledger.next) == "binding powers"
    short = p.head[:7]
    assert _lines(ledger) == [
        ("live-state", "ok", f"HEAD {short} on feat is checkpoint 2's (git status, git log {short}..HEAD)"),
        (
            "live-state",
            "ok",
            "feat is 0 ahead of origin/feat and 0 behind (git status --branch, as of the clone: never fetched)",
        ),
        ("live-state", "n/a", "no pull request for feat (gh pr view): CI not looked at"),
        (
            "direction",
            "ok",
            "origin/main: no commit by others since checkpoint 2 that HEAD lacks (as of the clone: never fetched;"
            " git log)",
        ),
    ]


def test_a_teammate_merged_the_fix_the_checkpoint_waited_for(tmp_path: Path) -> None:
    p = Proj(tmp_path, WAIT)
    sha = gitrepos.teammate_merge(p.pair, "Fix tokenizer (#12)")
    ledger, _ = p.ledger(gh.bin_path(tmp_path / "nogh"))
    (moved,) = _of(ledger, "direction", "degraded")
    assert f'{sha[:7]} "Fix tokenizer (#12)" ("Ann")' in moved.said()
    assert ledger.degraded == ["direction"]
    assert (
        ledger.next
        == "read them (git log HEAD..origin/main) before going on: one may be what checkpoint 2 was waiting for"
    )
    merged = {"number": 12, "title": "Fix tokenizer", "state": "MERGED", "mergedAt": _after_now(), "url": "u"}
    ledger, _ = p.ledger(gh.bin_path(tmp_path / "fake", "fake", prs={"12": merged}))
    assert ledger.degraded == ["live-state", "direction"]
    (pr,) = _of(ledger, "live-state", "degraded")
    assert pr.said().startswith('PR #12 "Fix tokenizer", named in checkpoint 2\'s next step, was merged at ')
    assert ledger.said(ledger.next) == f'#12 is merged: update (git pull) and go on with "{WAIT}"'


def test_head_moved_by_a_rebase(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    gitrepos.rebase_head(p.agent)
    ledger, _ = p.ledger(gh.bin_path(tmp_path))
    (head,) = _of(ledger, "live-state", "degraded")[:1]
    assert "is not a descendant of checkpoint 2's" in head.said() and '(reflog: "rebase' in head.said()
    assert ledger.said(ledger.next) == f"check that checkpoint 2's work survived: git diff {p.head[:7]} HEAD"


def test_a_branch_switched(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    gitrepos.switch(p.agent, "main")
    ledger, _ = p.ledger(gh.bin_path(tmp_path))
    assert 'checkpoint 2 was on feat (reflog: "checkout: moving from feat to main")' in ledger.findings[0].said()
    assert ledger.said(ledger.next) == "git switch feat, or confirm the switch was meant"


def test_dirty_files_not_in_the_checkpoint(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    (p.agent / "notes.md").write_text("x\n")
    (p.agent / "app.py").write_text("x\n")
    ledger, _ = p.ledger(gh.bin_path(tmp_path))
    (dirty,) = _of(ledger, "live-state", "degraded")
    assert dirty.said() == "2 file(s) changed now that checkpoint 2 did not record: app.py, notes.md (git status)"
    assert ledger.said(ledger.next) == "look at git status and git diff -- app.py notes.md: no checkpoint recorded them"


def test_own_commits_since_the_checkpoint(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    commit(p.agent, "calc/parser.py", "def parse(): return 1\n", "Binding powers, first cut")
    commit(p.agent, "tests/test_parser.py", "def test(): ...\n", "Test binding powers")
    ledger, _ = p.ledger(gh.bin_path(tmp_path))
    (own,) = _of(ledger, "live-state", "degraded")
    assert own.said().startswith("2 commit(s) on feat since checkpoint 2: ")
    assert '"Test binding powers"' in own.said() and '"Binding powers, first cut"' in own.said()
    assert ledger.degraded == ["live-state"]  # one's own commits are not others' on the main line


def test_upstream_behind(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-b", "feat", str(tmp_path / "origin.git"), str(other))
    commit(other, "y.py", "y\n", "From another clone")
    git(other, "push", "-q", "origin", "feat")
    git(p.agent, "fetch", "-q")
    ledger, _ = p.ledger(gh.bin_path(tmp_path / "nogh"))
    assert ledger.degraded == ["live-state"]
    assert ledger.said(ledger.next) == "git pull: origin/feat has 1 commit(s) HEAD lacks"


def test_a_hanging_gh_is_skipped_and_gone(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    path = gh.bin_path(tmp_path, "fake", hang=True)
    ledger, _ = p.ledger(path, config={"gh_timeout": 1})
    (skipped,) = _of(ledger, "live-state", "skipped")
    assert skipped.said() == "gh pr view did not answer within 1 s: the pull request and CI of feat not looked at"
    assert (
        ledger.confidence == "degraded (live-state)" and ledger.said(ledger.next) == "binding powers"
    )  # skipped: no new step
    with pytest.raises(ProcessLookupError):
        os.kill(int((Path(path) / "gh.pid").read_text()), 0)


def test_gh_not_signed_in_is_recovered(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    ledger, _ = p.ledger(gh.bin_path(tmp_path, "fake", auth=False))
    assert ledger.confidence == "recovered"
    assert [f.said() for f in _of(ledger, "live-state", "n/a")] == [
        "gh is not signed in (gh pr view: exit 4, authentication required): pull request and CI not looked at"
    ]


def test_red_ci_degrades_recover_and_is_deferred_by_the_hook(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    red = {"number": 7, "title": "Binding powers", "state": "OPEN", "headRefName": "feat"}
    red["statusCheckRollup"] = [{"name": "test", "conclusion": "FAILURE"}, {"name": "lint", "conclusion": "SUCCESS"}]
    path = gh.bin_path(tmp_path, "fake", current=red)
    ledger, _ = p.ledger(path)
    assert ledger.degraded == ["live-state"]
    assert ledger.said(ledger.next) == 'look at the failing checks first (gh pr checks 7): "test"'
    hook, _ = p.ledger(path, scope="hook")
    assert hook.confidence == "recovered" and hook.next == "binding powers"
    assert hook.deferred == "not run at session start: PR and CI (gh): `rehydrate recover` runs them"
    assert len(gh.calls(Path(path))) == 1  # recover's call only: the hook never ran gh


def test_an_unknown_checkpoint_commit_is_degraded_with_a_clear_next(tmp_path: Path) -> None:
    p = Proj(tmp_path)
    p.head = commit(p.agent, "calc/parser.py", "def parse(): return 2\n", "Never pushed")
    p.state.checkpoint(done="parser", next="binding powers")
    # a fresh clone of the origin takes the place of the agent's, the state folder carried over: the commit is gone
    os.rename(p.agent, tmp_path / "old")
    git(tmp_path, "clone", "-q", "-b", "feat", str(tmp_path / "origin.git"), str(p.agent))
    os.rename(tmp_path / "old" / "state", p.agent / "state")
    ledger, _ = p.ledger(gh.bin_path(tmp_path))
    head = ledger.findings[0]
    assert (head.check, head.status) == ("live-state", "degraded")
    assert head.said().startswith(f"checkpoint 3's commit {p.head[:7]} is not in this repository (HEAD ")
    assert ledger.said(ledger.next) == (
        f"find checkpoint 3's commit {p.head[:7]} before its next step: git fetch, then git log --all and git"
        " reflog; if it is gone, check its work by hand"
    )


HOSTILE = ["--upload-pack=touch x", "-c core.pager=touch x", "--output=x", "HEAD..main --exec=touch x", "-"]


def _logging_git(tmp_path: Path) -> tuple[str, Path]:
    """A PATH of one folder whose git logs each argv (JSON lines) and runs the real git."""
    bin_dir = tmp_path / "logbin"
    bin_dir.mkdir()
    real = os.path.realpath(shutil.which("git") or "git")
    log = tmp_path / "git.argv"
    script = (
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"with open({str(log)!r}, 'a') as f: f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"os.execv({real!r}, ['git', *sys.argv[1:]])\n"
    )
    (bin_dir / "git").write_text(script)
    (bin_dir / "git").chmod(0o755)
    return str(bin_dir), log


@pytest.mark.parametrize("value", HOSTILE)
def test_a_recorded_branch_or_path_never_becomes_an_argv_option(tmp_path: Path, value: str) -> None:
    p = Proj(tmp_path)
    gitrepos.switch(p.agent, "main")
    path, log = _logging_git(tmp_path)
    since = since_mod.Since()
    since.seq, since.ts, since.next = 2, value, "binding powers"
    since.git = {"head": p.head, "branch": value, "dirty": [value, "--output=x"]}
    view: Any = SimpleNamespace(root=str(p.agent / "state"), actor="agent")
    context = Context(view, None, scope="recover", since=since, env={**os.environ, "PATH": path})
    found = run_all(context, [LiveStateCheck(), DirectionCheck()])
    argvs = [json.loads(line) for line in log.read_text().splitlines()]
    words = ("touch", "upload-pack", "--output", "core.pager", "--exec")
    assert argvs and not any(arg == value or any(w in arg for w in words) for argv in argvs for arg in argv)
    assert not (p.agent / "state" / "x").exists() and not (p.agent / "x").exists()
    head = found[0]
    assert head.status == "degraded" and f"checkpoint 2 was on {named(value)}" in head.said()
    assert head.said_next() == (
        "switch back to the branch checkpoint 2 recorded (git reflog shows it), or confirm the switch was meant"
    )


def test_a_wal_longer_than_the_hook_reads_back_is_skipped_not_clean(tmp_path: Path) -> None:
    """More than since.HOOK_BYTES of records after the checkpoint (a pulled one, or a Gemini precompress on every
    request): the hook does not reach the checkpoint's record, so its HEAD is unknown, not absent. live-state,
    direction and recency are skipped (never n/a, never a clean `recovered`); recover reads further and finds the
    commit made since."""
    from rehydrate.checks.recency import RecencyCheck

    p = Proj(tmp_path)
    commit(p.agent, "calc/parser.py", "x = 1\n", "Parse prefix operators")
    for _ in range(320):
        p.state.record("compaction", {"phase": "pre", "note": "x" * 14_000})
    path = gh.bin_path(tmp_path / "nogh")
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
    for scope, limit in (("hook", since_mod.HOOK_BYTES), ("recover", since_mod.RECOVER_BYTES)):
        with p.state.reading() as snap:
            since = since_mod.find(p.state, snap, limit)
        assert since.complete is (scope == "recover") and since.seq == 2
        context = Context(p.state, None, scope=scope, since=since, env={**env, "PATH": path})
        found = run_all(context, [RecencyCheck(), LiveStateCheck(), DirectionCheck()])
        ledger = summarize(found, checkpoint_next=since.next, goal_present=True)
        if scope == "hook":
            assert ledger.degraded == ["recency", "live-state", "direction"], _lines(ledger)
            (head,) = _of(ledger, "live-state", "skipped")
            assert "checkpoint 2's record was not reached" in head.said()
            assert "hold no checkpoint" in head.said()
        else:
            assert ledger.degraded == ["live-state"], _lines(ledger)
            assert "Parse prefix operators" in _of(ledger, "live-state", "degraded")[0].said()


def test_a_commit_made_before_the_checkpoint_but_pushed_after_it_is_news(tmp_path: Path) -> None:
    """The teammate committed an hour before the checkpoint (its dates say so) and pushed after it: it is on
    origin/main now and HEAD lacks it, so direction names it (no --since on the commit's dates)."""
    p = Proj(tmp_path, WAIT)
    _, _, teammate = p.pair
    git(teammate, "pull", "-q", "--ff-only", who=gitrepos.TEAMMATE)
    (teammate / "calc").mkdir(exist_ok=True)
    (teammate / "calc" / "fix.py").write_text("x = 2\n")
    git(teammate, "add", "calc/fix.py", who=gitrepos.TEAMMATE)
    old = "2001-02-03T04:05:06Z"
    git(teammate, "commit", "-q", "-m", "Second fix (#13)", who=gitrepos.TEAMMATE, GIT_COMMITTER_DATE=old)
    git(teammate, "push", "-q", "origin", "main", who=gitrepos.TEAMMATE)
    git(p.agent, "fetch", "-q", "origin")
    ledger, _ = p.ledger(gh.bin_path(tmp_path / "nogh"))
    (moved,) = _of(ledger, "direction", "degraded")
    assert '"Second fix (#13)"' in moved.said()


def test_a_dangling_origin_head_falls_back_to_the_main_line_that_exists(tmp_path: Path) -> None:
    """origin/HEAD still names origin/master after the remote renamed it to main (and a fetch --prune): direction
    compares with origin/main rather than being skipped for a bad revision."""
    p = Proj(tmp_path)
    git(p.agent, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/master")
    ledger, _ = p.ledger(gh.bin_path(tmp_path / "nogh"))
    (line,) = [f for f in ledger.findings if f.check == "direction"]
    assert (line.status, line.said().split(":")[0]) == ("ok", "origin/main"), _lines(ledger)


def test_committing_the_checkpoint_and_its_own_files_is_no_news(tmp_path: Path) -> None:
    """The usual flow: edit, checkpoint (it records the changed file), then commit everything, state/ included.
    That commit is the checkpoint's own work: live-state ok and the next step kept. A later commit of another file
    is news, and only it is named."""
    p = Proj(tmp_path)
    (p.agent / "calc").mkdir(exist_ok=True)
    (p.agent / "calc" / "lexer.py").write_text("x = 1\n")
    p.state.checkpoint(done="the lexer", next="binding powers")
    git(p.agent, "add", "-A")
    git(p.agent, "commit", "-q", "-m", "the lexer, with its checkpoint")
    ledger, _ = p.ledger(gh.bin_path(tmp_path / "nogh"))
    assert ledger.confidence == "recovered" and ledger.said(ledger.next) == "binding powers", _lines(ledger)
    (own,) = [f for f in ledger.findings if "commit(s)" in f.said()]
    assert own.status == "ok" and '"the lexer, with its checkpoint"' in own.said()
    commit(p.agent, "calc/parser.py", "y = 1\n", "Parse prefix operators")
    ledger, _ = p.ledger(gh.bin_path(tmp_path / "nogh"))
    (news,) = _of(ledger, "live-state", "degraded")
    assert news.said().startswith("1 commit(s) on feat since checkpoint 3: ") and "Parse prefix" in news.said()
    assert "with its checkpoint" not in news.said()
