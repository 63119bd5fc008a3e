"""`rehydrate team init`: the union attributes in state/.gitattributes (the user's own lines kept) and in the
clone's info/attributes (every worktree, whatever the branch), each action said."""

from __future__ import annotations

import json
from pathlib import Path

from rehydrate.store import layout

from .gitutil import Team


def test_team_init_writes_both_attribute_files_and_says_so(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    attrs = a / "state" / ".gitattributes"
    attrs.write_text(layout.GITATTRIBUTES_V1 + "*.png binary\n")
    ignore = a / "state" / ".gitignore"
    ignore.write_text(layout.GITIGNORE_TEXT.replace(".local/\n", "") + "mine.txt\n")
    r = team.rh(a, "team", "init")
    assert r.code == 0, r
    assert "added .local/ to state/.gitignore" in r.out, r
    assert ignore.read_text() == layout.GITIGNORE_TEXT.replace(".local/\n", "") + "mine.txt\n.local/\n"
    assert "updated state/.gitattributes" in r.out and "added union merges for state/ to .git/info/attributes" in r.out
    assert "commit state/.gitattributes on your main line before branching" in r.out
    assert attrs.read_text() == layout.GITATTRIBUTES_TEXT + "*.png binary\n"
    info = (a / ".git" / "info" / "attributes").read_text()
    assert "state/wal/*.jsonl merge=union" in info and "state/10_invariants.md merge=union" in info
    again = team.rh(a, "team", "init", "--json")
    data = json.loads(again.out)
    assert again.code == 0 and data["ok"] and all("already" in line for line in data["actions"]), data
    assert (a / ".git" / "info" / "attributes").read_text() == info


def test_a_branch_made_before_the_upgrade_merges_cleanly_after_team_init(tmp_path: Path) -> None:
    """The committed attributes are the old ones on both branches (git reads the receiving branch's): only the
    clone's info/attributes makes the two logs merge line by line."""
    team = Team(tmp_path)
    a = team.clone("a")
    (a / "state" / ".gitattributes").write_text(layout.GITATTRIBUTES_V1)
    team.git(a, "commit", "-qam", "old attributes")
    team.git(a, "checkout", "-qb", "feat")
    assert team.rh(a, "checkpoint", "--done", "feat work", "--next", "feat next").code == 0
    (a / "state" / ".gitattributes").write_text(layout.GITATTRIBUTES_V1)  # as the old version left it
    team.git(a, "commit", "-qam", "feat")
    team.git(a, "checkout", "-q", "main")
    assert team.rh(a, "checkpoint", "--done", "main work", "--next", "main next").code == 0
    (a / "state" / ".gitattributes").write_text(layout.GITATTRIBUTES_V1)
    team.git(a, "commit", "-qam", "main")
    assert team.rh(a, "team", "init").code == 0
    team.git(a, "checkout", "-q", "--", "state/.gitattributes")  # the committed (old) file stays in place
    merged = team.git(a, "merge", "-q", "--no-edit", "feat", check=False)
    assert team.git(a, "ls-files", "-u") == "", merged
    log = (a / "state" / "wal" / "agent.jsonl").read_text()
    assert '"feat work"' in log and '"main work"' in log
    worktree = tmp_path / "wt"
    team.git(a, "worktree", "add", "-q", str(worktree), "feat")
    said = team.git(worktree, "check-attr", "merge", "--", "state/wal/agent.jsonl")
    assert said.strip() == "state/wal/agent.jsonl: merge: union", said
