"""Crash safety shown by enumeration: every prefix of every write and sync of a command sequence, with unsynced
writes kept, dropped or torn, must recover to the state before or after the interrupted command; a command that
returned is never lost. Switching off any one sync point must make the enumeration fail."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import crashsim
from rehydrate import brief
from rehydrate.errors import StateMissing
from rehydrate.fs import write as fsio
from rehydrate.store import tasks
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

Snapshot = Any


def _tasks(done: str, doing: str) -> dict[str, Any]:
    return tasks.make("the harness", [tasks.item(done, "completed", "1"), tasks.item(doing, "in_progress", "2")])


SEQUENCE: list[tuple[str, Callable[[Path], object]]] = [
    ("init", lambda d: State.init(d / "state", "Build the thing", "the tests pass")),
    ("invariant", lambda d: State.open(d / "state").invariant("Use a WAL", because="crashes")),
    ("reject", lambda d: State.open(d / "state").reject("Edit by hand", because="no trace", guard="db/*.sql")),
    ("checkpoint", lambda d: State.open(d / "state").checkpoint("step one", "step two")),
    ("checkpoint", lambda d: State.open(d / "state").checkpoint("step two", "step three", goal="Part 2")),
    ("handoff", lambda d: State.open(d / "state").handoff("first note\nsecond line")),
    ("invariant", lambda d: State.open(d / "state").invariant("Keep ids short", because="one line each")),
    ("handoff", lambda d: State.open(d / "state").handoff("replaced note")),
    ("resume", lambda d: brief.resume(State.open(d / "state"))),
    ("tasks", lambda d: State.open(d / "state").tasks(_tasks("one", "two"))),
    ("checkpoint", lambda d: State.open(d / "state").checkpoint("step three", "rotate")),
    ("rotate", lambda d: State.open(d / "state").rotate()),
    ("tasks", lambda d: State.open(d / "state").tasks(_tasks("two", "three"))),
    ("checkpoint", lambda d: State.open(d / "state").checkpoint("rotated", "step four")),
    ("reject", lambda d: State.open(d / "state").reject("Skip fsync", because="data loss")),
]


def logical(base: Path) -> Snapshot:
    """What the state means: every record (archived or current), the views' bytes, and the journal's records (the
    reads, store/local/journal.py: outside git, in state/.local/journal). None: no state yet."""
    root = base / "state"
    try:
        State.open(root)
    except StateMissing:
        return None
    records: dict[str, tuple[int, str, bytes]] = {}
    logs = [root / "wal" / "agent.jsonl"]
    if (root / "archive").is_dir():
        logs += sorted((root / "archive").iterdir())
    for log in logs:
        for line in log.read_bytes().splitlines():
            rec = wal.decode(line)
            records[rec["h"]] = (rec["seq"], rec["op"], wal.canonical(rec["data"]))
    views = {}
    for name in ("00_goal.md", "10_invariants.md", "20_handoff.md", "30_tasks.md", "99_next.md"):
        p = root / name
        views[name] = p.read_bytes() if p.exists() else None
    journal = root / ".local" / "journal" / "agent.jsonl"  # a torn last line is no record: the next append cuts it
    reads = [wal.decode(x)["h"] for x in journal.read_bytes().split(b"\n")[:-1]] if journal.exists() else []
    return (tuple(sorted(records.values())), tuple(sorted(views.items())), tuple(reads))


def record_sequence(base: Path) -> tuple[list[crashsim.Op], list[int], list[Snapshot]]:
    """Run SEQUENCE under the recorder: the op log, the end index of each command, the snapshot after each."""
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
    """What a user does after a crash: verify --repair, then verify must be clean."""
    try:
        st = State.open(image / "state")
    except StateMissing:
        return None
    try:
        st.verify(repair=True)
        out = st.verify()
    except StateMissing:
        return None
    if out.problems:
        return ("problems", tuple(f"{p.code} {p.file}:{p.line} {p.message}" for p in out.problems))
    return logical(image)


def enumerate_crashes(
    ops: list[crashsim.Op], ends: list[int], snaps: list[Snapshot], disabled: frozenset[str], stop_at_first: bool
) -> tuple[int, list[str]]:
    """Every crash point and variant; returns (cases, failures)."""
    names = [step[0] for step in SEQUENCE]
    return crashsim.enumerate_cases(
        ops, ends, names, snaps, lambda image: recover(Path(image)), disabled, stop_at_first
    )


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[crashsim.Op], list[int], list[Snapshot]]:
    base = tmp_path_factory.mktemp("seq")
    old = os.getcwd()
    os.chdir(base)  # not a git repository: the records say so and git costs nothing
    try:
        return record_sequence(base)
    finally:
        os.chdir(old)


def test_every_crash_point_recovers(recording: tuple[list[crashsim.Op], list[int], list[Snapshot]]) -> None:
    ops, ends, snaps = recording
    assert len(ends) == len(SEQUENCE) and len(ops) > 60
    assert all(s is not None for s in snaps[1:]) and len(set(map(repr, snaps))) == len(snaps)
    cases, failures = enumerate_crashes(ops, ends, snaps, frozenset(), stop_at_first=False)
    assert not failures, f"{len(failures)} of {cases} crash cases did not recover:\n" + "\n".join(failures[:20])
    assert cases > 3 * len(ops)
    print(f"{len(SEQUENCE)} commands, {len(ops)} system calls, {cases} crash images, all recovered")


# Every fsync a command of SEQUENCE makes, by the name its call site gives it in rehydrate.fs.write.
SYNC_POINTS = [
    "journal.append", "journal.append.dir", "journal.mkdir",
    "mkdir.archive", "mkdir.state", "rotate.link", "rotate.replace.dir", "rotate.replace.file",
    "view.append", "view.replace.dir", "view.replace.file", "wal.append", "wal.append.dir",
]  # fmt: skip


def test_the_sequence_uses_every_sync_point(recording: tuple[list[crashsim.Op], list[int], list[Snapshot]]) -> None:
    assert sorted({op[2] for op in recording[0] if op[0] in ("fsync", "fsync_dir")}) == sorted(SYNC_POINTS)


@pytest.mark.parametrize("point", SYNC_POINTS)
def test_removing_a_sync_point_is_caught(
    point: str, recording: tuple[list[crashsim.Op], list[int], list[Snapshot]]
) -> None:
    """The harness has teeth: without this one fsync, some crash loses or garbles state."""
    ops, ends, snaps = recording
    _cases, failures = enumerate_crashes(ops, ends, snaps, frozenset({point}), stop_at_first=True)
    assert failures, f"no crash case notices that the {point} fsync is missing"


def test_recorder_sees_real_writes(tmp_path: Path) -> None:
    """The model rebuilt at the end of a run equals the real folder, byte for byte."""
    ops, _ends, _snaps = record_sequence(tmp_path)
    model = crashsim.replay(ops, len(ops))
    image = tmp_path / "image"
    image.mkdir()
    model.materialize(str(image), "keep")
    real_root = tmp_path / "state"
    for path in real_root.rglob("*"):
        if path.is_file() and path.name != ".lock":
            assert (image / "state" / path.relative_to(real_root)).read_bytes() == path.read_bytes(), path
