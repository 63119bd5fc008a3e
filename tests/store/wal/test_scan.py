"""verify reads each log once, and each line is parsed once and encoded once; the hashing choice gives hashlib's
digests on every path; the hash covers the line less its own `h` member, found safely."""

from __future__ import annotations

import _json
import hashlib
import json
import os
from json import encoder
from pathlib import Path
from typing import Any

import pytest

from conftest import records, verify_codes
from rehydrate import safejson
from rehydrate.store.state import State
from rehydrate.store.wal import digest
from rehydrate.store.wal import record as wal

EXTRA = 60  # records appended to the fixture's state, so that per-record costs dominate the fixed ones


def _grow(state: State) -> int:
    for i in range(EXTRA):
        state.checkpoint(done=f"step {i}", next=f"step {i + 1}")
    return len(records(state.root))


def _count(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Calls of wal.decode (lines decoded), json.loads or safejson.loads (parses) and JSONEncoder() or
    _json.make_encoder (encoders built) from now on."""
    calls = {"decode": 0, "loads": 0, "encoders": 0}
    real_decode, real_loads, real_init = wal.decode, json.loads, encoder.JSONEncoder.__init__
    real_safe, real_make = safejson.loads, _json.make_encoder

    def safe(*args: Any, **kwargs: Any) -> Any:
        calls["loads"] += 1
        return real_safe(*args, **kwargs)

    def make(*args: Any, **kwargs: Any) -> Any:
        calls["encoders"] += 1
        return real_make(*args, **kwargs)

    def decode(line: bytes) -> wal.Record:
        calls["decode"] += 1
        return real_decode(line)

    def loads(*args: Any, **kwargs: Any) -> Any:
        calls["loads"] += 1
        return real_loads(*args, **kwargs)

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        calls["encoders"] += 1
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(wal, "decode", decode)
    monkeypatch.setattr(json, "loads", loads)
    monkeypatch.setattr(encoder.JSONEncoder, "__init__", init)
    monkeypatch.setattr(safejson, "loads", safe)
    monkeypatch.setattr(_json, "make_encoder", make)
    return calls


@pytest.mark.parametrize("outside_change", [False, True])
def test_verify_reads_each_record_once_and_builds_no_encoder_per_record(
    state: State, monkeypatch: pytest.MonkeyPatch, outside_change: bool
) -> None:
    """One pass feeds the chain check, the rollback check (after an outside change) and the latches' recorded
    lines; each line is parsed once and encoded once, by an encoder built once. The old verify decoded every line
    two times (three after an outside change), building two JSON encoders per line."""
    n = _grow(state)
    if outside_change:  # the cache no longer matches the log: reconcile checks the whole chain once
        os.unlink(state.seen_path)
    calls = _count(monkeypatch)
    out = State.open(state.root).verify()
    assert out.ok, out.problems
    assert n <= calls["decode"] <= n + 6, calls  # every line once; a few tail lines read again
    assert calls["loads"] <= calls["decode"] + 4, calls
    assert calls["encoders"] <= 2, calls


def test_verify_after_an_outside_change_still_finds_damage_before_a_torn_tail(state: State) -> None:
    """The pass's problems stand in for reconcile's own check of the chain, up to the torn last line."""
    _grow(state)
    log = Path(state.wal_path)
    lines = log.read_bytes().split(b"\n")
    lines[5] = lines[5].replace(b'"checkpoint"', b'"checkpoinT"')
    log.write_bytes(b"\n".join(lines[:-1]) + b'\n{"torn')
    os.unlink(state.seen_path)
    codes = verify_codes(State.open(state.root))
    assert ("damaged-record", 6) in codes and ("torn-tail", len(lines)) in codes, codes


def test_a_torn_tail_alone_after_an_outside_change_is_repaired_in_one_verify(state: State) -> None:
    _grow(state)
    log = Path(state.wal_path)
    good = log.read_bytes()
    log.write_bytes(good + b'{"torn')
    os.unlink(state.seen_path)
    st = State.open(state.root)
    assert [c for c, _ in verify_codes(st)] == ["torn-tail"]
    out = st.verify(repair=True)
    assert out.ok and out.repaired, out.problems
    assert log.read_bytes() == good
    assert st.verify().ok


SIZES = (0, 1, 200, 700, 2000, 64 << 10, digest.BIG - 1, digest.BIG, (1 << 20) + 3)


@pytest.mark.parametrize("hasher", ["built-in", "openssl"])
def test_sha256_gives_hashlibs_digests_on_each_path(monkeypatch: pytest.MonkeyPatch, hasher: str) -> None:
    chosen = digest.builtin_sha256 if hasher == "built-in" else hashlib.sha256
    monkeypatch.setattr(digest, "HASHER", [chosen])
    for size in SIZES:
        monkeypatch.setattr(digest, "HASHED", [0])  # each size as a process's first input
        data = os.urandom(size)
        assert wal.sha256(data) == hashlib.sha256(data).hexdigest(), size
        assert digest.HASHER[0] is (hashlib.sha256 if size >= digest.BIG else chosen), size  # large: OpenSSL


def test_the_built_in_sha256_is_what_a_start_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small inputs keep the built-in (no OpenSSL to load at a hook's start) until a long pass asks for speed."""
    monkeypatch.setattr(digest, "HASHER", [digest.builtin_sha256])
    monkeypatch.setattr(digest, "HASHED", [0])
    wal.sha256(b"x" * 4096)
    assert digest.HASHER[0] is digest.builtin_sha256
    wal.fast_hashing()
    assert digest.HASHER[0] is hashlib.sha256


def test_small_inputs_that_add_up_to_a_large_one_switch_to_openssl(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived process (an MCP server, a loop of checkpoints) hashes a few kilobytes a write: once they add up to
    BIG, the import of OpenSSL has paid for itself as for one large input."""
    monkeypatch.setattr(digest, "HASHER", [digest.builtin_sha256])
    monkeypatch.setattr(digest, "HASHED", [0])
    record = b"r" * 700
    for _ in range(digest.BIG // len(record)):
        assert wal.sha256(record) == hashlib.sha256(record).hexdigest()
    assert digest.HASHER[0] is digest.builtin_sha256  # just under BIG in all
    wal.sha256(record)
    assert digest.HASHER[0] is hashlib.sha256


def _sealed(**extra: object) -> bytes:
    rec = {"v": 1, "seq": 1, "ts": "t", "actor": "agent", "op": "resume", "data": {}, "views": {}, "prev": None}
    return wal.encode(wal.seal({**rec, **extra}))[:-1]


def test_the_hash_is_over_the_line_less_its_own_member() -> None:
    for line in (
        _sealed(),
        _sealed(data={"h": "0" * 64, "op": "x", "nested": [{"h": "a", "op": 1}]}),
        _sealed(hz="an extra key between h and op: the long way"),
    ):
        rec = wal.decode(line)
        body = wal.canonical({k: v for k, v in rec.items() if k != "h"})
        assert digest.without_hash(line, rec["h"]) in (body, None)
        assert wal.sha256(body) == rec["h"]
    assert digest.without_hash(_sealed(hz=1), json.loads(_sealed(hz=1))["h"]) is None


def test_a_copied_hash_member_in_the_data_does_not_pass_for_the_record() -> None:
    """A nested `"h":"<the record's hash>","op":` (the data edited to hold the record's own member) is found first
    by no search that matters: the record's hash no longer matches."""
    line = _sealed()
    h = json.loads(line)["h"]
    forged = line.replace(b'"data":{}', b'"data":{"a":1,"h":"' + h.encode() + b'","op":"x"}')
    with pytest.raises(wal.BadRecord, match="hash mismatch"):
        wal.decode(forged)
