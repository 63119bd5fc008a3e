"""sync stopped at each of its steps (as a crash there would: REHYDRATE_SYNC_STOP, tests only), then run again:
it converges, names and finishes what the stopped one left half done (sync.pending), and the user's
status and staged changes outside the state folder are as they were."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "git"))

from gitutil import Team, append_lines

from rehydrate.store.git import share

STEPS = ["fetched", "committed", "integrated", "pushed"]


def users_view(team: Team, a: Path) -> tuple[list[str], str]:
    """git status outside state/ and the staged diff outside state/: what the user would see and commit."""
    status = team.git(a, "status", "--porcelain=v2", "-z", "--untracked-files=all")
    entries = [e for e in status.split("\0") if e and " state/" not in e]
    return entries, team.git(a, "diff", "--cached", "--", ".", ":(exclude)state")


@pytest.mark.parametrize("step", STEPS)
def test_a_sync_stopped_at_each_step_converges_on_the_next(tmp_path: Path, step: str) -> None:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    (a / "app.py").write_text("print('staged by the user')\n")
    team.git(a, "add", "app.py")
    (a / "app.py").write_text("print('and changed again')\n")
    (a / "scratch.txt").write_text("untracked\n")
    team.commit_code(b, "lib.py", "y = 2\n", "b's code")  # the upstream brings code: integrating moves files
    append_lines(b / "state/wal/bob.jsonl", "b0")
    assert team.sync(b).code == 0
    append_lines(a / "state/wal/alice.jsonl", "a0")
    before = users_view(team, a)
    stopped = team.rh(a, "sync", env={"REHYDRATE_SYNC_STOP": step})
    assert stopped.code == 75, stopped
    pending = a / ".git" / "rehydrate" / "state" / "sync.pending"
    assert pending.exists() == (step in ("committed", "integrated")), step
    said = share.pending_message(str(a / "state"))  # what `status` can show with one lstat
    assert (said is not None and "run `rehydrate sync` to finish it" in said) == pending.exists(), said
    r = team.sync(a)
    assert r.code == 0, r
    if step in ("committed", "integrated"):
        assert "finished an interrupted sync" in r.out, r
    assert not pending.exists()
    assert team.head(a) == team.remote_head()
    assert users_view(team, a) == before
    assert team.git(a, "diff", "--cached", "--name-only", "--", "state") == ""
    assert team.git(a, "status", "--porcelain", "--", "state") == ""
    assert (a / "state/wal/alice.jsonl").read_text() == "a0\n" and (a / "state/wal/bob.jsonl").read_text() == "b0\n"
    assert (a / "lib.py").read_text() == "y = 2\n"
    shown = team.git(b, "pull", "-q", "--ff-only") + (b / "state/wal/alice.jsonl").read_text()
    assert shown == "a0\n"
