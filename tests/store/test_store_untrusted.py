"""What the state files hold is data, whatever it is (issue 8, items 9 and 11): JSON nested too deeply for the
parser is a bad record like any other, never a traceback; escape sequences and other control characters in the
views never reach the terminal through `status`."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from conftest import Result, rehydrate
from rehydrate.store import views, wal
from rehydrate.store.state import State

DEEP = b"[" * 100_000  # far past the parser's recursion limit


def clean(r: Result) -> None:
    assert "Traceback" not in r.err and "internal error" not in r.err and "RecursionError" not in r.err, r
    assert r.code != 4, r


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
        clean(r)
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


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x00\r\u202egnp.exe\x9b31m"


def _shown(text: str) -> None:
    bad = [c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf")]
    assert not bad, [hex(ord(c)) for c in bad]


def test_status_cleans_what_it_shows_from_the_views(state: State) -> None:
    assert views.clean(HOSTILE, one_line=True) == "]0;pwned[2J gnp.exe31m"
    root = Path(state.root)
    nxt = root / "99_next.md"
    nxt.write_text(
        f"# Next (checkpoint 9{HOSTILE})\ncurrent goal: g{HOSTILE}\nlast completed: d{HOSTILE}\n"
        f"next allowed action: n{HOSTILE}\n"
    )
    goal = root / "00_goal.md"
    goal.write_text(goal.read_text().replace("Ship the parser", f"Ship{HOSTILE}"))
    extra = State.open(root).status().extra  # what the library hands to every face, not only to the CLI's
    for value in (extra["goal"], extra["checkpoint"], *extra["next"].values()):
        _shown(value)
        assert "pwned" in value
    r = rehydrate("status")
    clean(r)
    assert r.code == 1 and "pwned" in r.out, r
    _shown(r.out)
    j = rehydrate("status", "--json")
    report = json.loads(j.out)
    for value in (report["goal"], report["checkpoint"], *report["next"].values()):
        _shown(value)
        assert "\n" not in value or value is not report["checkpoint"]
    assert report["checkpoint"].startswith("checkpoint 9")


def test_verify_cleans_the_recorded_lines_it_quotes(state: State) -> None:
    """A hash-valid record from someone else's clone may carry anything; a latch message quotes its line clean."""
    log = Path(state.root) / "wal" / "agent.jsonl"
    last = json.loads(log.read_bytes().splitlines()[-1])
    line = f"- D-abcdef 2026-01-01 decision: x{HOSTILE} because: y"
    rec = wal.seal(
        {**last, "seq": last["seq"] + 1, "prev": last["h"], "op": "invariant", "data": {"line": line}, "git": None}
    )
    after = wal.seal({**rec, "seq": rec["seq"] + 1, "prev": rec["h"], "op": "compaction", "data": {}})
    with open(log, "ab") as f:
        f.write(wal.encode(rec) + wal.encode(after))
    (p,) = State.open(state.root).verify().problems
    assert p.code == "latch-missing" and "pwned" in p.message, p
    _shown(p.message)
    r = rehydrate("verify")
    clean(r)
    assert r.code == 1 and "[latch-missing]" in r.out and "pwned" in r.out, r
    _shown(r.out)
