"""Crash safety of the several-actors write paths, shown by enumeration as in test_crash_points.py: a second actor's
join and its own program counter (next/<actor>.md, handoff/<actor>.md), a message file created once (mail send), a
read record and promises. Every prefix of every write and sync, with unsynced writes kept, dropped or torn, must
recover to the state before or after the interrupted command; switching off any one new sync point must fail."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import crashsim
from rehydrate.errors import StateMissing
from rehydrate.fs import write as fsio
from rehydrate.store.mail import inbox, known, messages, promises
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

Snapshot = Any


def _send(d: Path) -> object:
    return messages.send(State.open(d / "state", "bob"), "alice", "redirect", "stop the lexer")


def _read(d: Path) -> object:
    state = State.open(d / "state", "alice")
    found = inbox.listing(state, known.read_set(state))
    return messages.mark_read(state, [m.id for m in found.messages])


SEQUENCE: list[tuple[str, Callable[[Path], object]]] = [
    ("init", lambda d: State.init(d / "state", "Build the thing", actor="alice")),
    ("join+checkpoint", lambda d: State.open(d / "state", "bob").checkpoint("read the code", "write the lexer")),
    ("handoff", lambda d: State.open(d / "state", "bob").handoff("bob's note")),
    ("checkpoint", lambda d: State.open(d / "state", "bob").checkpoint("lexer", "parser")),
    ("mail send", _send),
    ("mail read", _read),
    ("promise", lambda d: promises.promise(State.open(d / "state", "alice"), "review the parser")),
]

# Every fsync of the sequence beyond the ones test_crash_points.py covers: the mail folders, the message file and its
# folder entry, the joining actor's log created whole. (next/ and handoff/ are created without one: a folder lost by
# a crash is redone from the WAL with its view, as the enumeration shows.)
NEW_SYNC_POINTS = ["mail.create.dir", "mail.create.file", "mkdir.mail", "wal.join.dir", "wal.join.file"]


def logical(base: Path) -> Snapshot:
    """What the state means: every actor's records (a join counts as part of the actor's first write: it is its own
    append, and a log holding only it is a valid state), the views' and program counters' bytes, the messages."""
    root = base / "state"
    try:
        State.open(root, "alice")
    except StateMissing:
        return None
    records = set()
    for log in sorted((root / "wal").glob("*.jsonl")):
        for line in log.read_bytes().splitlines():
            rec = wal.decode(line)
            if rec["op"] != "join":
                records.add((log.name, rec["seq"], rec["op"], wal.canonical(rec["data"])))
    files = {}
    for folder in ("next", "handoff", "mail/alice"):
        for p in sorted((root / folder).glob("*")) if (root / folder).is_dir() else []:
            if not fsio.is_temp_name(p.name):
                files[f"{folder}/{p.name}"] = p.read_bytes()
    for name in ("00_goal.md", "10_invariants.md", "20_handoff.md", "99_next.md"):
        p = root / name
        files[name] = p.read_bytes() if p.exists() else None
    return (tuple(sorted(records)), tuple(sorted(files.items())))


def record_sequence(base: Path) -> tuple[list[crashsim.Op], list[int], list[Snapshot]]:
    recorder = crashsim.Recorder(str(base))
    real = fsio.calls
    fsio.calls = recorder
    ends: list[int] = []
    snaps: list[Snapshot] = [None]
    try:
        for _name, command in SEQUENCE:
            command(base)
            ends.append(len(recorder.ops))
            snaps.append(logical(base))
    finally:
        fsio.calls = real
    return recorder.ops, ends, snaps


def recover(image: Path) -> Snapshot:
    """verify --repair as each actor, then verify must be clean for each."""
    root = image / "state"
    actors = sorted(p.name[:-6] for p in (root / "wal").glob("*.jsonl")) if (root / "wal").is_dir() else []
    problems = []
    try:
        for actor in actors or ["alice"]:  # each actor repairs its own log (verify reads all of them)
            State.open(root, actor).verify(repair=True)
        for actor in actors or ["alice"]:
            problems += [
                f"{actor}: {p.code} {p.file}:{p.line} {p.message}" for p in State.open(root, actor).verify().problems
            ]
    except StateMissing:
        return None
    if problems:
        return ("problems", tuple(problems))
    return logical(image)


def _mixed(before: Snapshot, after: Snapshot) -> Snapshot:
    """mail send between its two steps: the message file created, the sender's record not yet written (the message
    was delivered; only the proof of sending is missing)."""
    if before is None or after is None:
        return before
    return (before[0], after[1])


def enumerate_crashes(
    ops: list[crashsim.Op], ends: list[int], snaps: list[Snapshot], disabled: frozenset[str], stop_at_first: bool
) -> tuple[int, list[str]]:
    """Every crash point and variant; returns (cases, failures). Between mail send's two steps, the message
    delivered without the sender's record is allowed too (_mixed)."""
    names = [step[0] for step in SEQUENCE]

    def extra(c: int, k: int) -> list[Snapshot]:
        return [_mixed(snaps[c], snaps[c + 1])] if names[c] == "mail send" and k != ends[c] else []

    return crashsim.enumerate_cases(
        ops, ends, names, snaps, lambda image: recover(Path(image)), disabled, stop_at_first, first=1, extra=extra
    )


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[crashsim.Op], list[int], list[Snapshot]]:
    base = tmp_path_factory.mktemp("seq")
    old = os.getcwd()
    os.chdir(base)  # not a git repository
    try:
        return record_sequence(base)
    finally:
        os.chdir(old)


def test_every_crash_point_of_the_actor_and_mail_writes_recovers(
    recording: tuple[list[crashsim.Op], list[int], list[Snapshot]],
) -> None:
    ops, ends, snaps = recording
    assert len(ends) == len(SEQUENCE)
    assert all(s is not None for s in snaps[1:]) and len(set(map(repr, snaps))) == len(snaps)
    cases, failures = enumerate_crashes(ops, ends, snaps, frozenset(), stop_at_first=False)
    assert not failures, f"{len(failures)} of {cases} crash cases did not recover:\n" + "\n".join(failures[:20])
    assert cases > 3 * len(ops)


def test_the_sequence_uses_the_new_sync_points(recording: tuple[list[crashsim.Op], list[int], list[Snapshot]]) -> None:
    used = {op[2] for op in recording[0] if op[0] in ("fsync", "fsync_dir")}
    assert set(NEW_SYNC_POINTS) <= used, sorted(used)


@pytest.mark.parametrize("point", NEW_SYNC_POINTS)
def test_removing_a_new_sync_point_is_caught(
    point: str, recording: tuple[list[crashsim.Op], list[int], list[Snapshot]]
) -> None:
    ops, ends, snaps = recording
    _cases, failures = enumerate_crashes(ops, ends, snaps, frozenset({point}), stop_at_first=True)
    assert failures, f"no crash case notices that the {point} fsync is missing"
