"""Rollbacks and branch switches: the next command says where the state now stands against what
this worktree had seen. A branch switch is `switched` (information: exit 0), with the count of the other line's
records and its last next action, and switching back ends it; on the same branch, `git reset --hard` and
`git stash` are `rolled-back` (degraded: exit 1) with the exact count of missing records. What this worktree saw is
kept in its own git folder, never in state/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _codes(out: dict[str, Any]) -> list[str]:
    return [p["code"] for p in out["problems"]]


def _message(out: dict[str, Any], code: str) -> str:
    (found,) = [p["message"] for p in out["problems"] if p["code"] == code]
    return str(found)


def test_a_branch_switch_is_named_with_its_count_and_next_action_and_switching_back_ends_it(
    git_env: Any, tmp_path: Path
) -> None:
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.branch(r, "feat")
    g.ok(r, "invariant", "feat decision", "--because", "b")
    g.ok(r, "checkpoint", "--done", "feat step", "--next", "finish the feat parser")
    g.ok(r, "reject", "feat approach", "--because", "b")
    g.commit(r, "feat work", "state")
    g.ok(r, "status")
    assert not (r / "state" / "wal" / ".agent.seen").exists()  # the cache is the worktree's, not the state's
    assert list((r / ".git" / "rehydrate").rglob("agent.seen"))
    g.switch(r, "main")

    out = g.rh(r, "status", "--json")
    assert out.code == 0, out  # information, not degraded
    status = out.json()
    assert _codes(status) == ["switched"], status
    message = _message(status, "switched")
    assert "now stands on main (was feat)" in message and "3 records" in message, message
    assert '"finish the feat parser"' in message and "git switch feat" in message, message
    assert "[switched]" in g.rh(r, "verify").out  # named by every command until a checkpoint or the switch back

    g.switch(r, "feat")
    status = g.ok(r, "status", "--json").json()
    assert _codes(status) == [], status


def test_a_switch_is_acknowledged_by_a_checkpoint(git_env: Any, tmp_path: Path) -> None:
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.branch(r, "feat")
    g.ok(r, "checkpoint", "--done", "feat step", "--next", "feat next")
    g.commit(r, "feat work", "state")
    g.switch(r, "main")
    assert _codes(g.rh(r, "status", "--json").json()) == ["switched"]
    g.ok(r, "checkpoint", "--done", "back on main", "--next", "main next")
    assert _codes(g.ok(r, "status", "--json").json()) == []
    assert g.wal_lines(r)[-1]["data"]["rolled_back"]["kind"] == "switched"


def test_a_reset_hard_is_a_rollback_with_the_exact_count(git_env: Any, tmp_path: Path) -> None:
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.ok(r, "invariant", "kept decision", "--because", "b")
    g.commit(r, "one", "state")
    g.ok(r, "checkpoint", "--done", "step two", "--next", "the lost next action")
    g.ok(r, "invariant", "lost decision", "--because", "b")
    g.commit(r, "two", "state")
    g.ok(r, "reject", "lost approach", "--because", "b")
    g.commit(r, "three", "state")
    g.ok(r, "status")
    g.git(r, "reset", "-q", "--hard", "HEAD~2")

    out = g.rh(r, "status", "--json")
    assert out.code == 1, out  # degraded
    status = out.json()
    assert _codes(status) == ["rolled-back"], status
    message = _message(status, "rolled-back")
    assert "rolled back: 3 records this clone saw are gone" in message, message
    assert "the lost next action" in message, message


def test_a_stash_of_state_is_a_rollback_and_its_pop_ends_it(git_env: Any, tmp_path: Path) -> None:
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.ok(r, "checkpoint", "--done", "step", "--next", "the stashed next action")
    g.ok(r, "invariant", "stashed decision", "--because", "b")
    g.ok(r, "status")
    g.git(r, "stash", "-q")

    out = g.rh(r, "status", "--json")
    assert out.code == 1, out
    message = _message(out.json(), "rolled-back")
    assert "2 records this clone saw are gone" in message and "the stashed next action" in message, message

    g.git(r, "stash", "pop", "-q")
    assert _codes(g.ok(r, "status", "--json").json()) == []
