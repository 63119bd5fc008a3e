"""10_invariants.md at any size: bound by a running hash over its lines (binding.Lines), so that an append reads and
hashes only its own line; past the 4 MiB view cap it stays writable, verifiable and its tampering named; records
written before the running hash (a plain sha256 of the whole file) are still understood; lines added by hand are
adopted in one batch (crashes in the middle of it: tests/faults/test_adopt_batch.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import records
from rehydrate.fs import write as fsio
from rehydrate.store import layout
from rehydrate.store.latches import binding
from rehydrate.store.latches import latch as latches
from rehydrate.store.layout import INVARIANTS
from rehydrate.store.state import State
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import digest
from rehydrate.store.wal import record as wal


def grow(state: State, n: int, width: int = 60) -> list[str]:
    """n decisions, each with the record `State.invariant` writes for it, written directly through the library
    (wal.seal, binding.Lines.add): a big state in a fraction of a second. Returns the lines."""
    last = walback.read_tail(state.wal_path, 1).records[-1][1]
    bound = binding.Lines.parse(last["views"][INVARIANTS])
    assert bound is not None
    prev, seq, ts, out = last["h"], last["seq"], last["ts"], []
    with open(state.path(INVARIANTS), "ab") as view, open(state.wal_path, "ab") as log:
        for i in range(n):
            text = f"decision {i:07d} " + "x" * width
            ident = "D-" + wal.sha256(f"{state.actor}\0{ts}\0{text}".encode())[:6]
            line = layout.entry_line("D", ident, ts[:10], text, "it scales", None)
            view.write(line.encode() + b"\n")
            bound = bound.add(line.encode())
            data = {"id": ident, "text": text, "because": "it scales", "line": line}
            seq += 1
            rec = {"v": 1, "seq": seq, "ts": ts, "actor": state.actor, "op": "invariant", "data": data}
            rec = wal.seal({**rec, "views": {**last["views"], INVARIANTS: bound.text()}, "prev": prev})
            log.write(wal.encode(rec))
            prev = rec["h"]
            out.append(line)
    return out


def test_an_append_reads_and_hashes_only_its_line(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once reconciliation has found 10 as the last record binds it, the write extends the binding by the new line
    and appends it after reading the file's tail only (counted through os.pread and
    digest.HASHER, the store's sha256)."""
    grow(state, 3000)
    state.checkpoint(done="grew", next="append")
    size = os.path.getsize(state.path(INVARIANTS))
    assert size > 300_000
    read, hashed = [0], [0]
    real_pread, real_sha = os.pread, digest.HASHER[0]

    def pread(fd: int, n: int, offset: int) -> bytes:
        got = real_pread(fd, n, offset)
        read[0] += len(got)
        return got

    def sha(data: bytes = b"") -> object:
        hashed[0] += len(data)
        return real_sha(data)

    begin = State.begin

    def begun(self: State, repair: bool = True) -> object:
        snap = begin(self, repair)
        read[0] = hashed[0] = 0  # from here on: the write itself
        return snap

    monkeypatch.setattr(os, "pread", pread)
    monkeypatch.setattr(digest, "HASHER", [sha])
    monkeypatch.setattr(State, "begin", begun)
    out = state.invariant("one more decision", because="the tail is enough")
    assert out.ok and read[0] < 4096 and hashed[0] < 4096, (read[0], hashed[0])
    assert (
        records(state.root)[-1]["views"][INVARIANTS]
        == binding.lines_of(Path(state.path(INVARIANTS)).read_bytes()).text()
    )
    monkeypatch.undo()
    assert state.verify().ok


def _codes(state: State) -> list[tuple[str, int | None]]:
    return [(p.code, p.line) for p in state.verify().problems]


def test_10_past_4_mib_is_writable_verifiable_and_its_tampering_named(state: State) -> None:
    lines = grow(state, 1100, width=3900)
    path = Path(state.path(INVARIANTS))
    assert path.stat().st_size > layout.MAX_VIEW
    assert state.checkpoint(done="grew past 4 MiB", next="write more").ok
    assert state.invariant("still writable", because="no size cliff").ok
    assert state.reject("refuse big views", because="no size cliff", guard="big/*").ok
    assert state.verify().ok
    first = next(n for n, t in enumerate(path.read_text().split("\n"), 1) if t == lines[0])
    original = path.read_bytes()
    path.write_bytes(original.replace(lines[500].encode(), lines[500].replace("x", "y", 1).encode()))
    assert _codes(state) == [("latch-changed", first + 500)]
    assert [p.code for p in state.checkpoint(done="d", next="n").problems] == ["latch-changed"]  # the cheap path too
    path.write_bytes(original.replace(lines[700].encode() + b"\n", b""))
    assert _codes(state) == [("latch-missing", first + 700)]
    ten, eleven = lines[10].encode(), lines[11].encode()
    path.write_bytes(original.replace(ten + b"\n" + eleven, eleven + b"\n" + ten))
    assert _codes(state) == [("latch-reordered", first + 10)]
    path.write_bytes(original)
    assert state.verify().ok


def _plain(state: State) -> None:
    """The WAL as older versions wrote it: every record binds 10 by the plain sha256 of the file it describes."""
    data = Path(state.path(INVARIANTS)).read_bytes()
    prev, out = None, []
    for rec in records(state.root):
        bound = binding.Lines.parse(rec["views"][INVARIANTS])
        body = {k: v for k, v in rec.items() if k != "h"}
        if bound is not None:  # one already plain stays as it is
            body["views"] = {**rec["views"], INVARIANTS: wal.sha256(data[: bound.size])}
        body["prev"] = prev
        sealed = wal.seal(body)
        out.append(wal.encode(sealed))
        prev = sealed["h"]
    Path(state.wal_path).write_bytes(b"".join(out))
    os.unlink(state.seen_path)  # this clone's cache of the log: rewritten, it is another log


def test_records_that_bind_a_plain_sha256_are_still_understood(state: State) -> None:
    _plain(state)
    last = records(state.root)[-1]
    assert binding.is_plain(last["views"][INVARIANTS])
    assert state.reconcile().ok and state.verify().ok
    assert state.checkpoint(done="d", next="n").ok  # the file as the plain hash says: the write binds the new form
    assert binding.Lines.parse(records(state.root)[-1]["views"][INVARIANTS]) is not None
    _plain(state)
    assert state.invariant("a line after a plain binding", because="the binding is extended").ok
    assert (
        records(state.root)[-1]["views"][INVARIANTS]
        == binding.lines_of(Path(state.path(INVARIANTS)).read_bytes()).text()
    )
    assert state.verify().ok
    _plain(state)
    path = Path(state.path(INVARIANTS))
    path.write_text(path.read_text().replace("Write the WAL", "Write the log"))
    assert [p.code for p in state.reconcile().problems] == ["latch-changed"]


class _Syncs(fsio.Calls):
    def __init__(self) -> None:
        self.points: list[str] = []

    def fsync(self, fd: int, point: str) -> None:
        self.points.append(point)
        super().fsync(fd, point)


def test_lines_added_by_hand_are_adopted_in_one_batch(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    path = Path(state.path(INVARIANTS))
    hand = [f"- a note typed by hand, number {i}" for i in range(300)]
    path.write_text(path.read_text() + "".join(t + "\n" for t in hand))
    calls = _Syncs()
    monkeypatch.setattr(fsio, "calls", calls)
    out = state.verify(repair=True)
    assert out.ok and len(out.repaired) == 300
    assert calls.points.count("wal.append") == 1  # one write and one fsync for the whole batch
    recs = records(state.root)
    assert [r["data"]["line"] for r in recs[-300:]] == hand and all(r["data"]["adopted"] for r in recs[-300:])
    # each but the last binds 10 up to its own line; the last, the whole file
    assert recs[-1]["views"][INVARIANTS] == binding.lines_of(path.read_bytes()).text()
    assert binding.Lines.parse(recs[-2]["views"][INVARIANTS]).size == path.stat().st_size - len(hand[-1]) - 1  # type: ignore[union-attr]
    monkeypatch.undo()
    assert state.verify().ok
    assert latches.actor_lines(iter(recs))[-300:] == [(t, False) for t in hand]
