"""An unfinished git merge: a file holding conflict markers is never changed, by any command or
hook; it is named `merge-conflict` with its file and line, with how to finish the merge."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from conftest import git, no_crash, rehydrate
from rehydrate.store.state import State

WAL_REL = "state/wal/agent.jsonl"


def everything(root: Path) -> dict[str, bytes]:
    """Every file of the state folder but the lock and the cache (which are not state and git ignores)."""
    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            p = Path(folder) / name
            if name != ".lock" and not name.endswith(".seen"):
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


def marker_lines(path: Path) -> list[int]:
    return [
        n for n, ln in enumerate(path.read_bytes().split(b"\n"), 1) if ln[:7] in (b"<<<<<<<", b"=======", b">>>>>>>")
    ]


def conflicted_repo(repo: Path) -> None:
    """The same actor checkpointed on two branches; merging them conflicts in its log and in 99_next.md: a merge
    that did not use the committed union attributes (here a local `merge=text`, which takes precedence over them, as
    a clone whose receiving branch lacks them would)."""
    assert rehydrate("init", "--goal", "Ship the parser").code == 0
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* merge=text\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state")
    git(repo, "checkout", "-qb", "side")
    assert rehydrate("checkpoint", "--done", "side work", "--next", "side next").code == 0
    git(repo, "commit", "-qam", "side")
    git(repo, "checkout", "-q", "main")
    assert rehydrate("checkpoint", "--done", "main work", "--next", "main next").code == 0
    git(repo, "commit", "-qam", "main")
    merge = subprocess.run(["git", "merge", "side"], cwd=repo, capture_output=True, text=True, check=False)
    assert merge.returncode != 0 and "CONFLICT" in merge.stdout, merge
    unmerged = git(repo, "diff", "--name-only", "--diff-filter=U").split()
    assert WAL_REL in unmerged and "state/99_next.md" in unmerged, unmerged


def test_a_conflicted_log_is_named_and_never_changed(repo: Path) -> None:
    conflicted_repo(repo)
    root = repo / "state"
    before = everything(root)
    markers = marker_lines(root / "wal" / "agent.jsonl")
    assert len(markers) == 3
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})
    h = rehydrate("hook", "claude", stdin=event)  # the automatic repair that used to cut the last marker
    no_crash(h)
    assert h.code == 0 and "merge-conflict" in h.out and f"line {markers[0]}" in h.out, h
    for args in (
        ["resume"],
        ["status"],
        ["checkpoint", "--done", "x", "--next", "y"],
        ["invariant", "x", "--because", "y"],
        ["rotate"],
    ):
        r = rehydrate(*args)
        no_crash(r)
        assert r.code == 3 and "[merge-conflict]" in r.err and f"{WAL_REL} line {markers[0]}" in r.err, (args, r)
        assert "rehydrate resolve" in r.err and "git checkout --ours" in r.err and "git merge --abort" in r.err, r
    for args in (["verify", "--repair"], ["verify"]):
        v = rehydrate(*args)
        assert v.code == 1, v
    named = re.findall(rf"^problem: {WAL_REL}:([0-9]+): .*\[merge-conflict\]$", v.out, flags=re.M)
    assert [int(n) for n in named] == markers, v.out
    assert "damaged-record" not in v.out and "torn-tail" not in v.out, v.out
    assert everything(root) == before
    assert not list(root.glob("wal/*.broken*"))
    # finishing the merge the way the message says makes the state whole again
    git(repo, "checkout", "--ours", "--", "state/wal/agent.jsonl", "state/99_next.md")
    git(repo, "add", "state")
    git(repo, "commit", "-qm", "merged", "--no-edit")
    assert rehydrate("verify").code == 0


def test_aborting_the_merge_leaves_a_whole_state(repo: Path) -> None:
    conflicted_repo(repo)
    git(repo, "merge", "--abort")
    assert rehydrate("verify").code == 0


def test_a_conflicted_view_is_named_and_never_changed(state: State) -> None:
    root = Path(state.root)
    nxt = root / "99_next.md"
    text = nxt.read_text()
    nxt.write_text(f"<<<<<<< HEAD\n{text}=======\n{text.replace('write the parser', 'other')}>>>>>>> side\n")
    inv = root / "10_invariants.md"
    inv.write_text(inv.read_text() + "<<<<<<< HEAD\n- mine\n=======\n- theirs\n>>>>>>> side\n")
    before = everything(root)
    out = State.open(root).verify(repair=True)
    codes = [(p.code, p.file, p.line) for p in out.problems]
    assert ("merge-conflict", "state/99_next.md", 1) in codes, codes
    assert [c for c in codes if c[1] == "state/10_invariants.md"] == [
        ("merge-conflict", "state/10_invariants.md", n) for n in (8, 10, 12)
    ]
    for args, file in (
        (["checkpoint", "--done", "x", "--next", "y"], "state/99_next.md"),
        (["invariant", "x", "--because", "y"], "state/10_invariants.md"),
        (["reject", "x", "--because", "y"], "state/10_invariants.md"),
    ):
        r = rehydrate(*args)
        no_crash(r)
        assert r.code == 3 and f"refusing to write: {file}" in r.err and "[merge-conflict]" in r.err, (args, r)
    assert "git merge --abort" in next(p.message for p in out.problems if p.file == "state/99_next.md")
    r = rehydrate("resume")
    assert r.code == 1 and "merge-conflict" in r.out, r
    after = everything(root)
    after.pop("wal/agent.jsonl")
    before.pop("wal/agent.jsonl")  # resume logged itself; nothing else changed
    assert after == before


def test_a_markdown_underline_in_the_handoff_is_not_a_conflict(state: State) -> None:
    state.handoff("Where things stand\n=======\n\nThe parser is half done.\n")
    assert State.open(state.root).verify().ok
