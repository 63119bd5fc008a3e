"""The library: State's behaviour on real folders (what the CLI tests do not reach directly)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from conftest import records
from rehydrate.errors import RehydrateError, StateMissing, UsageError
from rehydrate.fs import write as fsio
from rehydrate.store.git import info as gitinfo
from rehydrate.store.latches import binding
from rehydrate.store.local import journal
from rehydrate.store.state import State
from rehydrate.store.wal import digest
from rehydrate.store.wal import record as wal


def test_rotate_keeps_bindings_and_finishes_when_interrupted(state: State) -> None:
    out = state.rotate()
    root = Path(state.root)
    archive = root / out.record["data"]["archive"]
    assert archive.read_bytes().endswith(wal.encode(out.record))
    assert (root / "wal" / "agent.jsonl").read_bytes() == wal.encode(out.record)
    assert out.record["data"]["goal"] == {"goal": "Ship the parser", "done_when": "all tests pass"}
    assert len(out.record["data"]["lines"]) == 5  # three header lines, the decision, the rejected approach
    state.checkpoint(done="after", next="more")
    assert state.verify().ok
    # a rotate interrupted after its record: the next command finishes it
    log = root / "wal" / "agent.jsonl"
    before = log.read_bytes()
    last = records(root)[-1]
    rec = wal.seal(
        {
            **last,
            "seq": last["seq"] + 1,
            "prev": last["h"],
            "op": "rotate",
            "data": {**out.record["data"], "archive": "archive/manual.jsonl"},
        }
    )
    with open(log, "ab") as f:
        f.write(wal.encode(rec))
    assert [p.code for p in state.verify().problems] == ["interrupted-rotate"]
    state.verify(repair=True)
    assert (root / "archive" / "manual.jsonl").read_bytes() == before + wal.encode(rec)
    assert log.read_bytes() == wal.encode(rec)
    assert state.verify().ok


def test_init_refuses_stray_views_and_bad_actor(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "99_next.md").write_text("x")
    with pytest.raises(RehydrateError, match="exists but no WAL"):
        State.init(tmp_path / "state", "g")
    with pytest.raises(UsageError):
        State.init(tmp_path / "s2", "g", actor="../evil")
    with pytest.raises(StateMissing):
        State.open(tmp_path / "nowhere")


def test_record_refuses_ops_that_write_views(state: State) -> None:
    for op in ("checkpoint", "rotate", "invariant", "Bad Op"):
        with pytest.raises(UsageError):
            state.record(op, {"x": 1})
    assert state.record("compaction", {"trigger": "auto"}).record["op"] == "compaction"
    assert state.verify().ok


def test_disk_errors_are_messages_not_bugs(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    class Full(fsio.Calls):
        def write(self, fd: int, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsio, "calls", Full())
    with pytest.raises(RehydrateError, match="No space left"):
        state.checkpoint(done="x", next="y")
    monkeypatch.setattr(fsio, "calls", fsio.Calls())
    state.verify(repair=True)
    assert state.verify().ok


def test_rotate_copies_where_hard_links_are_not_allowed(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    class NoLinks(fsio.Calls):
        def link(self, src: str, dst: str) -> None:
            raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(fsio, "calls", NoLinks())
    out = state.rotate()
    assert (Path(state.root) / out.record["data"]["archive"]).read_bytes().endswith(wal.encode(out.record))
    assert state.verify().ok


def test_a_refused_lock_starts_no_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo / "state"
    State.init(root, "Read-only checkout")
    (root / ".lock").unlink()
    real_open = os.open
    started: list[object] = []
    real_start = gitinfo.start

    def read_only(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if str(path).endswith(".lock") and flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def counting_start(root: str) -> object:
        started.append(root)
        return real_start(root)

    monkeypatch.setattr(os, "open", read_only)
    monkeypatch.setattr(gitinfo, "start", counting_start)
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(RehydrateError, match="lock file"):
        State.open(root).checkpoint(done="x", next="y")
    assert started == []  # git is started only once the lock is held
    assert set(os.listdir("/proc/self/fd")) <= before


def test_library_errors_are_in_domain_words_and_name_their_field(state: State) -> None:
    with pytest.raises(UsageError) as e:
        state.invariant("Use Pratt", because="  ")
    assert (e.value.message.split(":")[0], e.value.field) == ("the reason is empty", "because")
    assert "--" not in str(e.value)
    for done, nxt, field in (("", "y", "done"), ("x", "", "next")):
        with pytest.raises(UsageError) as e:
            state.checkpoint(done=done, next=nxt)
        assert e.value.field == field and "--" not in str(e.value)


def test_reading_locks_reconciles_and_logs_a_resume(state: State) -> None:
    with state.reading() as snap:
        assert snap.last["op"] == "checkpoint" and snap.outcome().ok
        assert state.view_bytes("99_next.md", snap) == Path(state.path("99_next.md")).read_bytes()
        rec = state.log_resume(snap, {"read": []})
    assert (rec["op"], rec["prev"], rec["seq"]) == ("resume", None, 1)  # the journal's first record: its own chain
    assert journal.tail(state, 1) == [rec] and records(state.root)[-1] == snap.last and state.verify().ok


def test_a_write_hashes_10_invariants_once(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reconciliation hashes 10_invariants.md's lines once to compare it with the last record, and not at all when
    the cache (seen.py) says the file is as this clone found it; the new record binds the same running hash without
    hashing the file again. A write that appends a line hashes only that line more."""
    from rehydrate import brief

    path = Path(state.path("10_invariants.md"))
    for i in range(200):
        state.invariant(f"decision {i:03d} keeps the file a few kilobytes long", because="the count shows")
    hashed = [0]
    real = digest.HASHER[0]

    class Counting:
        def __init__(self, data: bytes = b"") -> None:
            hashed[0] += len(data)
            self.inner = real(data)

        def update(self, data: bytes) -> None:
            hashed[0] += len(data)
            self.inner.update(data)

        def digest(self) -> bytes:
            return bytes(self.inner.digest())

        def hexdigest(self) -> str:
            return str(self.inner.hexdigest())

    monkeypatch.setattr(digest, "HASHER", [Counting])
    size = path.stat().st_size
    once = size + 32 * size // 60  # each line once, after the 32-byte running hash (every line is over 60 bytes)
    for write in (lambda: state.checkpoint(done="a", next="b"), lambda: brief.resume(state)):
        os.utime(path)  # touched: the cache no longer vouches for the file, which is read and hashed, once
        hashed[0] = 0
        write()
        assert size <= hashed[0] < once + 8192, (hashed[0], size)
        hashed[0] = 0
        write()  # the cache says the file is as this clone found it: neither read nor hashed
        assert hashed[0] < 8192 < size, hashed[0]
    hashed[0] = 0
    state.invariant("one more", because="the file changes")  # the cache knows the file: only the new line hashed
    assert hashed[0] < 8192 < size, hashed[0]
    os.utime(path)
    hashed[0] = 0
    state.invariant("one more", because="the file changes")
    assert size <= hashed[0] < once + 8192, (hashed[0], size)
    assert records(state.root)[-1]["views"]["10_invariants.md"] == binding.lines_of(path.read_bytes()).text()
