"""`status` names a sync stopped between the two parts of a step: the index or HEAD may be half moved,
and the user may commit before the next sync would finish it."""

from __future__ import annotations

from typing import Any


def test_status_names_an_interrupted_sync_until_it_is_finished(git_env: Any, make_repo: Any) -> None:
    repo = make_repo()
    assert git_env.ok(repo, "status", "--json").json()["ok"]
    pending = repo / ".git" / "rehydrate" / "state" / "sync.pending"
    pending.parent.mkdir(parents=True, exist_ok=True)
    pending.write_text('{"step": "committed", "old": "0", "new": "1"}\n')
    out = git_env.rh(repo, "status", "--json")
    assert out.code == 1, out
    [problem] = [p for p in out.json()["problems"] if p["code"] == "sync-interrupted"]
    assert "run `rehydrate sync` to finish it" in problem["message"]
    pending.unlink()
    assert git_env.ok(repo, "status", "--json").json()["ok"]
