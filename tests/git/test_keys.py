"""Several actors with keys of their own, across clones of one remote (tests/git/gitutil.py): each clone verifies
the others' signed records with the public keys committed in state/keys/; a changed public key is named by every
clone that knew the old one, until `rehydrate key trust`; a record forged in a teammate's log in another clone is
named where it arrives."""

from __future__ import annotations

import json
from pathlib import Path

from rehydrate.store.wal import digest

from .gitutil import Team


def _as(actor: str, tmp: Path) -> dict[str, str]:
    return {"REHYDRATE_ACTOR": actor, "REHYDRATE_KEY_FILE": str(tmp / "keys" / actor)}


def _pair(tmp_path: Path) -> tuple[Team, Path, Path, dict[str, str], dict[str, str]]:
    team = Team(tmp_path)
    a, b = team.clone("a"), team.clone("b")
    alice, bob = _as("alice", tmp_path), _as("bob", tmp_path)
    for clone, env, step in ((a, alice, "lexer"), (b, bob, "docs")):
        r = team.rh(clone, "key", "init", env=env)
        assert r.code == 0 and "registered key" in r.out, r
        assert team.rh(clone, "checkpoint", "--done", step, "--next", "more", env=env).code == 0
    for clone, env in ((a, alice), (b, bob), (a, alice)):
        r = team.sync(clone, env=env)
        assert r.code == 0, r
    for clone, env in ((a, alice), (b, bob)):  # each clone reads the other's log, and pins its key
        assert team.rh(clone, "status", env=env).code == 0
    return team, a, b, alice, bob


def _trusted(clone: Path) -> dict[str, str]:
    trust = json.loads((clone / ".git" / "rehydrate" / "state" / "keys.json").read_text())
    return {actor: entry["id"] for actor, entry in trust.items()}


def test_each_clone_verifies_the_others_signed_records(tmp_path: Path) -> None:
    team, a, b, alice, bob = _pair(tmp_path)
    for clone, env in ((a, alice), (b, bob)):
        r = team.rh(clone, "verify", env=env)
        assert r.code == 0, r
        assert set(_trusted(clone)) == {"alice", "bob"}
    assert _trusted(a) == _trusted(b)
    shown = team.rh(b, "key", "show", env=bob)
    assert "alice: committed" in shown.out and "differs" not in shown.out


def test_a_key_changed_without_the_old_one_is_named_by_the_clone_that_knew_it(tmp_path: Path) -> None:
    team, a, b, alice, bob = _pair(tmp_path)
    old = _trusted(b)["alice"]
    Path(alice["REHYDRATE_KEY_FILE"]).unlink()  # alice lost her key: the new one has nothing to vouch for it
    r = team.rh(a, "key", "init", env=alice)
    assert r.code == 0 and f"replacing {old}" in r.out, r
    assert team.rh(a, "checkpoint", "--done", "parser", "--next", "tests", env=alice).code == 0
    assert team.sync(a, env=alice).code == 0
    assert team.sync(b, env=bob).code == 0
    r = team.rh(b, "verify", env=bob)
    assert r.code == 1 and "[key-changed]" in r.out and f"this clone knew {old}" in r.out, r
    assert "treat them as forged" in r.out and "[forged]" not in r.out  # checked with the key now committed
    assert "key-changed" in team.rh(b, "resume", env=bob).out
    assert "differs" in team.rh(b, "key", "show", env=bob).out
    assert team.rh(b, "key", "trust", "alice", env=bob).code == 0
    assert team.rh(b, "verify", env=bob).code == 0


def test_a_key_change_the_old_key_signed_is_pinned_and_said_once(tmp_path: Path) -> None:
    team, a, b, alice, bob = _pair(tmp_path)
    old = _trusted(b)["alice"]
    r = team.rh(a, "key", "init", "--new", env=alice)
    assert r.code == 0 and f"replacing {old}" in r.out, r
    assert team.sync(a, env=alice).code == 0
    assert team.sync(b, env=bob).code == 0
    r = team.rh(b, "verify", env=bob)
    assert r.code == 0 and "[key-rotated]" in r.out and f"from {old} to" in r.out, r
    assert _trusted(b)["alice"] != old
    assert "key-rotated" not in team.rh(b, "verify", env=bob).out  # said once


def test_a_record_forged_in_a_teammates_log_is_named_where_it_arrives(tmp_path: Path) -> None:
    team, a, b, alice, bob = _pair(tmp_path)
    log = a / "state" / "wal" / "bob.jsonl"  # in alice's clone, without bob's key
    last = json.loads(log.read_text().splitlines()[-1])
    fake = {k: v for k, v in last.items() if k not in ("h", "sig")}
    fake.update(seq=last["seq"] + 1, op="receipt", data={"argv": ["pytest"], "exit": 0, "claim": "bob's tests pass"})
    fake["prev"] = last["h"]
    with open(log, "ab") as f:
        f.write(digest.seal_line(fake)[1])
    r = team.rh(a, "verify", env=alice)
    assert r.code == 1 and "bob's last record (seq" in r.out and "[forged]" in r.out, r
    assert team.sync(a, env=alice).code == 0
    assert team.sync(b, env=bob).code == 0
    r = team.rh(b, "verify", env=bob)
    assert r.code == 1 and "[forged]" in r.out, r
    r = team.rh(b, "checkpoint", "--done", "x", "--next", "y", env=bob)
    assert r.code == 3 and "refusing to write" in r.err  # bob's own log: a new signed record would vouch for it
