"""Three clones of one repository, each an actor, doing random work and syncing in random order, some at once:
no merge needs a human, nothing is lost or duplicated, every chain verifies, and every clone ends with
the same decisions, rejected approaches and mail; a redirect sent from one clone degrades the recipient's ledger on
another until it is read."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from .conftest import Done, Git

ACTORS = ("alice", "bob", "carol")


def entries(repo: Path) -> list[str]:
    """The entry lines of 10_invariants.md (its header aside)."""
    text = (repo / "state" / "10_invariants.md").read_text()
    return [line for line in text.splitlines() if line.startswith("- ")]


def mail_files(repo: Path) -> dict[str, bytes]:
    root = repo / "state" / "mail"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))} if root.exists() else {}


class Team:
    def __init__(self, git_env: Git, tmp_path: Path) -> None:
        self.g = git_env
        seed = git_env.repo(tmp_path / "seed")
        git_env.bare(tmp_path / "remote.git", seed)
        self.clones: dict[str, Path] = {}
        for name in ACTORS:
            clone = git_env.clone(tmp_path / "remote.git", tmp_path / name)
            self.clones[name] = clone
        self.texts: list[str] = []  # every entry text recorded, by anyone
        self.lock = threading.Lock()

    def rh(self, actor: str, *args: str) -> Done:
        return self.g.rh(self.clones[actor], *args, env={"REHYDRATE_ACTOR": actor})

    def ok(self, actor: str, *args: str) -> Done:
        done = self.rh(actor, *args)
        assert done.code == 0, (actor, args, done)
        return done

    def sync(self, actor: str) -> dict[str, Any]:
        done = self.rh(actor, "sync", "--json")
        assert done.code == 0, (actor, done)  # a sync that stopped means a merge needed a human
        out = json.loads(done.out)
        assert out.get("stopped") is None, out
        return out

    def work(self, actor: str, rng: random.Random, n: int) -> None:
        kind = rng.choice(("invariant", "reject", "checkpoint", "checkpoint", "mail", "promise", "read"))
        if kind in ("invariant", "reject"):
            text = f"{actor} {kind} {n}"
            self.ok(actor, kind, text, "--because", f"round {n}")
            with self.lock:
                self.texts.append(text)
        elif kind == "checkpoint":
            self.ok(actor, "checkpoint", "--done", f"{actor} step {n}", "--next", f"{actor} step {n + 1}")
        elif kind == "mail":
            to = rng.choice([a for a in ACTORS if a != actor])
            self.ok(actor, "mail", "send", "--to", to, "--kind", rng.choice(("fyi", "actionable")), f"note {n}")
        elif kind == "promise":
            self.ok(actor, "promise", f"{actor} will do {n}")
        else:
            self.ok(actor, "mail")


def _sync_into(team: Team, who: str, errors: list[BaseException]) -> None:
    """A sync in a thread: its failure is kept for the test's thread to report."""
    try:
        team.sync(who)
    except BaseException as e:
        errors.append(e)


def run_rounds(team: Team, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    for n in range(rounds):
        actor = rng.choice(ACTORS)
        team.work(actor, rng, n)
        roll = rng.random()
        if roll < 0.3:
            team.sync(actor)
        elif roll < 0.45:  # two clones sync at the same time
            first, second = rng.sample(ACTORS, 2)
            errors: list[BaseException] = []
            threads = [threading.Thread(target=_sync_into, args=(team, who, errors)) for who in (first, second)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors
    for _ in range(2):  # until quiet: everyone has pushed, then everyone has pulled
        for actor in ACTORS:
            team.sync(actor)


def check_converged(team: Team) -> None:
    first = team.clones[ACTORS[0]]
    want_entries = entries(first)
    for text in team.texts:  # every entry recorded anywhere, exactly once
        assert sum(f": {text} because:" in line for line in want_entries) == 1, text
    for actor, clone in team.clones.items():
        assert team.g.unmerged(clone) == [], actor
        assert sorted(entries(clone)) == sorted(want_entries), actor
        assert mail_files(clone) == mail_files(first), actor
        verify = team.rh(actor, "verify", "--json")
        assert verify.code == 0, (actor, verify)
        hashes = [r["h"] for r in team.g.records(clone)]
        assert len(hashes) == len(set(hashes)), f"{actor}: a record shown twice"
    ids = {frozenset(r["h"] for r in team.g.records(clone)) for clone in team.clones.values()}
    assert len(ids) == 1, "the clones hold different records"


@pytest.mark.parametrize("seed", [1, 2])
def test_three_clones_converge(git_env: Git, tmp_path: Path, seed: int) -> None:
    team = Team(git_env, tmp_path)
    run_rounds(team, 30, seed)
    check_converged(team)


@pytest.mark.slow
def test_three_clones_hundred_rounds(git_env: Git, tmp_path: Path) -> None:
    team = Team(git_env, tmp_path)
    run_rounds(team, 100, 13)
    check_converged(team)


def test_a_redirect_degrades_the_recipient_on_another_clone_until_read(git_env: Git, tmp_path: Path) -> None:
    team = Team(git_env, tmp_path)
    team.ok("bob", "checkpoint", "--done", "started", "--next", "the parser")
    team.sync("bob")
    team.ok("alice", "mail", "send", "--to", "bob", "--kind", "redirect", "stop the parser: the API changed")
    team.sync("alice")
    team.sync("bob")
    ledger = json.loads(team.rh("bob", "recover", "--json").out)
    mailbox = [c["status"] for c in ledger["checks"] if c["name"] == "mailbox"]
    assert "degraded" in mailbox, ledger["checks"]
    assert ledger["confidence"] == "degraded"
    shown = team.ok("bob", "mail").out
    assert "stop the parser" in shown
    ledger = json.loads(team.rh("bob", "recover", "--json").out)
    mailbox = [c["status"] for c in ledger["checks"] if c["name"] == "mailbox"]
    assert mailbox and "degraded" not in mailbox, ledger["checks"]
