"""claims (checks/claims.py): live-state's claims and stamps re-checked against the work tree now, called on the
WAL read back by store.wal.since.find as live-state does; the records made by the real CLI on a real repository."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import rehydrate

from rehydrate.checks import DEGRADED, NA, OK, Context, Finding, claims
from rehydrate.store.state import State
from rehydrate.store.wal import since


def _findings(repo: Path) -> list[tuple[str, str]]:
    state = State.open(str(repo / "state"))
    with state.reading() as snap:
        found = since.find(state, snap)
    out: list[Finding] = claims.findings(Context(state, None, scope="recover", since=found))
    return [(f.status, f.message) for f in out]


def _receipt(repo: Path, *argv: str) -> str:
    return rehydrate("run", "--", *argv, cwd=repo).err.rstrip("\n").split("\n")[-1].split(": ", 1)[1]


def test_a_claim_is_verified_until_the_tree_changes_and_a_failed_or_unbacked_one_says_so(repo: Path) -> None:
    assert rehydrate("init", "--goal", "ship the parser", cwd=repo).code == 0
    ok, bad = _receipt(repo, "true"), _receipt(repo, "sh", "-c", "exit 1")
    args = ["--claim", "tests pass", "--receipt", ok, "--claim", "lint clean", "--receipt", bad, "--claim", "reviewed"]
    assert rehydrate("checkpoint", "--done", "d", "--next", "n", *args, cwd=repo).code == 0
    found = _findings(repo)
    assert [s for s, _ in found] == [OK, DEGRADED, NA], found
    assert 'claim "tests pass" verified' in found[0][1]
    assert 'claim "lint clean" failed: command ["sh", "-c", "exit 1"] exited 1' in found[1][1]
    assert 'claim "reviewed" is unverified' in found[2][1]
    (repo / "app.py").write_text("print('changed')\n")
    stale = _findings(repo)[0]
    assert stale[0] == DEGRADED and 'claim "tests pass" is stale' in stale[1] and "app.py changed" in stale[1], stale


def test_a_stamped_file_that_changed_is_named(repo: Path) -> None:
    assert rehydrate("init", "--goal", "ship the parser", cwd=repo).code == 0
    assert rehydrate("checkpoint", "--done", "d", "--next", "n", cwd=repo).code == 0
    assert _findings(repo) == []  # no claim, no stamp: nothing to say
    assert rehydrate("stamp", "app.py", cwd=repo).code == 0
    [(status, _)] = _findings(repo)
    assert status == OK
    (repo / "app.py").write_text("print('changed')\n")
    [(status, message)] = _findings(repo)
    assert status == DEGRADED and "app.py" in message, message
