"""The writing commands (cli/write.py) as a user meets them: init (from a subfolder the state goes to the repository's
root, where the hooks look; a refusal comes before any write), invariant and reject, checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, rehydrate
from rehydrate.store.wal import record as wal


def test_init_from_a_subfolder_creates_the_state_at_the_repository_root(repo: Path) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    r = rehydrate("init", "--goal", "Ship the parser", cwd=sub)
    assert r.code == 0, r.err
    assert (repo / "state" / "wal" / "agent.jsonl").is_file()
    assert not (sub / "state").exists() and not (repo / "src" / "state").exists()
    assert f"initialized {repo / 'state'}/ at the repository's root" in r.out  # it says where
    assert rehydrate("status", cwd=sub).code == 0
    # the hook, called with the repository's root as cwd (as the harnesses do), finds it
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})
    r = rehydrate("hook", "claude", cwd=repo, stdin=event)
    assert r.code == 0 and "Ship the parser" in json.loads(r.out)["hookSpecificOutput"]["additionalContext"]


def test_init_at_the_root_says_state_as_before(repo: Path) -> None:
    r = rehydrate("init", "--goal", "g")
    assert r.code == 0 and r.out.startswith("initialized state/ (actor agent)")


def test_outside_a_repository_init_uses_the_current_folder(tmp_path: Path) -> None:
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    assert rehydrate("init", "--goal", "g", cwd=sub).code == 0
    assert (sub / "state" / "wal").is_dir() and not (tmp_path / "a" / "state").exists()


def test_an_existing_state_found_upward_is_not_doubled(repo: Path) -> None:
    pkg = repo / "pkg"
    (pkg / "sub").mkdir(parents=True)
    assert rehydrate("init", "--goal", "first", "--dir", "state", cwd=pkg).code == 0
    r = rehydrate("init", "--goal", "second", cwd=pkg / "sub")
    assert r.code == 3 and "write-once" in r.err
    assert not (repo / "state").exists()


def test_dir_and_env_are_still_taken_from_the_current_folder(repo: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    assert rehydrate("init", "--goal", "g", "--dir", "here", cwd=sub).code == 0
    assert (sub / "here" / "wal").is_dir()
    assert rehydrate("init", "--goal", "g", cwd=sub, env={"REHYDRATE_DIR": "there"}).code == 0
    assert (sub / "there" / "wal").is_dir() and not (repo / "state").exists()


def test_init_refused_by_a_link_out_of_the_project_creates_no_state(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("someone else's file\n")
    (repo / "CLAUDE.md").symlink_to(outside)
    r = rehydrate("init", "--goal", "Ship it", "--rules", "claude", cwd=repo)
    assert r.code == 3, r
    assert "CLAUDE.md" in r.err
    assert not (repo / "state").exists()
    assert outside.read_text() == "someone else's file\n"
    # and once the link is gone, init goes through
    (repo / "CLAUDE.md").unlink()
    assert rehydrate("init", "--goal", "Ship it", "--rules", "claude", cwd=repo).code == 0


def test_goal_is_write_once(repo: Path) -> None:
    assert rehydrate("init", "--goal", "first").code == 0
    before = (repo / "state" / "00_goal.md").read_bytes()
    r = rehydrate("init", "--goal", "second")
    assert r.code == 3 and "write-once" in r.err
    assert (repo / "state" / "00_goal.md").read_bytes() == before


def test_another_actor_joins_with_its_first_write(repo: Path) -> None:
    rehydrate("init", "--goal", "g")
    r = rehydrate("checkpoint", "--done", "a", "--next", "b", "--actor", "bob")
    assert r.code == 0 and r.out.endswith("next: state/next/bob.md\n"), r.err
    assert (repo / "state" / "wal" / "bob.jsonl").is_file() and (repo / "state" / "next" / "bob.md").is_file()


def test_checkpoint_outside_git_says_so(tmp_path: Path) -> None:
    assert rehydrate("init", "--goal", "g", cwd=tmp_path).code == 0
    r = rehydrate("checkpoint", "--done", "a", "--next", "b", "--json", cwd=tmp_path)
    assert r.code == 0 and json.loads(r.out)["git"]["repo"] is False


def test_kept_hand_edits_are_git_ignored(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("checkpoint", "--done", "a", "--next", "b").code == 0
    nxt = repo / "state" / "99_next.md"
    nxt.write_text(nxt.read_text() + "my own note\n")
    assert rehydrate("checkpoint", "--done", "c", "--next", "d").code == 0
    kept = sorted(p.name for p in (repo / "state").iterdir() if ".edited" in p.name)
    assert kept == ["99_next.md.edited"]
    nxt.write_text(nxt.read_text() + "again\n")
    assert rehydrate("checkpoint", "--done", "e", "--next", "f").code == 0
    git(repo, "add", "-A")
    staged = git(repo, "diff", "--cached", "--name-only").split()
    assert "state/99_next.md" in staged and not [p for p in staged if ".edited" in p], staged
    assert (repo / "state" / "99_next.md.edited.2").is_file()


def test_an_entry_id_hashes_the_actor_the_time_and_the_text(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    first = json.loads(rehydrate("invariant", "Use a WAL", "--because", "crashes", "--json").out)
    second = json.loads(rehydrate("invariant", "Use a WAL", "--because", "crashes", "--json").out)
    assert first["id"] != second["id"]  # the same decision twice: two ids, as the README says
    from rehydrate.store.state import State

    at = "2026-11-29T22:04:26.123Z"
    monkeypatch.setattr(wal, "now", lambda: at)
    rec = State.open(repo / "state").invariant("Use a WAL", because="crashes").record
    assert rec["data"]["id"] == "D-" + wal.sha256(f"agent\0{at}\0Use a WAL".encode())[:6]


def test_an_empty_guard_or_contains_is_refused_never_dropped(repo: Path) -> None:
    """`reject X --guard ''` would record a rejected approach that watches nothing, without a word: refused."""
    assert rehydrate("init", "--goal", "g").code == 0
    before = (repo / "state" / "10_invariants.md").read_bytes()
    for flag in ("--guard", "--contains"):
        for empty in ("", "   "):
            r = rehydrate("reject", "Regex tokenizer", "--because", "nesting", flag, empty)
            assert r.code == 2 and f"the {flag[2:]} is empty" in r.err and f"leave {flag} out" in r.err, r
    assert (repo / "state" / "10_invariants.md").read_bytes() == before
    assert rehydrate("reject", "Regex tokenizer", "--because", "nesting", "--guard", "src/*.py").code == 0


def test_an_entry_is_superseded_or_withdrawn_by_a_line_of_its_own(repo: Path) -> None:
    """`--supersedes` and `withdraw` append (the file only grows), say what is out of force, and refuse what cannot
    be taken out (exit 2, nothing written); the brief, status and verify follow."""
    assert rehydrate("init", "--goal", "g").code == 0
    inv = repo / "state" / "10_invariants.md"
    rejected = json.loads(rehydrate("reject", "Regex tokenizer", "--because", "nesting", "--json").out)["id"]
    mistaken = json.loads(rehydrate("invariant", "Use tabs", "--because", "taste", "--json").out)["id"]
    before = inv.read_text()
    r = rehydrate(
        "invariant", "Regex tokenizer for numbers only", "--because", "no nesting there", "--supersedes", rejected
    )
    assert r.code == 0 and f"{rejected} is out of force from now on" in r.out, r
    w = json.loads(rehydrate("withdraw", mistaken, "--because", "wrong project", "--json").out)
    assert w["ok"] and w["lifted"] == mistaken and w["id"].startswith("W-")
    assert w["line"].endswith(f"withdrawn: {mistaken} because: wrong project")
    after = inv.read_text()
    assert after.startswith(before) and len(after.split("\n")) == len(before.split("\n")) + 2
    refused = {
        (rejected, "no longer in force"),
        (mistaken, "no longer in force"),
        (w["id"], "a withdrawal is not an entry"),
        ("D-ffffff", "no entry D-ffffff in state/10_invariants.md"),
        ("tabs", "not an entry id"),
        (f"{rejected} 2026-12-02", "not an entry id"),  # an id with more after it: the line would not name it
    }
    for ident, why in refused:
        for args in (
            ("withdraw", ident, "--because", "x"),
            ("invariant", "y", "--because", "x", "--supersedes", ident),
        ):
            r = rehydrate(*args)
            assert r.code == 2 and why in r.err, (args, r)
    assert rehydrate("withdraw", rejected, "--because", "").code == 2
    assert inv.read_text() == after
    brief = rehydrate("resume").out
    assert "Use tabs" not in brief and "Regex tokenizer because" not in brief and "for numbers only" in brief
    assert f"Not shown, superseded or withdrawn (no longer in force): {rejected}, {mistaken} (" in brief
    assert rehydrate("verify").code == 0
    log = rehydrate("log", "--op", "withdraw").out
    assert f"withdrawn: {mistaken}" in log


def test_the_mistakes_made_taking_an_entry_out_get_help(repo: Path) -> None:
    """An id written loosely is read as meant; a near miss gets "did you mean"; --supersedes twice is refused, never
    the last one kept silently; a withdrawn superseding entry says that what it superseded stays out."""
    assert rehydrate("init", "--goal", "g").code == 0
    first = json.loads(rehydrate("invariant", "Use tabs", "--because", "taste", "--json").out)["id"]
    other = json.loads(rehydrate("reject", "Use spaces", "--because", "taste", "--json").out)["id"]
    twice = rehydrate("invariant", "x", "--because", "y", "--supersedes", first, "--supersedes", other)
    assert twice.code == 2 and "--supersedes is given more than once" in twice.err, twice
    near = first[:-1] + ("0" if first[-1] != "0" else "1")
    r = rehydrate("withdraw", near, "--because", "x")
    assert r.code == 2 and f"no entry {near}" in r.err and f"did you mean {first}?" in r.err, r
    r = rehydrate("withdraw", first, other, "--because", "x")
    assert r.code == 2 and "unrecognized arguments" in r.err and "rehydrate withdraw --help" in r.err, r
    r = rehydrate("withdraw", "R-0a0b0c", "--because", "guard: no")
    assert r.code == 2 and "the reason holds 'guard:'" in r.err, r
    loose = first[0].lower() + first[1:].upper() + ","
    new = json.loads(
        rehydrate("invariant", "Use tabs, width 4", "--because", "taste", "--supersedes", loose, "--json").out
    )
    assert f"decision, superseding {first}: Use tabs, width 4" in new["line"]
    r = rehydrate("withdraw", new["id"], "--because", "wrong width")
    assert r.code == 0 and f"{first}, which {new['id']} superseded, stays out" in r.out, r
    brief = rehydrate("resume").out
    assert f"(no longer in force): {first}, {new['id']} (" in brief and "Use tabs" not in brief


def test_handoff_clear_ends_a_stale_note_for_good(repo: Path) -> None:
    """A note older than the last checkpoint degrades every later brief; `handoff --clear` records that there is
    no note: the check says n/a, the brief has no handoff section, verify is clean, and a new note works after it."""
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("handoff", stdin="Parser half done\n").code == 0
    assert rehydrate("checkpoint", "--done", "a", "--next", "b").code == 0
    assert "handoff: degraded" in rehydrate("resume").out
    r = rehydrate("handoff", "--clear")
    assert r.code == 0 and "cleared" in r.out, r
    assert rehydrate("checkpoint", "--done", "c", "--next", "d").code == 0
    brief = rehydrate("resume").out
    assert "handoff: n/a: no handoff note (state/20_handoff.md cleared)" in brief and "## Handoff" not in brief
    assert "confidence: recovered" in brief
    assert rehydrate("verify").code == 0
    assert rehydrate("handoff", "--clear", "--file", "notes.md").code == 2
    empty = rehydrate("handoff", stdin="  \n")
    assert empty.code == 2 and "handoff --clear" in empty.err, empty
    assert rehydrate("handoff", stdin="Next: the CLI\n").code == 0
    assert "Next: the CLI" in rehydrate("resume").out
