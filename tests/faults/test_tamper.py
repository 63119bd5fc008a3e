"""Tamper evidence, shown by enumeration.

A state is built once per test through the library (a real git repository, several decisions and rejected
approaches with guards, checkpoints, a handoff, and a checkpoint as the last WAL record). Then every single-line
edit, deletion and adjacent swap of the latches and of the WAL is applied in turn, and `verify()` must name the file
and the line. Every case is counted and the test asserts that all of them were detected, with a minimum count so
that it cannot pass vacuously.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate import brief
from rehydrate.store import Problem
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

GOAL_REL = "state/00_goal.md"
INV_REL = "state/10_invariants.md"
NEXT_REL = "state/99_next.md"
WAL_REL = "state/wal/agent.jsonl"

GOAL = "Ship the parser \u2014 with error recovery\nand a caf\u00e9-grade error message for every syntax error"
DONE_WHEN = "all tests pass\nthe docs describe every error code"

Accept = Callable[[int | None], bool]


@dataclass
class Built:
    root: Path
    state: State
    files: dict[str, bytes]  # relative name -> pristine bytes

    def path(self, name: str) -> Path:
        return self.root / name


def build_state(repo: Path) -> Built:
    """Several invariants and rejects with guards, several checkpoints, a handoff; the last record a checkpoint."""
    st, _ = State.init(repo / "state", GOAL, DONE_WHEN)
    st.invariant("Write the WAL before any view", because="a crash between the two must be redoable")
    st.reject("Edit db/schema.sql directly", because="every schema change needs a migration", guard="db/schema.sql")
    st.checkpoint(done="wrote the lexer", next="write the parser")
    st.invariant("Parse with recursive descent", because="error messages matter more than speed")
    st.reject("Use a parser generator", because="its error messages are poor", guard="pip install *")
    st.invariant("Keep the AST immutable", because="the checker shares subtrees")
    st.handoff("The lexer is done; the parser is half done.\nRead src/parser.py first.\n")
    st.checkpoint(done="wrote the expression parser", next="write the statement parser \u2192 then blocks")
    st.reject("Rewrite the lexer", because="it works and is tested", guard="src/lexer.py")
    st.record("compaction", {"trigger": "auto"})
    st.checkpoint(done="wrote the statement parser", next="error recovery \u2192 docs", goal="error recovery")
    root = repo / "state"
    records = [json.loads(line) for line in (root / "wal" / "agent.jsonl").read_bytes().splitlines()]
    assert records[-1]["op"] == "checkpoint", "the last WAL record must be a checkpoint"
    assert len(records) >= 12
    out = State.open(root).verify()
    assert out.ok, out.problems
    files = {
        name: (root / name).read_bytes()
        for name in ("00_goal.md", "10_invariants.md", "20_handoff.md", "99_next.md", "wal/agent.jsonl")
    }
    return Built(root, State.open(root), files)


@pytest.fixture
def built(repo: Path) -> Built:
    return build_state(repo)


def problems_with(built: Built, name: str, data: bytes) -> list[Problem]:
    """verify() with one file replaced by data; the pristine bytes are put back afterwards."""
    path = built.path(name)
    try:
        path.write_bytes(data)
        return State.open(built.root).verify().problems
    finally:
        path.write_bytes(built.files[name])


def split(data: bytes) -> list[bytes]:
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def other(byte: int) -> int:
    """A different byte of the same kind (digit for digit, letter for letter), never a newline."""
    c = chr(byte)
    for lo, hi in (("0", "9"), ("a", "z"), ("A", "Z")):
        if lo <= c <= hi:
            return ord(lo) + 1 if c == lo else ord(lo)
    return ord("x") if c != "x" else ord("y")


def change_char(line: bytes, i: int) -> bytes:
    return line[:i] + bytes([other(line[i])]) + line[i + 1 :]


@dataclass
class Tally:
    name: str
    total: int = 0
    detected: int = 0
    misses: list[str] = field(default_factory=list)

    def case(self, what: str, problems: list[Problem], ok: bool) -> None:
        self.total += 1
        if ok:
            self.detected += 1
        else:
            got = [(p.code, p.file, p.line) for p in problems]
            self.misses.append(f"{what}: got {got}")

    def check(self, minimum: int) -> None:
        print(f"\n{self.name}: {self.detected}/{self.total} detected")
        assert self.total >= minimum, f"{self.name}: only {self.total} cases enumerated"
        assert not self.misses, f"{self.name}: {len(self.misses)} missed of {self.total}:\n" + "\n".join(
            self.misses[:15]
        )
        assert self.detected == self.total


def at(*lines: int) -> Accept:
    """Accept a problem on one of these lines."""
    return lambda n: n in lines


def anywhere(_n: int | None) -> bool:
    return True


def named(problems: list[Problem], file: str, accept: Accept) -> bool:
    return any(p.file == file and accept(p.line) for p in problems)


# ---------------------------------------------------------------------------------------------------- 00_goal.md


def first_difference(a: list[bytes], b: list[bytes]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i + 1
    return min(len(a), len(b)) + 1


def line_edits(line: bytes) -> Iterator[tuple[str, bytes]]:
    yield "append", line + b" (edited)"
    yield "prepend", b"X" + line
    yield "trailing space", line + b" "
    if line:
        yield "first char", change_char(line, 0)
        yield "middle char", change_char(line, len(line) // 2)
        yield "last char", change_char(line, len(line) - 1)
        yield "emptied", b""


def test_goal_every_line_edit_deletion_and_swap_is_named(built: Built) -> None:
    original = split(built.files["00_goal.md"])
    assert len(original) >= 9
    tally = Tally("00_goal.md edits, deletions, adjacent swaps")

    def run(what: str, mutated: list[bytes]) -> None:
        assert mutated != original
        expected = first_difference(mutated, original)
        problems = problems_with(built, "00_goal.md", join(mutated))
        tally.case(what, problems, named(problems, GOAL_REL, at(expected)))

    for i, line in enumerate(original):
        for kind, edited in line_edits(line):
            run(f"edit line {i + 1} ({kind})", [*original[:i], edited, *original[i + 1 :]])
        run(f"delete line {i + 1}", original[:i] + original[i + 1 :])
        if i + 1 < len(original) and line != original[i + 1]:
            swapped = [*original[:i], original[i + 1], line, *original[i + 2 :]]
            run(f"swap lines {i + 1}/{i + 2}", swapped)
    tally.check(minimum=60)


def test_goal_whole_file_bytes_are_bound(built: Built) -> None:
    """Changes that keep every line's text: the final newline, CRLF line ends, an extra blank line."""
    data = built.files["00_goal.md"]
    n = len(split(data))
    for what, mutated in (
        ("no final newline", data[:-1]),
        ("CRLF line ends", data.replace(b"\n", b"\r\n")),
        ("extra blank line at the end", data + b"\n"),
    ):
        problems = problems_with(built, "00_goal.md", mutated)
        assert named(problems, GOAL_REL, lambda line: line is not None and 1 <= line <= n + 1), (what, problems)


# ---------------------------------------------------------------------------------------------------- 10_invariants.md


def recorded_lines(wal_bytes: bytes) -> list[bytes]:
    """The lines of 10_invariants.md that the WAL binds, read from the records themselves."""
    out: list[bytes] = []
    for raw in split(wal_bytes):
        rec = json.loads(raw)
        if rec["op"] == "init":
            out += [ln.encode() for ln in rec["data"]["header"].split("\n") if ln.strip()]
        elif rec["op"] in ("invariant", "reject"):
            out.append(rec["data"]["line"].encode())
    return out


def test_invariants_every_recorded_line_edit_deletion_and_swap_is_named(built: Built) -> None:
    original = split(built.files["10_invariants.md"])
    recorded = recorded_lines(built.files["wal/agent.jsonl"])
    positions = [i for i, line in enumerate(original) if line in recorded]
    assert [original[i] for i in positions] == recorded, "the view holds every recorded line, in order"
    assert len(recorded) >= 9
    tally = Tally("10_invariants.md edits, deletions, adjacent swaps of recorded lines")

    def run(what: str, mutated: list[bytes], accept: Accept) -> None:
        problems = problems_with(built, "10_invariants.md", join(mutated))
        tally.case(what, problems, named(problems, INV_REL, accept))

    for j, i in enumerate(positions):
        k = i + 1  # 1-based line number of the recorded line
        prev = positions[j - 1] + 1 if j else 0  # line number of the recorded line before it (0: none)

        def in_gap(n: int | None, lo: int = prev + 1, hi: int = k) -> bool:
            # a missing line is expected after the recorded line before it, at the latest where it was
            return n is not None and lo <= n <= hi

        def exact(n: int | None, k: int = k) -> bool:
            return n == k

        for kind, edited in line_edits(original[i]):
            mutated = [*original[:i], edited, *original[i + 1 :]]
            run(f"edit line {k} ({kind})", mutated, in_gap if kind == "emptied" else exact)
        run(f"delete line {k}", original[:i] + original[i + 1 :], in_gap)
        if j + 1 < len(positions) and positions[j + 1] == i + 1 and original[i] != original[i + 1]:
            swapped = [*original[:i], original[i + 1], original[i], *original[i + 2 :]]
            run(f"swap lines {k}/{k + 1}", swapped, at(k, k + 1))
    tally.check(minimum=70)


def test_invariants_forged_record_and_view_together_break_the_chain(built: Built) -> None:
    """A forger who rewrites an invariant record (re-sealed) and its line in the view is caught by the next link."""
    wal_lines = split(built.files["wal/agent.jsonl"])
    inv = built.files["10_invariants.md"]
    tally = Tally("forged invariant record + view")
    for n, raw in enumerate(wal_lines, 1):
        rec = json.loads(raw)
        if rec["op"] not in ("invariant", "reject"):
            continue
        old = rec["data"]["line"]
        new = old.replace("because:", "because: (not really)")
        rec["data"]["line"] = new
        rec["data"]["line_sha256"] = wal.sha256(new.encode())
        forged = wal.encode(wal.seal(rec))
        wal.decode(forged[:-1])  # self-consistent
        mutated = join([*wal_lines[: n - 1], forged[:-1], *wal_lines[n:]])
        built.path("10_invariants.md").write_bytes(inv.replace(old.encode(), new.encode()))
        try:
            problems = problems_with(built, "wal/agent.jsonl", mutated)
        finally:
            built.path("10_invariants.md").write_bytes(inv)
        tally.case(f"forge record {n}", problems, named(problems, WAL_REL, at(n + 1)))
    tally.check(minimum=6)


# ---------------------------------------------------------------------------------------------------- the WAL


@pytest.mark.slow  # version-independent and long: on the main Python only (.ci/run)
def test_wal_every_line_edit_deletion_swap_and_reseal_is_named(built: Built) -> None:
    original = split(built.files["wal/agent.jsonl"])
    last = len(original)
    tally = Tally("WAL single-byte edits, deletions, adjacent swaps, re-sealed edits")

    def run(what: str, mutated: list[bytes], file: str, accept: Accept) -> None:
        problems = problems_with(built, "wal/agent.jsonl", join(mutated))
        tally.case(what, problems, named(problems, file, accept))

    edits = 0
    for i, line in enumerate(original):
        n = i + 1
        # every byte of the last two records (the tail that every command reads); every 4th byte of the others,
        # with a different phase on each line so that each column mod 4 is hit (keeps the test to a few seconds)
        stride = 1 if n >= last - 1 else 4
        for p in range(n % stride, len(line), stride):
            edited = change_char(line, p)
            assert b"\n" not in edited
            run(f"edit line {n} byte {p}", [*original[:i], edited, *original[i + 1 :]], WAL_REL, at(n))
            edits += 1
    for i in range(last):
        n = i + 1
        mutated = original[:i] + original[i + 1 :]
        if n == last:
            # the WAL is consistent without its last record, but 99_next.md shows the deleted checkpoint
            run(f"delete line {n} (the last)", mutated, NEXT_REL, anywhere)
        else:
            run(f"delete line {n}", mutated, WAL_REL, at(n))
    for i in range(last - 1):
        n = i + 1
        swapped = [*original[:i], original[i + 1], original[i], *original[i + 2 :]]
        run(f"swap lines {n}/{n + 1}", swapped, WAL_REL, at(n, n + 1))
    for i in range(last - 1):
        n = i + 1
        rec = json.loads(original[i])
        rec["ts"] = "1999-12-31T23:59:59.999Z"
        resealed = wal.encode(wal.seal(rec))[:-1]
        assert wal.decode(resealed)["h"] != json.loads(original[i])["h"]  # valid on its own, hash changed
        mutated = [*original[:i], resealed, *original[i + 1 :]]
        run(f"re-sealed edit of line {n}", mutated, WAL_REL, at(n + 1))
    print(f"\nWAL: {edits} single-byte edits, {last} deletions, {last - 1} swaps, {last - 1} re-sealed edits")
    tally.check(minimum=2500)


@pytest.mark.slow  # version-independent and long: on the main Python only (.ci/run)
def test_wal_every_bit_flip_of_the_last_record_is_named(built: Built) -> None:
    original = split(built.files["wal/agent.jsonl"])
    n = len(original)
    head = join(original[:-1])
    last = original[-1] + b"\n"
    assert any(b > 0x7F for b in last), "the last record holds multi-byte UTF-8"
    path = built.path("wal/agent.jsonl")
    tally = Tally("bit flips of the last WAL record (with its newline)")
    try:
        for i in range(len(last)):
            for bit in range(8):
                flipped = bytearray(last)
                flipped[i] ^= 1 << bit
                path.write_bytes(head + bytes(flipped))
                problems = State.open(built.root).verify().problems
                tally.case(f"byte {i} bit {bit}", problems, named(problems, WAL_REL, at(n)))
    finally:
        path.write_bytes(built.files["wal/agent.jsonl"])
    assert tally.total == len(last) * 8
    tally.check(minimum=4000)


# ---------------------------------------------------------------------------------------------------- no false alarms


def assert_clean(st: State, after: str) -> None:
    out = State.open(st.root).verify()
    assert out.problems == [], f"false alarm after {after}: {out.problems}"
    assert out.repaired == [], f"verify repaired something after {after}: {out.repaired}"


def test_no_false_alarm_after_any_legitimate_append(repo: Path) -> None:
    st, _ = State.init(repo / "state", GOAL, DONE_WHEN)
    assert_clean(st, "init")
    steps: list[tuple[str, Callable[[], object]]] = [
        ("invariant", lambda: st.invariant("Write the WAL first", because="redo after a crash")),
        ("reject", lambda: st.reject("Edit the views by hand", because="they are bound", guard="state/*.md")),
        ("checkpoint", lambda: st.checkpoint(done="lexer", next="parser")),
        ("handoff", lambda: st.handoff("read the parser first\n")),
        ("resume", lambda: brief.resume(st)),
        ("compaction", lambda: st.record("compaction", {"trigger": "manual"})),
        ("checkpoint with goal", lambda: st.checkpoint(done="parser", next="checker", goal="type checking")),
        ("invariant (unicode)", lambda: st.invariant("Errors say \u201cwhere\u201d", because="users need it")),
        ("rotate", st.rotate),
        ("invariant after rotate", lambda: st.invariant("Keep the archive", because="it is history")),
        ("checkpoint after rotate", lambda: st.checkpoint(done="checker", next="release")),
        ("handoff after rotate", lambda: st.handoff("all done but the release\n")),
        ("resume after rotate", lambda: brief.resume(st)),
        ("second rotate", st.rotate),
        ("reject after second rotate", lambda: st.reject("Skip the changelog", because="users read it")),
    ]
    for name, step in steps:
        step()
        assert_clean(st, name)
    (repo / "app.py").write_text("print('changed')\n")  # a dirty work tree is not a state problem
    st.checkpoint(done="edited app.py", next="commit it")
    assert_clean(st, "checkpoint on a dirty tree")
    result = rehydrate("verify", "--json", cwd=repo)
    assert result.code == 0, result
    report = json.loads(result.out)
    assert report["ok"] is True and report["problems"] == []


def test_removing_the_hash_check_lets_bit_flips_through(built: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    """The enumeration has teeth: with the record hash no longer compared, some bit flips go unnoticed."""
    real = wal.decode

    def decode_without_hash(line: bytes) -> dict[str, object]:
        try:
            return real(line)
        except wal.BadRecord as e:
            if "hash mismatch" not in str(e):
                raise
            return dict(json.loads(line))

    monkeypatch.setattr(wal, "decode", decode_without_hash)
    original = split(built.files["wal/agent.jsonl"])
    head, last = join(original[:-1]), original[-1] + b"\n"
    path = built.path("wal/agent.jsonl")
    missed = 0
    try:
        for i in range(0, len(last), 7):
            flipped = bytearray(last)
            flipped[i] ^= 1
            path.write_bytes(head + bytes(flipped))
            missed += not State.open(built.root).verify().problems
    finally:
        path.write_bytes(built.files["wal/agent.jsonl"])
    assert missed > 0
