"""The outbox check: this actor's open promises, named and never degraded; n/a with one actor."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate.checks import Context, Finding
from rehydrate.checks.outbox import OutboxCheck
from rehydrate.store.mail import promises
from rehydrate.store.state import State


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    State.init(tmp_path / "state", "Build the parser", actor="alice")
    return tmp_path / "state"


def run(root: Path, actor: str) -> list[Finding]:
    return OutboxCheck().run(Context(State.open(root, actor), None))


def promise(root: Path, actor: str, text: str) -> str:
    out = promises.promise(State.open(root, actor), text)
    assert out.record is not None
    return str(out.record["data"]["id"])


def test_one_actor_is_na(root: Path) -> None:
    [f] = run(root, "alice")
    assert f.status == "n/a"


def test_open_promises_are_named_in_order_and_never_degrade(root: Path) -> None:
    State.open(root, "bob").checkpoint("joined", "read")
    [f] = run(root, "alice")
    assert f.status == "ok" and f.message.startswith("no open promise")
    first = promise(root, "alice", "review bob's parser")
    second = promise(root, "alice", "write the docs")
    [f] = run(root, "alice")
    assert f.status == "ok"
    assert f.message == f'2 open: {first} "review bob\'s parser"; {second} "write the docs"'
    assert f.next_action is not None and "promise done" in f.next_action
    promises.promise_done(State.open(root, "alice"), first)
    [f] = run(root, "alice")
    assert f.message == f'1 open: {second} "write the docs"'
    [f] = run(root, "bob")  # bob's outbox is bob's own
    assert f.message.startswith("no open promise")


def test_more_than_three_are_counted(root: Path) -> None:
    State.open(root, "bob").checkpoint("joined", "read")
    for i in range(5):
        promise(root, "alice", f"thing {i}")
    [f] = run(root, "alice")
    assert f.message.startswith("5 open: ") and f.message.endswith("; and 2 more")


def test_the_cache_follows_appends_and_a_replaced_log(root: Path) -> None:
    """The read set and promises come from a per-worktree cache plus the log's new lines; a log replaced (a
    rotate, a checkout) is read whole again."""
    State.open(root, "bob").checkpoint("joined", "read")
    first = promise(root, "alice", "one")
    assert [*promises.promises(State.open(root, "alice"))] == [first]  # cache written
    second = promise(root, "alice", "two")
    assert [*promises.promises(State.open(root, "alice"))] == [first, second]  # the new line read
    log = root / "wal" / "alice.jsonl"
    kept = log.read_bytes()
    prefix = b"\n".join(kept.split(b"\n")[:-2]) + b"\n"  # the log without the last promise
    # rolled back (a checkout), then new work: a log longer than the one the cache covered, other lines at its end
    Path(State.open(root, "alice").seen_path).unlink()  # the rollback cache: the rollback is not the point here
    log.unlink()
    log.write_bytes(prefix)
    third = promise(root, "alice", "three, a longer promise than the one it replaces")
    assert log.stat().st_size >= len(kept)
    assert [*promises.promises(State.open(root, "alice"))] == [first, third]
    log.unlink()
    log.write_bytes(prefix)  # rolled back again: shorter than what the cache covered
    assert [*promises.promises(State.open(root, "alice"))] == [first]
