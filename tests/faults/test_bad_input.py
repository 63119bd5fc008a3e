"""Bad input never gives a traceback.

Damaged files (invalid UTF-8, malformed WAL lines, empty or missing files, a 100 MB line) and bad command arguments
(undecodable bytes, oversized text). For each damaged state: `rehydrate verify --json` exits 1 and names every problem
(code, file, line) in one JSON object; `rehydrate checkpoint` either repairs and says what it repaired (or warns,
naming the file), or exits 3 saying what is wrong and how to repair it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pytest

from conftest import Result, rehydrate
from rehydrate.store.state import State

TIMEOUT = 90.0  # generous: a hang is what this catches, and a loaded 2-core machine is slow, not hung
WAL_REL = "state/wal/agent.jsonl"
GOAL_REL = "state/00_goal.md"
INV_REL = "state/10_invariants.md"
NEXT_REL = "state/99_next.md"
BIG = 100 << 20  # 100 MB


def build(repo: Path) -> Path:
    st, _ = State.init(repo / "state", "Ship the parser", "all tests pass")
    st.invariant("Write the WAL before any view", because="a crash between the two must be redoable")
    st.reject("Edit db/schema.sql directly", because="every schema change needs a migration", guard="db/schema.sql")
    st.checkpoint(done="wrote the lexer", next="write the parser")
    st.handoff("read the parser first\n")
    st.invariant("Keep the AST immutable", because="the checker shares subtrees")
    st.checkpoint(done="wrote the parser", next="write the checker")
    assert State.open(repo / "state").verify().ok
    return repo / "state"


@pytest.fixture
def state_dir(repo: Path) -> Iterator[Path]:
    root = build(repo)
    yield root
    shutil.rmtree(root, ignore_errors=True)  # the 100 MB cases must not stay on disk


def run(*args: str, cwd: Path) -> Result:
    try:
        return rehydrate(*args, cwd=cwd, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`rehydrate {' '.join(args)}` hung for {TIMEOUT} s")


def lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def write_lines(path: Path, items: list[bytes]) -> None:
    path.write_bytes(b"".join(item + b"\n" for item in items))


def write_big_line(f: BinaryIO, size: int) -> None:
    """size bytes of a JSON-looking line (no newline), written in 1 MB pieces."""
    head = b'{"data":"'
    f.write(head)
    chunk = b"x" * (1 << 20)
    left = size - len(head)
    while left > 0:
        f.write(chunk[: min(left, len(chunk))])
        left -= len(chunk)


# ---------------------------------------------------------------------------------------------------- the cases


@dataclass
class Case:
    name: str
    damage: Callable[[Path], list[tuple[str, int | None]]]  # damages the state; returns the (file, line) to be named
    verify_exit: int = 1
    repairable: bool = False  # checkpoint must repair it, after which verify is clean
    notes: list[str] = field(default_factory=list)


def utf8_goal_appended(root: Path) -> list[tuple[str, int | None]]:
    p = root / "00_goal.md"
    n = len(lines(p))
    with p.open("ab") as f:
        f.write(b"bad \xff\xfe bytes\n")
    return [(GOAL_REL, n + 1)]


def utf8_goal_inside(root: Path) -> list[tuple[str, int | None]]:
    p = root / "00_goal.md"
    items = lines(p)
    assert items[2] == b"Ship the parser"
    items[2] = b"Ship the \xc3\x28parser"
    write_lines(p, items)
    return [(GOAL_REL, 3)]


def utf8_invariants_inside(root: Path) -> list[tuple[str, int | None]]:
    p = root / "10_invariants.md"
    items = lines(p)
    k = next(i for i, line in enumerate(items) if line.startswith(b"- D-"))
    items[k] = items[k].replace(b"WAL", b"W\xffL")
    write_lines(p, items)
    return [(INV_REL, k + 1)]


def utf8_invariants_appended(root: Path) -> list[tuple[str, int | None]]:
    p = root / "10_invariants.md"
    n = len(lines(p))
    with p.open("ab") as f:
        f.write(b"- D-abcdef 2026-01-01 decision: \xe2\x28\xa1 because: bytes\n")
    return [(INV_REL, n + 1)]


def utf8_next(root: Path) -> list[tuple[str, int | None]]:
    p = root / "99_next.md"
    items = lines(p)
    items[1] += b" \xff"
    write_lines(p, items)
    return [(NEXT_REL, None)]  # a rendered view bound by its hash: the file is named, a line is a bonus


def utf8_wal_middle(root: Path) -> list[tuple[str, int | None]]:
    p = root / "wal" / "agent.jsonl"
    items = lines(p)
    items[2] = items[2].replace(b'"seq"', b'"s\xffq"', 1)
    write_lines(p, items)
    return [(WAL_REL, 3)]


def json_middle(root: Path) -> list[tuple[str, int | None]]:
    p = root / "wal" / "agent.jsonl"
    items = lines(p)
    items[2] = b'{"v":1,"seq":'
    write_lines(p, items)
    return [(WAL_REL, 3)]


def json_middle_wrong_shape(root: Path) -> list[tuple[str, int | None]]:
    p = root / "wal" / "agent.jsonl"
    items = lines(p)
    items[3] = b'[1,2,{"h":null}]'
    items[4] = b'{"actor":[],"data":1,"h":7,"op":{},"prev":1,"seq":"x","ts":1,"v":1,"views":[]}'
    write_lines(p, items)
    return [(WAL_REL, 4), (WAL_REL, 5)]


def json_last(root: Path) -> list[tuple[str, int | None]]:
    p = root / "wal" / "agent.jsonl"
    items = lines(p)
    items[-1] = b'{"v":1,"seq":99,"op":"checkpoint",'
    write_lines(p, items)
    return [(WAL_REL, len(items))]


def json_last_huge_number(root: Path) -> list[tuple[str, int | None]]:
    p = root / "wal" / "agent.jsonl"
    items = lines(p)
    items[-1] = b'{"seq":' + b"9" * 5000 + b"}"
    write_lines(p, items)
    return [(WAL_REL, len(items))]


def empty_wal(root: Path) -> list[tuple[str, int | None]]:
    (root / "wal" / "agent.jsonl").write_bytes(b"")
    return [(WAL_REL, None)]


def empty_invariants(root: Path) -> list[tuple[str, int | None]]:
    (root / "10_invariants.md").write_bytes(b"")
    return [(INV_REL, 1)]


def missing(name: str) -> Callable[[Path], list[tuple[str, int | None]]]:
    def damage(root: Path) -> list[tuple[str, int | None]]:
        (root / name).unlink()
        return [(f"state/{name}", None)]

    damage.__name__ = f"missing_{name}"
    return damage


def missing_all_three(root: Path) -> list[tuple[str, int | None]]:
    out: list[tuple[str, int | None]] = []
    for name in ("00_goal.md", "10_invariants.md", "99_next.md"):
        out += missing(name)(root)
    return out


def big_line_appended(root: Path) -> list[tuple[str, int | None]]:
    p = root / "wal" / "agent.jsonl"
    n = len(lines(p))
    with p.open("ab") as f:
        write_big_line(f, BIG)
        f.write(b"\n")
    return [(WAL_REL, n + 1)]


def big_line_middle(root: Path) -> list[tuple[str, int | None]]:
    p = root / "wal" / "agent.jsonl"
    items = lines(p)
    with p.open("wb") as f:
        for item in items[:3]:
            f.write(item + b"\n")
        write_big_line(f, BIG)
        f.write(b"\n")
        for item in items[3:]:
            f.write(item + b"\n")
    return [(WAL_REL, 4)]


CASES = [
    Case("invalid UTF-8 appended to 00_goal.md", utf8_goal_appended),
    Case("invalid UTF-8 inside the goal line", utf8_goal_inside),
    Case("invalid UTF-8 inside a recorded line of 10", utf8_invariants_inside),
    Case("invalid UTF-8 in a line appended to 10", utf8_invariants_appended),
    Case("invalid UTF-8 in 99_next.md", utf8_next),
    Case("invalid UTF-8 in a WAL line (not the last)", utf8_wal_middle),
    Case("malformed JSON in a WAL line in the middle", json_middle),
    Case("JSON of the wrong shape in two WAL lines in the middle", json_middle_wrong_shape),
    Case("malformed JSON as the last WAL line", json_last),
    Case("a 5000-digit number as the last WAL line", json_last_huge_number),
    Case("empty WAL file", empty_wal),
    Case("empty 10_invariants.md", empty_invariants),
    Case("missing 00_goal.md", missing("00_goal.md"), repairable=True),
    Case("missing 10_invariants.md", missing("10_invariants.md"), repairable=True),
    Case("missing 99_next.md", missing("99_next.md"), repairable=True),
    Case("missing 00, 10 and 99", missing_all_three, repairable=True),
    Case("a 100 MB line appended to the WAL", big_line_appended),
    Case("a 100 MB line in the middle of the WAL", big_line_middle),
]


def check_verify_json(result: Result, expected: list[tuple[str, int | None]], what: str) -> list[str]:
    failures: list[str] = []
    if result.code != 1:
        failures.append(f"{what}: `verify --json` exit {result.code}, expected 1\n{result.err}")
    try:
        report = json.loads(result.out)
    except ValueError:
        return [*failures, f"{what}: `verify --json` printed no JSON object: {result.out[:300]!r} {result.err!r}"]
    if not isinstance(report, dict) or report.get("version") != 1 or report.get("ok") is not False:
        return [*failures, f"{what}: wrong JSON shape: {str(report)[:500]}"]
    problems = report.get("problems")
    if not isinstance(problems, list) or not problems:
        return [*failures, f"{what}: no problems listed: {str(report)[:500]}"]
    for p in problems:
        if not isinstance(p, dict) or not {"code", "file", "line", "message"} <= p.keys():
            failures.append(f"{what}: a problem without code/file/line/message: {p}")
        elif not (isinstance(p["code"], str) and isinstance(p["file"], str) and isinstance(p["message"], str)):
            failures.append(f"{what}: a problem with fields of the wrong type: {p}")
        elif p["line"] is not None and not (isinstance(p["line"], int) and p["line"] >= 1):
            failures.append(f"{what}: a problem with a bad line number: {p}")
    got = [(p.get("file"), p.get("line")) for p in problems if isinstance(p, dict)]
    for file, line in expected:
        hit = any(f == file and (line is None or n == line) for f, n in got)
        if not hit:
            failures.append(f"{what}: no problem names {file}" + (f" line {line}" if line else "") + f": got {got}")
    return failures


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_damaged_state(repo: Path, state_dir: Path, case: Case) -> None:
    expected = case.damage(state_dir)
    failures: list[str] = []

    result = run("verify", "--json", cwd=repo)
    if "Traceback" in result.err or result.code == 4:
        failures.append(f"verify: traceback or internal error:\n{result.err}")
    # even an empty WAL is a problem that verify names in JSON (exit 1), not an error without JSON
    failures += check_verify_json(result, expected, case.name)

    result = run("checkpoint", "--done", "looked at the damage", "--next", "go on", cwd=repo)
    text = result.err
    names = {file for file, _ in expected} | {file.removeprefix("state/") for file, _ in expected}
    if "Traceback" in text or result.code == 4:
        failures.append(f"checkpoint: traceback or internal error:\n{text}")
    elif result.code == 0:
        # went on: it must say what it repaired or what is still wrong, naming the file
        # damage in the middle of the WAL must not go unsaid: a log changed outside rehydrate is re-checked whole
        said = [ln for ln in text.splitlines() if "repaired" in ln or "warning" in ln]
        if not any(name in ln for ln in said for name in names):
            failures.append(f"checkpoint went on (exit 0) without naming {sorted(names)}: {text!r}")
    elif result.code == 3:
        if not any(name in text for name in names) or "hint:" not in text:
            failures.append(f"checkpoint exit 3 without naming {sorted(names)} and a hint: {text!r}")
    else:
        failures.append(f"checkpoint exit {result.code}: {text!r}")
    if case.repairable:
        again = run("verify", cwd=repo)
        if again.code != 0:
            failures.append(f"after the repair, verify still fails:\n{again.out}")
    assert not failures, "\n\n".join(failures)


def test_empty_wal_hint_leads_somewhere(repo: Path, state_dir: Path) -> None:
    """An empty WAL with the views still there: the hint must be a step that is not refused in turn."""
    (state_dir / "wal" / "agent.jsonl").write_bytes(b"")
    result = run("checkpoint", "--done", "a", "--next", "b", cwd=repo)
    assert result.code == 3 and "hint:" in result.err, result
    assert "git checkout" in result.err and "move the state folder away" in result.err, result.err
    # following the hint's second way: move the folder away, then init starts over
    state_dir.rename(state_dir.parent / "state.old")
    again = run("init", "--goal", "Ship the parser", "--done-when", "all tests pass", cwd=repo)
    assert again.code == 0, f"the hint {result.err!r} leads to {again.err!r}"


def test_big_last_line_message_is_true(repo: Path, state_dir: Path) -> None:
    """A 100 MB last line is the last line: the error must not say the damage is before it."""
    big_line_appended(state_dir)
    result = run("checkpoint", "--done", "a", "--next", "b", cwd=repo)
    assert "Traceback" not in result.err
    if result.code == 3:
        # an oversized last line is the last line: it must not be called damage before it
        assert "before its last line" not in result.err, result.err
    else:
        assert result.code == 0 and "repaired" in result.err and "agent.jsonl" in result.err, result


# ---------------------------------------------------------------------------------------------------- arguments

BAD = b"bad \xff\xfe \xc3\x28 \xed\xa0\x80 end"  # invalid start bytes, a bad continuation, an encoded surrogate

# The default environment here decodes stdout with surrogateescape (C/C.UTF-8 locale); a desktop UTF-8 locale such
# as en_US.UTF-8 makes Python's stdout strict. PYTHONIOENCODING=utf-8:strict reproduces that without the locale.
ENVS = {"default": {}, "strict-utf8-stdout": {"PYTHONIOENCODING": "utf-8:strict"}}


def run_bytes(args: list[bytes], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    proc = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"rehydrate", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env={**os.environ, **env},
        timeout=TIMEOUT,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("env_name", list(ENVS))
def test_undecodable_bytes_in_arguments(repo: Path, state_dir: Path, env_name: str) -> None:
    env = ENVS[env_name]
    odd_dir = os.fsencode(repo) + b"/st-" + BAD.replace(b" ", b"_")
    cases: list[tuple[list[bytes], bytes, set[int]]] = [
        ([b"checkpoint", b"--done", BAD, b"--next", BAD], b"", {0}),
        ([b"checkpoint", b"--done", BAD, b"--next", BAD, b"--goal", BAD, b"--json"], b"", {0}),
        ([b"invariant", BAD, b"--because", BAD], b"", {0}),
        ([b"invariant", BAD, b"--because", BAD, b"--json"], b"", {0}),
        ([b"reject", BAD, b"--because", BAD, b"--guard", BAD], b"", {0}),
        ([b"handoff"], b"a note with " + BAD + b"\n", {0}),
        ([b"verify"], b"", {0}),
        ([b"resume"], b"", {0}),
        ([b"status", b"--json"], b"", {0}),
        ([b"verify", b"--actor", BAD], b"", {2}),
        ([b"checkpoint", b"--done", b"a", b"--next", b"b", b"--actor", BAD], b"", {2}),
        ([BAD], b"", {2}),
        ([b"--" + BAD.replace(b" ", b"")], b"", {2}),
        ([b"verify", b"--dir", BAD], b"", {3}),
        ([b"resume", b"--dir", BAD], b"", {3}),
        # a state folder whose own name is not UTF-8
        ([b"init", b"--goal", BAD, b"--dir", odd_dir], b"", {0}),
        ([b"verify", b"--dir", odd_dir], b"", {0}),
        ([b"verify", b"--json", b"--dir", odd_dir], b"", {0}),
        ([b"status", b"--dir", odd_dir], b"", {0}),
        ([b"checkpoint", b"--done", BAD, b"--next", b"b", b"--dir", odd_dir], b"", {0}),
        ([b"resume", b"--dir", odd_dir], b"", {0}),
    ]
    failures: list[str] = []
    for args, stdin, codes in cases:
        code, out, err = run_bytes(args, repo, env, stdin)
        what = f"{[a.decode('utf-8', 'backslashreplace') for a in args]}"
        # undecodable bytes on stdin, in arguments or in the folder's name, under a strict UTF-8 stdout too:
        # never an internal error, never a traceback
        if b"Traceback" in err or code == 4:
            failures.append(f"{what}: traceback or internal error (exit {code}):\n{err.decode(errors='replace')}")
        elif code not in codes:
            failures.append(f"{what}: exit {code}, expected {sorted(codes)}: {err.decode(errors='replace')}")
        if b"--json" in args and code == 0:
            # a folder name with undecodable bytes still makes valid JSON
            try:
                json.loads(out)
            except ValueError:
                failures.append(f"{what}: --json output is not JSON: {out[:200]!r}")
    # what was stored is valid UTF-8 (the bad bytes became replacement characters) and the state still verifies
    for path in (state_dir / "wal" / "agent.jsonl", state_dir / "10_invariants.md", state_dir / "20_handoff.md"):
        path.read_bytes().decode("utf-8")
    result = run("verify", cwd=repo)
    if result.code != 0:
        failures.append(f"the state does not verify after the odd arguments:\n{result.out}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize(
    ("args", "limit"),
    [
        (["init", "--goal", "g" * 100_000, "--dir", "fresh-state"], "65,536"),
        (["init", "--goal", "ok", "--done-when", "d" * 100_000, "--dir", "fresh-state"], "65,536"),
        (["checkpoint", "--done", "d" * 100_000, "--next", "n"], "16,384"),
        (["checkpoint", "--done", "d", "--next", "n", "--goal", "g" * 100_000], "16,384"),
        (["invariant", "i" * 100_000, "--because", "b"], "16,384"),
        (["reject", "r", "--because", "b", "--guard", "g" * 100_000], "16,384"),
    ],
    ids=["init-goal", "init-done-when", "checkpoint-done", "checkpoint-goal", "invariant", "reject-guard"],
)
def test_oversized_text_is_a_usage_error_naming_the_limit(
    repo: Path, state_dir: Path, args: list[str], limit: str
) -> None:
    wal_before = (state_dir / "wal" / "agent.jsonl").read_bytes()
    result = run(*args, cwd=repo)
    assert "Traceback" not in result.err
    assert result.code == 2, result
    assert limit in result.err, result.err
    assert (state_dir / "wal" / "agent.jsonl").read_bytes() == wal_before
    assert not (repo / "fresh-state").exists()


def test_oversized_handoff_on_stdin(repo: Path, state_dir: Path) -> None:
    wal_before = (state_dir / "wal" / "agent.jsonl").read_bytes()
    result = rehydrate("handoff", cwd=repo, stdin="h" * (2 << 20), timeout=TIMEOUT)
    assert "Traceback" not in result.err
    assert result.code == 2, result
    assert "1,048,576" in result.err, result.err
    assert (state_dir / "wal" / "agent.jsonl").read_bytes() == wal_before
