"""`rehydrate resolve`: after a merge that did not use the union attributes (a local `* merge=text`, as a branch
without them would), the conflicted state files keep both sides' lines; a path outside the state folder is left to
the user; a log one side deleted keeps the other side's records."""

from __future__ import annotations

import json
from pathlib import Path

from .gitutil import Team, append_lines


def conflicted(team: Team, a: Path, *, code_conflict: bool = False) -> tuple[list[str], list[str]]:
    """The same actor checkpointed on two branches; `git merge` conflicts in its log and 99_next.md. Returns the
    log's lines on each side."""
    (a / ".git" / "info" / "attributes").write_text("* merge=text\n")
    team.git(a, "checkout", "-qb", "side")
    assert team.rh(a, "checkpoint", "--done", "side work", "--next", "side next").code == 0
    assert team.rh(a, "invariant", "Side decision", "--because", "side reason").code == 0
    if code_conflict:
        (a / "app.py").write_text("print('side')\n")
    team.git(a, "commit", "-qam", "side")
    side = (a / "state/wal/agent.jsonl").read_text().splitlines()
    team.git(a, "checkout", "-q", "main")
    assert team.rh(a, "checkpoint", "--done", "main work", "--next", "main next").code == 0
    if code_conflict:
        (a / "app.py").write_text("print('main')\n")
    team.git(a, "commit", "-qam", "main")
    main = (a / "state/wal/agent.jsonl").read_text().splitlines()
    team.git(a, "merge", "side", check=False)
    unmerged = team.git(a, "diff", "--name-only", "--diff-filter=U").split()
    assert "state/wal/agent.jsonl" in unmerged and "state/99_next.md" in unmerged, unmerged
    return main, side


def test_resolve_unions_the_conflicted_state_files_and_keeps_every_record(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    main, side = conflicted(team, a)
    r = team.rh(a, "resolve")
    assert r.code == 0 and "resolved state/wal/agent.jsonl: kept both sides' lines (union)" in r.out, r
    assert "next: `git commit`" in r.out
    assert team.git(a, "ls-files", "-u") == ""
    log = (a / "state/wal/agent.jsonl").read_text().splitlines()
    assert sorted(set(log)) == sorted(set(main) | set(side)) and len(log) == len(set(log)), log
    assert not any(line.startswith(("<<<<<<<", "=======", ">>>>>>>")) for line in log)
    nxt = (a / "state/99_next.md").read_text()
    assert "side next" in nxt and "main next" in nxt and "<<<<<<<" not in nxt
    team.git(a, "commit", "-qm", "merged", "--no-edit")


def test_resolve_leaves_a_path_outside_the_state_folder_to_the_user(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    conflicted(team, a, code_conflict=True)
    r = team.rh(a, "resolve", "--json")
    data = json.loads(r.out)
    assert r.code == 1 and not data["ok"], r
    assert data["left"] == ["app.py (outside state/: yours to resolve)"], data
    assert "state/wal/agent.jsonl: kept both sides' lines (union)" in data["resolved"]
    assert team.git(a, "diff", "--name-only", "--diff-filter=U").split() == ["app.py"]
    assert "<<<<<<<" in (a / "app.py").read_text()  # not touched


def test_a_log_deleted_on_one_side_keeps_the_modified_side(tmp_path: Path) -> None:
    """exp F: a log born on a branch, its second commit cherry-picked where the file never was: modify/delete."""
    team = Team(tmp_path)
    a = team.clone("a")
    team.git(a, "checkout", "-qb", "feat")
    append_lines(a / "state/wal/bob.jsonl", "bob 1")
    team.git(a, "add", "-A")
    team.git(a, "commit", "-qm", "bob born")
    append_lines(a / "state/wal/bob.jsonl", "bob 2")
    team.git(a, "commit", "-qam", "bob more")
    team.git(a, "checkout", "-q", "main")
    team.git(a, "cherry-pick", "feat", check=False)
    assert team.git(a, "diff", "--name-only", "--diff-filter=U").split() == ["state/wal/bob.jsonl"]
    r = team.rh(a, "resolve")
    assert r.code == 0 and "kept the modified side" in r.out and "git cherry-pick --continue" in r.out, r
    assert (a / "state/wal/bob.jsonl").read_text() == "bob 1\nbob 2\n"
    assert team.git(a, "ls-files", "-u") == ""


def test_nothing_to_resolve(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    r = team.rh(a, "resolve")
    assert r.code == 0 and "nothing to resolve" in r.out, r
