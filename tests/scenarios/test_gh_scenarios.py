"""The gh scenarios of the recovery corpus (plan 3.2: 7, 20, 21 and 22): a real project with its state through the
real CLI and a fake `gh` on a PATH of one folder (tests/fakes/gh.py: canned answers, argv logged, never a network);
`rehydrate recover --json` asks gh (checks/git/gh.py), then the SessionStart hook of claude, codex and gemini, which
never runs gh: its ledger is recover's without gh's lines, and it says that `recover` runs them (the deferred note).

Each scenario also checks that nothing could reach GitHub: the fake was run with exactly the argv the check should
run, and GH_TOKEN and GITHUB_TOKEN (set in this process for the test) never reached a command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fakes import gh, gitrepos
from scenarios.build import HARNESSES, NEXT, Expect, Proj, _by_gh, assert_same_ledger, ledger_of, project, spelled
from scenarios.test_scenarios import CLEAN, WAITING, _files, _restore, check_recover

TIMEOUT = 60  # a generous bound on recover: only a hang reaches it (never a timing assertion)
DEFERRED = "not run at session start: PR and CI (gh): `rehydrate recover` runs them"
CURRENT = ["pr", "view", "--json", "number,title,state,mergedAt,closedAt,url,headRefName,statusCheckRollup"]
NAMED_12 = ["pr", "view", "12", "--json", "number,title,state,mergedAt,closedAt,url"]
GH_ENV = {"GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1", "GH_PAGER": "cat"}
LOWERING = ("degraded", "failed", "skipped")


@dataclass
class GhScenario:
    """A gh scenario: how to build it, what recover says (Expect), the argv the fake must have been run with (in
    any order: gh runs in parallel), and what every hook's ledger says: its confidence and words its next holds."""

    name: str
    build: Callable[[Path], Proj]
    expect: Expect
    calls: list[list[str]]
    hook_confidence: str
    hook_next_has: list[str] = field(default_factory=list)
    checkpoint_next: str = NEXT
    hangs: bool = False
    marks: tuple[Any, ...] = (pytest.mark.slow,)


# ---------------------------------------------------------------------------------------------------- builders


def _fake(proj: Proj, **canned: Any) -> None:
    """Puts the fake gh, with these canned answers, in the folder already on the project's PATH."""
    gh.install_fake_gh(Path(proj.env["PATH"]), **canned)


def _stamp(proj: Proj, seconds: float) -> str:
    """A time `seconds` after the checkpoint, as gh gives it (`YYYY-MM-DDTHH:MM:SSZ`)."""
    return proj.after(seconds)[:19] + "Z"


def fix_merged(tmp: Path) -> Proj:
    """Scenario 6 (a teammate merged "Fix tokenizer (#12)" on origin/main, the checkpoint waits for #12) and gh
    reports #12 merged after the checkpoint; the branch feat has no pull request."""
    pair = gitrepos.remote_pair(tmp)
    proj = project(tmp, root=pair[1])
    proj.checkpoint(next=WAITING)
    gitrepos.teammate_merge(pair, "Fix tokenizer (#12)")
    at = _stamp(proj, 60)
    pr = {"number": 12, "title": "Fix tokenizer", "state": "MERGED", "mergedAt": at, "closedAt": at}
    _fake(proj, prs={"12": {**pr, "url": "https://example.invalid/pull/12"}})
    return proj


RED = {
    "number": 7,
    "title": "Binding powers",
    "state": "OPEN",
    "mergedAt": None,
    "closedAt": None,
    "url": "https://example.invalid/pull/7",
    "headRefName": "feat",
    "statusCheckRollup": [
        {"name": "lint", "conclusion": "SUCCESS"},
        {"name": "test", "conclusion": "FAILURE"},
    ],
}


def red_ci(tmp: Path) -> Proj:
    """The agent's clone on feat (tracking origin/feat); its pull request #7 is open and one of its checks failed."""
    proj = project(tmp, root=gitrepos.remote_pair(tmp)[1])
    _fake(proj, current=RED)
    return proj


def gh_hangs(tmp: Path) -> Proj:
    """gh never answers (the fake writes gh.pid and sleeps); state/config.json gives gh 3 s (time enough for the
    fake to start and write gh.pid on a loaded machine)."""
    proj = project(tmp)
    (proj.root / "state" / "config.json").write_text('{"gh_timeout": 3}')
    _fake(proj, hang=True)
    return proj


def gh_missing(tmp: Path) -> Proj:
    """No gh on PATH (a folder holding git only): recover and the hooks give the same n/a line."""
    return project(tmp, path=gh.bin_path(tmp))


def signed_out(tmp: Path) -> Proj:
    """gh is installed but not signed in: it exits 4 (gh's "authentication required")."""
    proj = project(tmp)
    _fake(proj, auth=False)
    return proj


# ---------------------------------------------------------------------------------------------------- the table

SCENARIOS = [
    GhScenario(
        "7-fix-merged",
        fix_merged,
        Expect(
            1,
            "degraded",
            ["live-state", "direction"],
            {**CLEAN, "recency": {"n/a"}, "live-state": {"ok", "n/a", "degraded"}, "direction": {"degraded"}},
            {
                "live-state": ['PR #12 "Fix tokenizer", named in checkpoint', "next step, was merged at"],
                "direction": ["Fix tokenizer (#12)", "origin/main", "Ann"],
            },
            # the plan's "update and go on with binding powers": the code quotes the checkpoint's whole next step
            next_has=["#12 is merged: update (git pull) and go on with", WAITING],
        ),
        [CURRENT, NAMED_12],
        "degraded (direction)",
        ["git log HEAD..origin/main"],
        checkpoint_next=WAITING,
    ),
    GhScenario(
        "20-red-ci",
        red_ci,
        Expect(
            1,
            "degraded",
            ["live-state"],
            {**CLEAN, "recency": {"n/a"}, "live-state": {"ok", "degraded"}, "direction": {"ok"}},
            {"live-state": ['PR #7 "Binding powers" (feat) is open and its CI is red: "test" (gh pr view)']},
            next_has=['look at the failing checks first (gh pr checks 7): "test"'],
            next_not=[NEXT],
        ),
        [CURRENT],
        "recovered",
        [NEXT],
    ),
    GhScenario(
        "21-gh-hangs",
        gh_hangs,
        Expect(
            1,
            "degraded",
            ["live-state"],
            {**CLEAN, "recency": {"n/a"}, "live-state": {"ok", "n/a", "skipped"}, "direction": {"n/a"}},
            # the plan's "gh did not answer": the finding names the call, "gh pr view did not answer within 3 s"
            {"live-state": ["gh pr view did not answer within 3 s", "not looked at"]},
            next_has=[NEXT],  # a skipped finding lowers the confidence but leaves the checkpoint's next step
        ),
        [CURRENT],
        "recovered",
        [NEXT],
        hangs=True,
        marks=(),  # in the quick run
    ),
    GhScenario(
        "19-gh-missing",
        gh_missing,
        Expect(
            0,
            "recovered",
            statuses={**CLEAN, "recency": {"n/a"}, "live-state": {"ok", "n/a"}, "direction": {"n/a"}},
            finding_has={"live-state": ["gh not installed (looked for gh on PATH)", "not looked at"]},
            next_has=[NEXT],
        ),
        [],
        "recovered",
        [NEXT],
    ),
    GhScenario(
        "22-gh-signed-out",
        signed_out,
        Expect(
            0,
            "recovered",
            statuses={**CLEAN, "recency": {"n/a"}, "live-state": {"ok", "n/a"}, "direction": {"n/a"}},
            finding_has={"live-state": ["gh is not signed in (gh pr view: exit 4", "not looked at"]},
            next_has=[NEXT],
        ),
        [CURRENT],
        "recovered",
        [NEXT],
    ),
]


def _param(s: GhScenario) -> Any:
    return pytest.param(s, id=s.name, marks=s.marks)


# ---------------------------------------------------------------------------------------------------- the checks


def recover(proj: Proj) -> tuple[int, dict[str, Any]]:
    """`rehydrate recover --json` as Proj.recover runs it, with TIMEOUT as the only bound."""
    done = subprocess.run(
        [sys.executable, "-m", "rehydrate", "recover", "--json"],
        cwd=proj.root,
        env=proj.env,
        input="",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def as_a_hook_sees_it(answer: dict[str, Any], checkpoint_next: str) -> dict[str, Any]:
    """recover's answer without gh's lines, its confidence and next step derived again from what is left (as
    checks/ledger.summarize does: the first degraded or failed finding's next, else the checkpoint's)."""
    checks = [c for c in answer["checks"] if not _by_gh((c["name"], c["status"], c["finding"]))]
    degraded = list(dict.fromkeys(c["name"] for c in checks if c["status"] in LOWERING))
    against = [c["next"] for c in checks if c["status"] in ("degraded", "failed") and c["next"]]
    confidence = "recovered" if not degraded else "degraded"
    return {
        **answer,
        "checks": checks,
        "degraded": degraded,
        "confidence": confidence,
        "next": [*against, checkpoint_next][0],
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub tokens in this process's environment: the scenarios' environment() must drop them."""
    monkeypatch.setenv("GH_TOKEN", "ghp_never_sent")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_never_sent_either")


@pytest.mark.usefixtures("tokens")
@pytest.mark.parametrize("scenario", [_param(s) for s in SCENARIOS])
def test_gh_scenario(scenario: GhScenario, tmp_path: Path) -> None:
    proj = scenario.build(tmp_path)
    bin_dir = Path(proj.env["PATH"])
    assert "GH_TOKEN" not in proj.env and "GITHUB_TOKEN" not in proj.env
    before = _files(proj.root / "state")
    try:
        code, answer = recover(proj)
    finally:  # recover has ended: a hanging gh it started must be gone (killed and reaped), not merely dying
        pid_file = bin_dir / "gh.pid"
        hung = int(pid_file.read_text()) if pid_file.exists() else None
        outlived = hung is not None and _alive(hung)
        if outlived and hung is not None:  # the feature under test broken: ended here, never left running
            os.kill(hung, 9)
    check_recover(answer, code, scenario.expect)
    assert _files(proj.root / "state") == before, "recover wrote to the state folder"
    assert (hung is not None) is scenario.hangs, "the hanging fake gh never started"
    assert not outlived, f"the hanging gh (pid {hung}) outlived recover"
    # only the argv the check should run (no other gh command, no `gh api`), each with gh's quiet environment only
    asked = gh.calls(bin_dir)
    assert sorted(asked) == sorted(scenario.calls), asked
    assert [run["env"] for run in gh.seen(bin_dir)] == [GH_ENV] * len(scenario.calls)
    expected = as_a_hook_sees_it(answer, scenario.checkpoint_next)
    gh_lines = [line for line in ((c["name"], c["status"], c["finding"]) for c in answer["checks"]) if _by_gh(line)]
    for harness in HARNESSES:
        hook_code, brief, err = proj.session_start(harness)
        _restore(proj.root / "state", before)
        assert hook_code == 0, err
        ledger = ledger_of(brief)
        assert_same_ledger(expected, ledger)
        assert ledger["confidence"] == scenario.hook_confidence, (harness, ledger)
        for word in scenario.hook_next_has:
            assert word in spelled(ledger, ledger["next"]), (harness, word, ledger["next"])
        shown = [line for line in ledger["checks"] if _by_gh(line)]
        if scenario.calls:  # gh is on PATH: no gh line, and the brief says recover runs it
            assert DEFERRED in brief and shown == [], (harness, brief)
        else:  # gh is missing: the same n/a line as recover's, and nothing deferred
            assert DEFERRED not in brief and shown == gh_lines, (harness, brief)
    assert gh.calls(bin_dir) == asked, "a hook ran gh"
