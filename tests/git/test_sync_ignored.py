"""sync commits the files rehydrate writes under the state folder even when an ignore rule hides them (a root
.gitignore's `*.pub`, `mail/` in state/.gitignore), says which, and still leaves rehydrate's own caches and the user's
other ignored files out; `status` names a state file git ignores. Real git, a bare remote, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from .gitutil import Team


def _ignore(team: Team, clone: Path, path: str, rule: str) -> None:
    """An ignore rule, committed and pushed as a user would."""
    target = clone / path
    target.write_text((target.read_text() if target.exists() else "") + rule + "\n")
    team.git(clone, "add", path)
    team.git(clone, "commit", "-qm", f"ignore {rule}")
    team.git(clone, "push", "-q", "origin", "main")


def test_a_public_key_hidden_by_a_root_ignore_rule_is_pushed(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    _ignore(team, a, ".gitignore", "*.pub")
    key_env = {"REHYDRATE_KEY_FILE": str(tmp_path / "home" / "key")}
    assert team.rh(a, "key", "init", env=key_env).code == 0
    assert (a / "state/keys/agent.pub").exists()
    dry = team.sync(a, "--dry-run")
    assert "git ignores state/keys/agent.pub: sync would commit them all the same" in dry.out, dry
    r = team.sync(a)
    assert r.code == 0 and "pushed" in r.out, r
    assert "state/keys/agent.pub" in team.tree(team.remote, "main"), r
    assert "git ignores state/keys/agent.pub" in r.out, r
    b = team.clone("b")  # another clone gets the key the records are signed with
    assert (b / "state/keys/agent.pub").read_bytes() == (a / "state/keys/agent.pub").read_bytes()
    # the same user's other clone (a clone pins its own actor's key only when the user's key file holds it)
    assert team.rh(b, "verify", env=key_env).code == 0


def test_a_message_hidden_by_the_state_folders_own_ignore_file_is_pushed(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    _ignore(team, a, "state/.gitignore", "mail/")
    assert team.rh(a, "mail", "send", "--to", "bob", "the parser is yours").code == 0
    sent = [p.relative_to(a).as_posix() for p in (a / "state/mail").rglob("*") if p.is_file()]
    assert sent, "mail send wrote no file"
    r = team.sync(a)
    assert r.code == 0 and "pushed" in r.out, r
    remote = team.tree(team.remote, "main")
    assert all(p in remote for p in sent), (sent, r)
    b = team.clone("b")
    assert "the parser is yours" in team.rh(b, "resume", "--actor", "bob").out
    assert all((b / p).read_bytes() == (a / p).read_bytes() for p in sent)


def test_caches_and_the_users_own_ignored_files_stay_out(tmp_path: Path) -> None:
    """Only rehydrate's files are forced in: its caches (its own ignore file's patterns) and a file of the user's in
    the state folder that the user ignores are not committed, whatever rules hide the rest."""
    team = Team(tmp_path)
    a = team.clone("a")
    _ignore(team, a, "state/.gitignore", "wal/")
    _ignore(team, a, "state/.gitignore", "*.private")
    assert team.rh(a, "checkpoint", "--done", "lexer", "--next", "parser").code == 0
    (a / "state/wal/agent.jsonl.tmp").write_text("half written\n")
    (a / "state/notes.private").write_text("mine\n")
    (a / "state/mail/bob").mkdir(parents=True)
    (a / "state/mail/bob/x.md.tmp").write_text("half written\n")
    r = team.sync(a)
    assert r.code == 0 and "pushed" in r.out, r
    remote = team.tree(team.remote, "main")
    assert "state/wal/agent.jsonl" in remote
    assert team.git(team.remote, "show", "main:state/wal/agent.jsonl") == (a / "state/wal/agent.jsonl").read_text()
    assert not {"state/wal/agent.jsonl.tmp", "state/notes.private", "state/mail/bob/x.md.tmp", "state/.lock"} & set(
        remote
    )


def test_status_names_a_state_file_git_ignores(tmp_path: Path) -> None:
    team = Team(tmp_path)
    a = team.clone("a")
    assert team.rh(a, "status").code == 0
    _ignore(team, a, ".gitignore", "*.pub")
    key_env = {"REHYDRATE_KEY_FILE": str(tmp_path / "home" / "key")}
    assert team.rh(a, "key", "init", env=key_env).code == 0
    out = team.rh(a, "status", "--json")
    assert out.code == 1, out
    [problem] = [p for p in json.loads(out.out)["problems"] if p["code"] == "state-ignored"]
    assert "state/keys/agent.pub" in problem["message"] and "rehydrate sync" in problem["message"]
    assert team.sync(a).code == 0  # committed now: git tracks it, the rule no longer hides it
    assert team.rh(a, "status").code == 0
