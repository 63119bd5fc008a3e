"""Two branches that each recorded decisions, rejected approaches, checkpoints and handoffs, integrated with git's
everyday commands: `git merge` (both ways), `git rebase`, `git cherry-pick A..B` and `git pull`
(`--no-rebase`, `--rebase`) from a bare remote into a fresh clone. No conflict in state/ (the committed
state/.gitattributes merges the logs by union), every record of both sides read once, the merged lines of work named
by `status` until a checkpoint chooses, the next write joining them with a merge record, and `verify` clean after it.

A union-merged 99_next.md or 20_handoff.md is view-merged (information) until the next write renders it whole.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

WP2_VIEWS = {"state/99_next.md", "state/20_handoff.md"}


def _work(g: Any, r: Path, side: str) -> None:
    """A decision, a rejected approach, a checkpoint and a handoff, in three commits."""
    g.ok(r, "invariant", f"{side}: parse with a table", "--because", "it is fast")
    g.commit(r, f"{side} 1")
    g.ok(r, "reject", f"{side}: a regex parser", "--because", "it cannot nest")
    g.ok(r, "checkpoint", "--done", f"{side} done", "--next", f"{side} next")
    g.commit(r, f"{side} 2")
    g.ok(r, "handoff", stdin=f"{side}: the handoff note\n")
    g.commit(r, f"{side} 3")


def _log_hashes(g: Any, r: Path, rev: str) -> list[str]:
    text = g.git(r, "show", f"{rev}:state/wal/agent.jsonl").out
    return [json.loads(line)["h"] for line in text.splitlines() if line.strip()]


def _others(problems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Problems other than a union-merged 99/20 (view-merged: information, until the next write renders it)."""
    return [p for p in problems if not (p["code"] == "view-merged" and p["file"] in WP2_VIEWS)]


def _integrate(g: Any, tmp_path: Path, how: str) -> tuple[Path, set[str]]:
    """main and feat each did _work from one committed state; integrated as `how`. Returns the folder where the
    result is checked out and every record's h of both sides."""
    r = g.repo(tmp_path / "repo")
    if how.startswith("pull"):
        remote = g.bare(tmp_path / "remote.git", seed=r)
        other = g.clone(remote, tmp_path / "other")
        _work(g, other, "feat")
        g.git(other, "push", "-q", "origin", "main")
        _work(g, r, "main")
        g.git(r, "pull", "-q", "--no-rebase" if how == "pull-merge" else "--rebase", "origin", "main")
        ours, theirs = "HEAD", "origin/main"
    else:
        g.branch(r, "feat")
        _work(g, r, "feat")
        g.switch(r, "main")
        _work(g, r, "main")
        ours, theirs = "main", "feat"
        if how == "merge":
            g.merge(r, "feat")
        elif how == "merge-back":
            g.switch(r, "feat")
            g.merge(r, "main")
        elif how == "rebase":
            g.switch(r, "feat")
            g.git(r, "rebase", "-q", "main")
            ours, theirs = "main", "ORIG_HEAD"
        else:
            assert how == "cherry-pick"
            g.git(r, "cherry-pick", "main..feat")
    assert g.unmerged(r) == []
    expected = set(_log_hashes(g, r, ours)) | set(_log_hashes(g, r, theirs))
    return r, expected


HOW = ["merge", "merge-back", "rebase", "cherry-pick", "pull-merge", "pull-rebase"]


@pytest.mark.parametrize("how", HOW)
def test_two_branches_integrate_without_conflict_and_the_next_write_joins_them(
    git_env: Any, tmp_path: Path, how: str
) -> None:
    g = git_env
    r, expected = _integrate(g, tmp_path, how)
    assert not [p for p in g.porcelain(r).splitlines() if p[:2] in ("UU", "AA", "DU", "UD")]

    status = g.rh(r, "status", "--json").json()  # the next command reconciles: both lines of work are named
    assert _others(status["problems"]) == [], status
    mine = "feat" if how in ("merge-back", "rebase") else "main"  # the line this worktree's cache ends on, first
    other = "main" if mine == "feat" else "feat"
    assert [line["checkpoint"]["next"] for line in status["lines"]] == [f"{mine} next", f"{other} next"], status
    text = g.rh(r, "status").out
    assert "2 lines of work were merged" in text and 'next: "feat next"' in text and 'next: "main next"' in text, text
    verify = g.rh(r, "verify", "--json").json()
    assert _others(verify["problems"]) == [], verify

    records = g.records(r)  # every record of both sides, once
    assert sorted(x["h"] for x in records) == sorted(expected)
    assert len(expected) == 1 + 2 * 4

    g.ok(r, "invariant", "after the merge: keep both parsers", "--because", "both sides need one")
    lines = g.wal_lines(r)
    merges = [x for x in lines if x["op"] == "merge"]
    assert len(merges) == 1 and len(merges[0]["parents"]) == 1 and lines[-1]["prev"] == merges[0]["h"]
    assert (r / "state" / "99_next.md").read_text().startswith("# Next: 2 lines of work were merged")
    status = g.rh(r, "status", "--json").json()  # the merged lines are shown until a checkpoint chooses
    assert len(status["lines"]) == 2 and _others(status["problems"]) == [], status
    assert _others(g.rh(r, "verify", "--json").json()["problems"]) == []
    assert len(g.records(r)) == len(expected) + 2

    g.ok(r, "checkpoint", "--done", "merged both sides", "--next", "the chosen next")
    status = g.rh(r, "status", "--json").json()
    assert status["lines"] == [] and status["next"]["next"] == "the chosen next", status
    assert _others(status["problems"]) == [], status
    assert _others(g.rh(r, "verify", "--json").json()["problems"]) == []
    g.commit(r, "after the merge", "state")
    assert g.porcelain(r) == ""


def test_the_lines_name_each_branch_and_last_checkpoint(git_env: Any, tmp_path: Path) -> None:
    g = git_env
    r, _ = _integrate(g, tmp_path, "merge")
    lines = g.rh(r, "status", "--json").json()["lines"]
    assert [(line["branch"], line["checkpoint"]["done"]) for line in lines] == [
        ("main", "main done"),
        ("feat", "feat done"),
    ]
    seqs = {line["checkpoint"]["seq"] for line in lines}
    assert seqs == {4}  # each side's checkpoint is the same generation: seq is no longer unique


def test_status_and_verify_exit_0_after_a_merge(git_env: Any, tmp_path: Path) -> None:
    g = git_env
    r, _ = _integrate(g, tmp_path, "merge")
    assert g.rh(r, "status").code == 0
    assert g.rh(r, "verify").code == 0
    g.ok(r, "invariant", "after the merge", "--because", "joined")
    g.ok(r, "status")
    g.ok(r, "verify")


OPS = ("invariant", "reject", "checkpoint", "handoff", "rotate")


def _random_work(g: Any, r: Path, side: str, rng: random.Random, n: int) -> None:
    for i in range(n):
        op = rng.choices(OPS, weights=(4, 3, 3, 2, 1))[0]
        if op in ("invariant", "reject"):
            g.ok(r, op, f"{side} {op} {i}", "--because", f"reason {i}")
        elif op == "checkpoint":
            g.ok(r, "checkpoint", "--done", f"{side} step {i}", "--next", f"{side} next {i}")
        elif op == "handoff":
            g.ok(r, "handoff", stdin=f"{side} handoff {i}\n")
        else:
            g.ok(r, "rotate")
        if rng.random() < 0.5 or i == n - 1:
            g.commit(r, f"{side} {i}", "state")


def _all_hashes(g: Any, r: Path, rev: str) -> set[str]:
    """Every record's h of the state at rev: its logs and archives."""
    names = g.git(r, "ls-tree", "-r", "--name-only", rev, "state/wal", "state/archive").out.split()
    found: set[str] = set()
    for name in names:
        if name.endswith(".jsonl"):
            text = g.git(r, "show", f"{rev}:{name}").out
            found |= {json.loads(line)["h"] for line in text.splitlines() if line.strip()}
    return found


def _log_problems(out: dict[str, Any]) -> list[dict[str, Any]]:
    """Every problem but information (the second merge follows a switch away from the first one's branch; a union
    merged 99/20 or kept both sides' copy of a line of 10 until the next write)."""
    info = ("switched", "duplicate-record", "duplicate-line", "view-merged")
    return [p for p in out["problems"] if p["code"] not in info]


INTEGRATIONS = [  # (how, the branch it lands on, the other): merged, rebased and cherry-picked both ways
    (how, into, other)
    for how in ("merge", "rebase", "cherry-pick")
    for into, other in (("main", "feat"), ("feat", "main"))
]


def _random_merge(g: Any, tmp_path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    r = g.repo(tmp_path / "repo")
    g.branch(r, "feat")
    _random_work(g, r, "feat", rng, n)
    g.switch(r, "main")
    _random_work(g, r, "main", rng, n)
    expected = _all_hashes(g, r, "main") | _all_hashes(g, r, "feat")
    for how, into, other in INTEGRATIONS:
        g.git(r, "switch", "-q", "-C", f"{how}-{into}", into)
        if how == "merge":
            g.merge(r, other)
        elif how == "rebase":  # this branch's commits replayed on the other
            g.git(r, "rebase", "-q", other)
        else:  # the other branch's commits picked onto this one
            g.git(r, "cherry-pick", f"{into}..{other}")
        assert g.unmerged(r) == [], how
        assert _all_hashes(g, r, "HEAD") == expected, how  # nothing lost (logs and archives)
        hashes = [x["h"] for x in g.records(r)]
        assert len(hashes) == len(set(hashes)), how  # nothing twice (a repeated line is skipped, as information)
        status = g.rh(r, "status", "--json").json()
        assert _log_problems(status) == [], (how, status)
        if how == "merge":
            assert len(status["lines"]) == 2, status
        verify = g.rh(r, "verify", "--json").json()
        assert _log_problems(verify) == [], (how, verify)
        g.ok(r, "invariant", f"joined by {how} into {into}", "--because", "integrated")
        verify = g.rh(r, "verify", "--json").json()
        assert _log_problems(verify) == [], (how, verify)
        g.git(r, "checkout", "-q", "--", ".")
        g.git(r, "clean", "-qfd", "state")


@pytest.mark.parametrize(("n", "seed"), [(8, 13), (30, 106)])  # 106: both sides' rotates carry a handoff
def test_random_work_on_two_branches_merges_rebases_and_cherry_picks_both_ways(
    git_env: Any, tmp_path: Path, n: int, seed: int
) -> None:
    _random_merge(git_env, tmp_path, n, seed=seed)


def test_both_sides_rotating_after_the_same_record_merge_without_a_conflict(git_env: Any, tmp_path: Path) -> None:
    """Each archive holds its own log and its own rotate record: a name of its own, never an add/add conflict."""
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.branch(r, "feat")
    g.ok(r, "rotate")
    g.commit(r, "feat rotated", "state")
    g.switch(r, "main")
    g.ok(r, "rotate")
    g.commit(r, "main rotated", "state")
    g.merge(r, "feat")
    assert g.unmerged(r) == []
    assert len(list((r / "state" / "archive").iterdir())) == 2
    g.ok(r, "checkpoint", "--done", "merged", "--next", "go on")
    assert g.rh(r, "verify", "--json").json()["problems"] == []


@pytest.mark.parametrize("into", ["main", "feat"])
@pytest.mark.parametrize("rotated", ["main", "feat"])
def test_a_rotate_on_one_side_merges_with_the_other_sides_entries(
    git_env: Any, tmp_path: Path, rotated: str, into: str
) -> None:
    """One side rotated its log (its init archived), the other recorded entries on the init: the union brings the
    init back beside the rotate. Its header lines are the rotate's (never a missing latch), the other side's entries
    stay recorded, and the records the rotate archived are not named as rolled back."""
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.ok(r, "invariant", "base: an entry before the fork", "--because", "both sides have it")
    g.commit(r, "base entry", "state")
    g.branch(r, "feat", "main")
    g.switch(r, "main")
    for side in sorted(("feat", "main"), key=lambda s: s == rotated):  # the side that rotates works last
        g.switch(r, side)
        _work(g, r, side)
    g.ok(r, "rotate")
    g.commit(r, f"{rotated} rotated", "state")
    other = "feat" if into == "main" else "main"
    g.switch(r, into)  # no command in between: this worktree's cache last saw the rotating side
    g.merge(r, other)
    assert g.unmerged(r) == []
    for command in ("status", "verify"):
        out = g.rh(r, command, "--json").json()
        assert [p for p in out["problems"] if p["code"] not in ("view-merged", "duplicate-line")] == [], out
    g.ok(r, "checkpoint", "--done", "merged", "--next", "go on")
    text = (r / "state" / "10_invariants.md").read_text()
    assert "main: parse with a table" in text and "feat: parse with a table" in text
    assert text.count("base: an entry before the fork") == 1
    out = g.rh(r, "verify", "--json").json()
    assert out["problems"] == [], out


def test_since_my_last_checkpoint_follows_my_line_after_a_merge(git_env: Any, tmp_path: Path) -> None:
    """After a merge the other line's records come last in the file: "since the last checkpoint" is read back along
    this worktree's own line (its checkpoint 2, not feat's checkpoint 4), until a checkpoint chooses."""
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.branch(r, "feat")
    for i in (1, 2, 3):
        g.ok(r, "checkpoint", "--done", f"feat {i}", "--next", f"feat next {i}")
    g.commit(r, "feat", "state")
    g.switch(r, "main")
    g.ok(r, "checkpoint", "--done", "main 1", "--next", "main next")
    g.commit(r, "main", "state")
    g.merge(r, "feat")
    text = g.rh(r, "recover").out
    assert "since checkpoint 2" in text and "since checkpoint 4" not in text, text
    text = g.rh(r, "status").out  # this worktree's line first, each line below
    assert "last done:   main 1\nnext action: main next\n" in text and 'next: "feat next 3"' in text, text
    assert g.rh(r, "status", "--json").json()["next"] == {"done": "main 1", "next": "main next"}


def test_the_first_checkpoint_after_a_merge_keeps_my_lines_goal(git_env: Any, tmp_path: Path) -> None:
    """Each side changed the current goal; 99_next.md holds both: the checkpoint that chooses keeps this worktree's
    line's goal (its last checkpoint's), not the one that comes last in the file."""
    g = git_env
    r = g.repo(tmp_path / "repo")
    g.branch(r, "feat")
    g.ok(r, "checkpoint", "--done", "f", "--next", "f next", "--goal", "the feat goal")
    g.commit(r, "feat", "state")
    g.switch(r, "main")
    g.ok(r, "checkpoint", "--done", "m", "--next", "m next", "--goal", "the main goal")
    g.commit(r, "main", "state")
    g.merge(r, "feat")
    g.ok(r, "checkpoint", "--done", "merged", "--next", "go on")
    assert g.records(r)[-1]["data"]["goal"] == "the main goal"


@pytest.mark.slow
def test_random_work_on_two_branches_merges_rebases_and_cherry_picks_both_ways_full_size(
    git_env: Any, tmp_path: Path
) -> None:
    _random_merge(git_env, tmp_path, 50, seed=1313)
