"""Rollbacks are never silent: a log that no longer holds records this clone saw (a checkout of
state/, a branch switch, deleted lines) is named by every command until the next checkpoint records the loss; the
cache that remembers what was seen is untrusted and never makes a command crash or hang."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import git, no_crash, records, rehydrate
from rehydrate import brief
from rehydrate.store.state import State

TIMEOUT = 30.0


def _log(root: Path) -> Path:
    return root / "wal" / "agent.jsonl"


def _event(repo: Path) -> str:
    return json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})


def test_a_checkout_of_state_after_more_writes_is_named_until_the_next_checkpoint(repo: Path) -> None:
    st, _ = State.init(repo / "state", "Ship the parser")
    st.checkpoint(done="lexer", next="write the parser")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state")
    st.checkpoint(done="parser", next="write the type checker")
    brief.resume(st)  # logged in the journal (store/local/journal.py), not the WAL
    st.checkpoint(done="checker", next="write the code generator")
    st.record("compaction", {"trigger": "auto"})
    assert State.open(repo / "state").verify().ok
    git(repo, "checkout", "HEAD", "--", "state/")  # the WAL loses its last 3 records, the views go back with it

    v = rehydrate("verify")
    no_crash(v)
    assert v.code == 1 and "[rolled-back]" in v.out, v
    assert "3 records" in v.out and "next action: write the code generator" in v.out, v
    assert "branch switch" in v.out, v  # the legitimate reason is named
    s = rehydrate("status")
    assert s.code == 1 and "[rolled-back]" in s.out, s
    h = rehydrate("hook", "claude", stdin=_event(repo))
    no_crash(h)
    text = json.loads(h.out)["hookSpecificOutput"]["additionalContext"]
    assert "rolled back: 3 records" in text and "write the code generator" in text, text
    # resume and compaction records do not end it: the agent may not have seen it
    r = rehydrate("resume")
    assert r.code == 1 and "rolled-back" in r.out, r
    State.open(repo / "state").record("compaction", {"trigger": "auto"})
    v = rehydrate("verify")
    assert v.code == 1 and "3 records" in v.out, v
    # the next checkpoint records what was lost, and ends the report
    c = rehydrate("checkpoint", "--done", "looked at the rollback", "--next", "redo the type checker")
    assert c.code == 0 and "[rolled-back]" in c.err, c
    last = records(repo / "state")[-1]
    assert last["op"] == "checkpoint"
    lost = last["data"]["rolled_back"]
    assert (lost["count"], lost["next"], lost["exact"]) == (3, "write the code generator", True)
    assert rehydrate("verify").code == 0
    assert rehydrate("status").code == 0


@pytest.mark.parametrize("op", ["resume", "compaction"])
def test_deleting_the_last_records_by_hand_is_named(state: State, op: str) -> None:
    for _ in range(2):
        if op == "resume":  # as an older version logged a read, in the WAL (now in the journal: store/local/journal.py)
            state.record("resume", {"chars": 1})
        else:
            state.record("compaction", {"trigger": "auto"})
    log = _log(Path(state.root))
    lines = log.read_bytes().splitlines(keepends=True)
    assert [json.loads(x)["op"] for x in lines[-2:]] == [op, op]
    log.write_bytes(b"".join(lines[:-2]))
    out = State.open(state.root).verify()
    (p,) = out.problems
    assert p.code == "rolled-back" and p.file == "state/wal/agent.jsonl", p
    assert "2 records" in p.message and "none of them was a checkpoint" in p.message, p
    r = brief.resume(State.open(state.root))
    assert r.confidence == "degraded (state)" and "rolled-back" in r.text


def test_a_branch_switch_is_named_and_switching_back_ends_it(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state")
    git(repo, "checkout", "-qb", "feature")
    assert rehydrate("checkpoint", "--done", "a", "--next", "feature work").code == 0
    git(repo, "commit", "-qam", "feature state")
    git(repo, "checkout", "-q", "main")
    v = rehydrate("verify")  # a switch is information, not a discrepancy: named, exit 0
    assert v.code == 0 and "[switched]" in v.out and "was feature" in v.out and '"feature work"' in v.out, v
    s = rehydrate("status")  # a repairing command pins it in the cache
    assert s.code == 0 and "[switched]" in s.out, s
    git(repo, "checkout", "-q", "feature")  # the records are back
    v = rehydrate("verify")
    assert v.code == 0 and "[switched]" not in v.out, v
    assert "[switched]" not in rehydrate("status").out


def test_a_rewritten_log_is_named_with_the_records_that_were_replaced(repo: Path, tmp_path: Path) -> None:
    st, _ = State.init(repo / "state", "g")
    for i in range(3):
        st.checkpoint(done=f"step {i}", next=f"next {i}")
    saved = tmp_path / "saved"
    shutil.copytree(repo / "state", saved)  # the state at record 4, with its own cache
    st.checkpoint(done="step 3", next="the lost next step")
    st.record("compaction", {"trigger": "auto"})  # this clone saw records 5 and 6
    other = State.open(saved)  # another history from record 4 on, as long as this clone's
    other.checkpoint(done="elsewhere", next="elsewhere")
    other.checkpoint(done="elsewhere 2", next="elsewhere 2")
    shutil.copyfile(_log(saved), _log(repo / "state"))
    for name in ("99_next.md", "10_invariants.md"):
        shutil.copyfile(saved / name, repo / "state" / name)
    out = State.open(repo / "state").verify()
    (p,) = out.problems
    assert p.code == "rolled-back", p
    assert "2 records" in p.message and "next action: the lost next step" in p.message, p


def test_a_rollback_across_a_rotate_is_named(state: State, tmp_path: Path) -> None:
    root = Path(state.root)
    before = _log(root).read_bytes()
    state.rotate()
    state.checkpoint(done="after the archive", next="release")
    _log(root).write_bytes(before)  # an old copy of the log, from before the rotate
    problems = State.open(state.root).verify().problems
    assert "rolled-back" in [p.code for p in problems], problems
    (p,) = [p for p in problems if p.code == "rolled-back"]
    assert "2 records" in p.message and "next action: release" in p.message, p


def test_no_report_without_a_rollback(state: State) -> None:
    """Legitimate changes of the log: appends, a rotate, a lost final newline put back, a torn tail cut, a copy of
    the folder, a git checkout of the same bytes."""
    root = Path(state.root)
    brief.resume(state)
    state.rotate()
    state.checkpoint(done="a", next="b")
    log = _log(root)
    whole = log.read_bytes()
    log.write_bytes(whole[:-1])
    assert [p.code for p in State.open(root).verify(repair=True).problems] == []
    with open(log, "ab") as f:
        f.write(b'{"torn')
    State.open(root).verify(repair=True)
    assert State.open(root).verify().ok
    copy = root.parent / "copy"
    shutil.copytree(root, copy)
    assert State.open(copy).verify().ok
    data = log.read_bytes()
    log.unlink()
    log.write_bytes(data)  # a new inode, the same bytes
    assert State.open(root).verify().ok


# ------------------------------------------------------------------------------------------------ the cache


def _hostile_caches(tmp_path: Path) -> dict[str, object]:
    deep = b"[" * 100_000
    return {
        "missing": None,
        "empty": b"",
        "garbage": b"\x00\xff not json",
        "old format": b"123:456:789\n",
        "wrong types": json.dumps({"v": 1, "fp": 7, "ring": "x", "cp": {}, "lost": []}).encode(),
        "a negative ring": json.dumps({"v": 1, "fp": "", "ring": [[5, "a"], [3, "b"]]}).encode(),
        "deep": deep,
        "huge": b" " * (32 << 20),
        "symlink to /dev/zero": "/dev/zero",
        "fifo": "fifo",
        "folder": "folder",
    }


@pytest.mark.parametrize("kind", list(_hostile_caches(Path())))
def test_a_hostile_cache_never_crashes_nor_hangs(repo: Path, state: State, tmp_path: Path, kind: str) -> None:
    cache = Path(state.seen_path)
    value = _hostile_caches(tmp_path)[kind]
    cache.unlink()
    if value == "/dev/zero":
        cache.symlink_to("/dev/zero")
    elif value == "fifo":
        os.mkfifo(cache)
    elif value == "folder":
        cache.mkdir()
    elif isinstance(value, bytes):
        cache.write_bytes(value)
    for args in (
        ["verify"],
        ["status"],
        ["resume"],
        ["checkpoint", "--done", "x", "--next", "y"],
        ["verify", "--repair"],
        ["verify"],
    ):
        r = rehydrate(*args, timeout=TIMEOUT)
        no_crash(r)
        assert r.code == 0, (kind, args, r)
    h = rehydrate("hook", "claude", stdin=_event(repo), timeout=TIMEOUT)
    no_crash(h)
    assert h.code == 0 and "rolled" not in h.out, (kind, h)
