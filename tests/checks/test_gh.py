"""The fake gh (tests/fakes/gh.py) that the PR/CI part of live-state is tested against: gh's exit codes (0, 1 no pull
request, 4 not signed in), canned JSON, a hanging gh killed by proc at its deadline. checks/gh.py comes next."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes import gh

from rehydrate import proc

RED = {
    "number": 7,
    "title": "Binding powers",
    "state": "OPEN",
    "mergedAt": None,
    "url": "https://example.invalid/pull/7",
    "headRefName": "feat",
    "statusCheckRollup": [{"name": "test", "conclusion": "FAILURE"}],
}
MERGED = {"number": 12, "title": "Fix tokenizer", "state": "MERGED", "mergedAt": "2026-11-30T10:00:00Z"}


def _run(path: str, *argv: str, deadline: float = 60.0) -> proc.Result:
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
    return proc.start([argv], env={**env, "PATH": path}).wait(deadline)[0]


def test_the_fake_answers_like_gh(tmp_path: Path) -> None:
    path = gh.bin_path(tmp_path, "fake", current=RED, prs={"12": MERGED})
    assert _run(path, "gh", "auth", "status").code == 0
    current = _run(path, "gh", "pr", "view", "--json", "number,state,statusCheckRollup")
    assert current.code == 0
    assert json.loads(current.out) == {"number": 7, "state": "OPEN", "statusCheckRollup": RED["statusCheckRollup"]}
    named = _run(path, "gh", "pr", "view", "12", "--json", "number,state,mergedAt")
    assert json.loads(named.out) == {"number": 12, "state": "MERGED", "mergedAt": "2026-11-30T10:00:00Z"}
    assert _run(path, "gh", "pr", "view", "99", "--json", "number").code == 1
    assert _run(path, "git", "--version").out.startswith(b"git version")
    assert gh.calls(Path(path))[0] == ["auth", "status"]


def test_no_pull_request_and_not_signed_in(tmp_path: Path) -> None:
    path = gh.bin_path(tmp_path, "fake")
    none = _run(path, "gh", "pr", "view", "--json", "number")
    assert none.code == 1 and b"no pull requests found for branch" in none.err
    out = gh.bin_path(tmp_path / "out", "fake", auth=False)
    assert _run(out, "gh", "auth", "status").code == 4
    assert _run(out, "gh", "pr", "view", "--json", "number").code == 4


def test_no_gh_on_the_path(tmp_path: Path) -> None:
    assert _run(gh.bin_path(tmp_path), "gh", "auth", "status").missing


def test_a_hanging_gh_is_killed_at_the_deadline(tmp_path: Path) -> None:
    path = gh.bin_path(tmp_path, "fake", hang=True)
    result = _run(path, "gh", "pr", "view", "--json", "number", deadline=3.0)
    assert result.timed_out and result.code is None
    pid = int((Path(path) / "gh.pid").read_text())
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive  # killed and reaped by proc, not left behind
