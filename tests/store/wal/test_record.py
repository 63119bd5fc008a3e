"""The write-ahead log: records, the chain, the tail, torn tails and damage before the tail, and their repair.

A newcomer looking for the tests of torn tails finds them here (the pipelines' own torn outputs are tested in
tests/cursor/, the CLI's report of one in tests/cli/test_read.py, crashes mid-write in tests/faults/).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from conftest import no_crash, records, rehydrate, verify_codes
from rehydrate.errors import RehydrateError
from rehydrate.store.latches import binding
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal


def test_records_chain_and_bind_views(state: State) -> None:
    root = Path(state.root)
    recs = records(root)
    assert [r["op"] for r in recs] == ["init", "invariant", "reject", "checkpoint"]
    assert recs[0]["prev"] is None and all(b["prev"] == a["h"] for a, b in itertools.pairwise(recs))
    for name in ("00_goal.md", "99_next.md"):
        assert recs[-1]["views"][name] == wal.sha256((root / name).read_bytes())
    inv_bytes = (root / "10_invariants.md").read_bytes()  # bound by a running hash over its lines (binding.Lines)
    assert recs[-1]["views"]["10_invariants.md"] == binding.lines_of(inv_bytes).text()
    inv = recs[1]["data"]
    assert inv["line_sha256"] == wal.sha256(inv["line"].encode())
    assert (root / "10_invariants.md").read_text().endswith(inv["line"] + "\n" + recs[2]["data"]["line"] + "\n")


def test_damage_before_the_tail_is_refused_with_its_line(state: State) -> None:
    p = Path(state.root) / "wal" / "agent.jsonl"
    lines = p.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"reject"', b'"rejekt"')
    p.write_bytes(b"\n".join(lines))
    with pytest.raises(RehydrateError, match="line 3"):
        state.checkpoint(done="x", next="y")
    problems = state.verify().problems
    assert ("damaged-record", 3) in [(x.code, x.line) for x in problems]


DEEP = b"[" * 100_000  # far past the parser's recursion limit


def test_decode_names_deep_json_as_a_bad_record() -> None:
    for line in (DEEP, DEEP + b"]" * 100_000, b'{"a":' * 50_000):
        with pytest.raises(wal.BadRecord, match="not JSON"):
            wal.decode(line)


@pytest.mark.parametrize("where", ["last line", "before the last"])
def test_a_deeply_nested_wal_line_is_a_bad_record_for_every_command(state: State, where: str) -> None:
    log = Path(state.root) / "wal" / "agent.jsonl"
    good = log.read_bytes()
    lines = good.splitlines(keepends=True)
    bad = b"".join(lines) + DEEP + b"\n" if where == "last line" else b"".join(lines[:-1]) + DEEP + b"\n" + lines[-1]
    n = len(lines) + 1 if where == "last line" else len(lines)
    for args in (["verify"], ["status"], ["resume"], ["checkpoint", "--done", "x", "--next", "y"], ["verify"]):
        log.write_bytes(bad)
        r = rehydrate(*args)
        no_crash(r)
        if args == ["verify"]:
            code = "torn-tail" if where == "last line" else "damaged-record"
            assert (
                r.code == 1 and f"agent.jsonl:{n}: " in r.out and f"not JSON (JSON nested too deeply) [{code}]" in r.out
            ), r
        elif where == "last line":  # cut off like a torn last line, kept in .broken, and said
            assert r.code in (0, 1) and "cut a torn last line" in r.err + r.out, (args, r)
        else:
            assert r.code == 3 and f"line {n}" in r.err, (args, r)
    log.write_bytes(good)


def test_a_lost_final_newline_is_put_back_not_cut(state: State) -> None:
    log = Path(state.root) / "wal" / "agent.jsonl"
    whole = log.read_bytes()
    log.write_bytes(whole[:-1])
    assert verify_codes(state) == [("missing-newline", 4)]
    out = state.verify(repair=True)
    assert any("final newline" in r for r in out.repaired)
    assert log.read_bytes() == whole and not (log.parent / "agent.jsonl.broken").exists()


def test_a_hash_valid_record_of_the_wrong_shape_is_damage_not_a_bug(repo: Path, state: State) -> None:
    log = Path(state.root) / "wal" / "agent.jsonl"
    last = json.loads(log.read_text().splitlines()[-1])
    bad = wal.seal({**last, "seq": last["seq"] + 1, "prev": last["h"], "op": "reject", "data": {"text": "no line"}})
    with open(log, "ab") as f:
        f.write(wal.encode(bad))
    r = rehydrate("verify")
    assert r.code == 1 and "data.line" in r.out and "Traceback" not in r.err, r
    for argv in (["status"], ["resume"]):  # cut off like a torn last line, kept in .broken, and said
        r = rehydrate(*argv)
        assert "Traceback" not in r.err and "internal error" not in r.err, (argv, r)
        assert r.code in (0, 1, 3), (argv, r)
    assert b'"no line"' in (log.parent / "agent.jsonl.broken").read_bytes()


def test_a_torn_last_line_is_named_then_cut_and_kept(state: State) -> None:
    log = Path(state.wal_path)
    whole = log.read_bytes()
    with open(log, "ab") as f:
        f.write(b'{"torn')
    assert [(p.code, p.line, p.repairable) for p in state.verify().problems] == [("torn-tail", 5, True)]
    assert log.read_bytes() == whole + b'{"torn'  # verify without repair changes nothing
    out = state.reconcile()
    assert out.repaired == [
        "cut a torn last line off state/wal/agent.jsonl (line 5, 6 bytes: the last line has no newline (a torn "
        "write)); kept in state/wal/agent.jsonl.broken"
    ]
    assert log.read_bytes() == whole and (log.parent / "agent.jsonl.broken").read_bytes() == b'{"torn'
    with open(log, "ab") as f:  # a second torn line never replaces the first kept copy
        f.write(b"\0\0\0")
    assert "zero bytes" in state.reconcile().repaired[0]
    assert (log.parent / "agent.jsonl.broken.2").read_bytes() == b"\0\0\0"
    assert state.verify().ok


def test_a_boolean_seq_is_not_a_record() -> None:
    rec = wal.seal({"v": 1, "seq": True, "ts": "t", "actor": "a", "op": "x", "data": {}, "views": {}, "prev": None})
    with pytest.raises(wal.BadRecord, match="wrong type"):
        wal.decode(wal.encode(rec)[:-1])
    assert wal.decode(wal.encode({**rec, "seq": 1} | {"h": wal.seal({**rec, "seq": 1})["h"]})[:-1])["seq"] == 1


def test_seal_line_is_seal_then_encode() -> None:
    """A write encodes its record once (wal.seal_line joins the members before and after `h`): the same record and
    the same bytes as seal and encode, whatever the members hold."""
    base = {"v": 1, "seq": 7, "ts": "2026-01-01T00:00:00.000Z", "actor": "agent", "op": "resume", "prev": "ab"}
    for extra in (
        {"data": {}, "views": {}},
        {"data": {"h": "0" * 64, "op": "x", "nested": [{"h": "a", "op": 1}]}, "views": {"op": "checkpoint"}},
        {"data": {"text": 'é\u2028\x00"\\ \ud7ff 🙂'}, "views": {"99_next.md": "f" * 64}, "git": {"head": None}},
        {"data": {}, "views": {}, "hz": "a key between h and op", "g": [1.5, -0.0, 10**30, True, None]},
        {"data": {}, "views": {}, "h": "an old hash, replaced"},
    ):
        rec = {**base, **extra}
        sealed, line = wal.seal_line(rec)
        assert sealed == wal.seal(rec)
        assert line == wal.encode(wal.seal(rec))
        assert wal.decode(line[:-1]) == sealed
    assert wal.seal_line({"op": "x"}) == (wal.seal({"op": "x"}), wal.encode(wal.seal({"op": "x"})))  # no head
