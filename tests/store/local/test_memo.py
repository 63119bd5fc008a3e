"""A State object remembers what it wrote (store/local/memo.py): its next command neither reads back nor
decodes its own last record, rollback cache or 99_next.md, while each file's fingerprint is the one it had right
after the write. Everything in state/ may change between two commands (another writer, an editor, damage): then the
file is read as if nothing were known. And the system calls of a checkpoint are counted, not timed."""

from __future__ import annotations

import itertools
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import records
from rehydrate.fs import write as fsio
from rehydrate.store import reconcile
from rehydrate.store.git import info as gitinfo
from rehydrate.store.layout import NEXT
from rehydrate.store.local import seen
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import scan as walscan


def _changed(path: str, offset: int, byte: bytes) -> None:
    """One byte of a file overwritten in place (same inode, same size), its mtime moved on a second: a fingerprint
    that differs on any kernel, however coarse its clock."""
    before = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(byte)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))


def test_two_objects_writing_in_turn_keep_one_chain(state: State) -> None:
    """Each object's memory of the log's last record holds only while the log is as it left it: the other's
    appends change the fingerprint, so each checkpoint follows the record written last, whoever wrote it."""
    other = State.open(state.root)
    for i in range(4):
        for writer in (state, other):
            out = writer.checkpoint(done=f"step {i}", next=f"step {i + 1}")
            assert out.ok, out.problems
    recs = records(state.root)
    assert [r["seq"] for r in recs] == list(range(1, len(recs) + 1))
    assert all(b["prev"] == a["h"] for a, b in itertools.pairwise(recs))
    assert State.open(state.root).verify().ok


def test_a_damaged_last_record_is_found_by_the_object_that_wrote_it(state: State) -> None:
    """The writer remembers its last record; a flipped byte in that line (in place, same size) changes the log's
    fingerprint, so the next command reads the line, finds it damaged and cuts it, as any other process would."""
    state.checkpoint(done="parser", next="checker")
    size = os.path.getsize(state.wal_path)
    last = records(state.root)[-1]
    i = Path(state.wal_path).read_bytes().rindex(b'"done":"parser"') + len(b'"done":"')
    _changed(state.wal_path, i, b"P")
    assert os.path.getsize(state.wal_path) == size
    out = state.checkpoint(done="checker", next="emitter")
    assert any("damaged" in r or "torn" in r or ".broken" in r for r in out.repaired), out.repaired
    recs = records(state.root)
    assert last["h"] not in [r["h"] for r in recs]  # the damaged record was cut, never chained to
    assert recs[-1]["prev"] == recs[-2]["h"]
    assert State.open(state.root).verify().ok


def test_a_changed_cache_file_is_read_not_remembered(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rollback cache this object saved is reused while the file is the one it wrote; garbage written over it
    (another clone's cache, damage) makes the next command find no cache, and check the whole chain once."""
    checks: list[object] = []
    real = walscan.check_chain

    def counting(*args: Any, **kwargs: Any) -> Any:
        checks.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(walscan, "check_chain", counting)
    state.checkpoint(done="a", next="b")
    state.checkpoint(done="b", next="c")
    assert checks == []  # the cache as this object left it: the tail only
    data = Path(state.seen_path).read_bytes()
    _changed(state.seen_path, 0, b"0" if data[:1] != b"0" else b"1")  # its checksum no longer matches
    assert state.checkpoint(done="c", next="d").ok
    assert len(checks) == 1
    assert state.checkpoint(done="d", next="e").ok
    assert len(checks) == 1  # and the cache written then is remembered again


def test_the_view_it_wrote_is_not_read_back_until_it_changes(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    state.checkpoint(done="a", next="b")
    path = state.path(NEXT)
    opened: list[str] = []
    real = os.open

    def spy(p: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(p))
        return real(p, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    assert state.view_bytes(NEXT) == Path(path).read_bytes()
    assert path not in opened
    _changed(path, 0, b"%")  # "# Next" becomes "% Next"
    assert state.view_bytes(NEXT) == Path(path).read_bytes()
    assert path in opened


class _Counting:
    """Every system call a checkpoint can make, counted by name (os functions and fcntl.flock patched)."""

    NAMES = ("open", "lstat", "stat", "fstat", "pread", "read", "listdir", "scandir", "write", "fsync", "replace")

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: Counter[str] = Counter()
        for name in self.NAMES:
            monkeypatch.setattr(os, name, self._spy(name, getattr(os, name)))

    def _spy(self, name: str, real: Any) -> Any:
        def spy(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return real(*args, **kwargs)

        return spy


def _stub_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitinfo, "start", lambda state_dir: gitinfo.Pending(None, None, "stubbed"))
    monkeypatch.setattr(gitinfo, "finish", lambda pending: {"head": "0" * 40, "branch": "main", "dirty": []})


def test_a_checkpoint_makes_the_system_calls_it_needs_and_no_more(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third checkpoint of one object, git left out: three fsyncs (the log, the view, its folder), nothing read
    back (no pread, no listing), one open per file it writes plus the lock's two and the absent handoff's probe.
    A checkpoint once made 68 system calls against 12 for the raw writes; 52 before the memo, 43 with it (the figures
    this pins: a new read or stat on the path shows here)."""
    _stub_git(monkeypatch)
    state.checkpoint(done="a", next="b")
    state.checkpoint(done="b", next="c")
    counting = _Counting(monkeypatch)
    fsyncs: list[str] = []
    real_fsync = fsio.calls.fsync

    def fsync(fd: int, point: str) -> None:
        fsyncs.append(point)
        real_fsync(fd, point)

    monkeypatch.setattr(fsio.calls, "fsync", fsync)
    assert state.checkpoint(done="c", next="d").ok
    calls = counting.calls
    assert sorted(fsyncs) == ["view.replace.dir", "view.replace.file", "wal.append"]
    assert calls["fsync"] == 3 and calls["replace"] == 1 and calls["write"] == 3
    assert calls["pread"] == calls["read"] == calls["listdir"] == calls["scandir"] == 0, calls
    # the state folder and .lock (the lock); the log, the temporary view, the folder's sync, the cache (the writes);
    # the handoff's absence (an open that fails: the cache has no entry for a file that is not there)
    assert calls["open"] == 7, calls
    # (20: the actor check, the per-worktree cache folder and the .gitattributes version each look once;
    # 22: the signature check looks for state/keys/ and, where it is absent, for this clone's trust file)
    assert calls["lstat"] + calls["stat"] + calls["fstat"] <= 22, calls


def test_a_new_object_reads_what_the_memo_skips(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """The counts above are the memo's: the same checkpoint from a fresh object (the next process) reads the cache
    file and the log's last line (and decodes it), as before."""
    _stub_git(monkeypatch)
    state.checkpoint(done="a", next="b")
    fresh = State.open(state.root)
    decoded: list[bytes] = []
    real = reconcile.wal.decode

    def decode(line: bytes) -> Any:
        decoded.append(line)
        return real(line)

    monkeypatch.setattr(reconcile.wal, "decode", decode)
    counting = _Counting(monkeypatch)
    assert fresh.checkpoint(done="b", next="c").ok
    assert counting.calls["pread"] >= 2 and len(decoded) == 1, (counting.calls, len(decoded))
    decoded.clear()
    counting.calls.clear()
    assert fresh.checkpoint(done="c", next="d").ok
    assert counting.calls["pread"] == 0 and decoded == [], (counting.calls, len(decoded))


def test_a_cache_that_vouches_for_the_remembered_record_does_not_make_it_trusted(state: State) -> None:
    """The log's last line rewritten (same seq, another record) and a cache crafted to say the log still ends with
    the record this object wrote (its seq and hash, the new log's fingerprint, the same offset): the memo holds only
    while the log's fingerprint is the one the append left, so the object reads the line as any process would, and
    its next record follows the line that is there."""
    state.checkpoint(done="a", next="b")
    mine = records(state.root)[-1]
    offset = os.path.getsize(state.wal_path) - len(wal.encode(mine))
    os.truncate(state.wal_path, offset)
    other = State.open(state.root)
    other.checkpoint(done="x", next="y")  # seq as mine, another hash (the rollback of mine is named)
    theirs = records(state.root)[-1]
    assert theirs["seq"] == mine["seq"] and theirs["h"] != mine["h"]
    crafted = seen.Seen.load(state.seen_path)
    assert crafted is not None and crafted.at == offset
    crafted.ring = [*crafted.ring[:-1], (mine["seq"], mine["h"][:16])]
    crafted.save(state.seen_path, crafted.dirs)
    state.checkpoint(done="b", next="c")
    recs = records(state.root)
    assert recs[-1]["prev"] == theirs["h"], "chained to the remembered record, not to the log's"
    assert all(b["prev"] == a["h"] for a, b in itertools.pairwise(recs))


def test_the_cache_is_written_as_the_canonical_json_of_its_fields(state: State) -> None:
    """Seen.dump joins the cache's JSON from its values' (it is written at every command): byte for byte what
    wal.canonical gives for the same fields, with or without a checkpoint, a rollback, views, odd characters."""

    def canonical(c: seen.Seen) -> bytes:
        ring = c._text if c._ring is None else " ".join(f"{s}:{h}" for s, h in c.ring)
        fields = {
            "v": 3,
            "fp": c.fp,
            "at": c.at,
            "ring": ring,
            "cp": [c.cp[0], c._cleaned(c.cp[1]), c.cp_h] if c.cp else None,
            "branch": c.branch,
            "heads": c.heads,
            "merged": c.merged,
            "lost": c.lost,
            "views": {name: list(pair) for name, pair in c.views.items()},
            "dirs": c.dirs,
        }
        if c.scan:
            fields["scan"] = c.scan
        body = wal.canonical(fields)
        return wal.sha256(body).encode()[:16] + b" " + body

    cache = seen.Seen.load(state.seen_path)
    assert cache is not None and cache.cp is not None and cache.views
    empty = seen.Seen()
    empty.saw({"seq": 1, "h": "ab", "op": "init", "data": {}})
    odd = seen.Seen.load(state.seen_path)
    assert odd is not None
    odd.cp = (7, 'quote " backslash \\ tab \t é \u2028 🙂')
    odd.lost = {"count": 2, "exact": False, "to": 9, "h": "f" * 16, "end": 7, "next": "é\n"}
    odd.views = {"z": ("1:2", 'b"'), "a": ("3", "c\\")}
    odd.dirs, odd.fp = "\u00e9|x", 'q"'
    odd.scan = 'lines-sha256:1:2:ab 3 "é'
    for c in (cache, empty, odd):
        assert c.dump() == canonical(c)
        loaded = seen.Seen.load(state.seen_path) if c is cache else None
        assert loaded is None or loaded.dump() == c.dump()
