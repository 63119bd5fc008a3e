"""The mailbox check (checks/mailbox.py): statuses, ordering, a redirect that degrades until it is read, hostile
message files named and never followed (the brief's mail section: tests/brief/test_mail.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rehydrate.checks import Context, Finding
from rehydrate.checks.mailbox import MailboxCheck
from rehydrate.store.mail import inbox, messages
from rehydrate.store.state import State


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    State.init(tmp_path / "state", "Build the parser", actor="alice")
    return tmp_path / "state"


def run(root: Path, actor: str) -> list[Finding]:
    state = State.open(root, actor)
    return MailboxCheck().run(Context(state, None))


def send(root: Path, sender: str, to: str, kind: str, text: str) -> str:
    out = messages.send(State.open(root, sender), to, kind, text)
    assert out.record is not None
    return str(out.record["data"]["id"])


def test_one_actor_and_no_mail_is_na(root: Path) -> None:
    [f] = run(root, "alice")
    assert f.status == "n/a"


def test_nothing_unread_is_ok_and_fyi_or_actionable_stay_ok(root: Path) -> None:
    State.open(root, "bob").checkpoint("joined", "read the code")
    [f] = run(root, "alice")
    assert f.status == "ok" and "nothing unread" in f.message
    send(root, "bob", "alice", "fyi", "docs moved")
    send(root, "bob", "alice", "actionable", "review #3")
    [f] = run(root, "alice")
    assert f.status == "ok" and f.message.startswith("2 unread (actionable 1, fyi 1)")


@pytest.mark.parametrize("kind", ["redirect", "blocker"])
def test_an_unread_redirect_or_blocker_degrades_until_read(root: Path, kind: str) -> None:
    send(root, "bob", "alice", "fyi", "docs moved")
    ident = send(root, "bob", "alice", kind, "stop the lexer")
    [f] = run(root, "alice")
    assert f.status == "degraded" and f.next_action is not None and "rehydrate mail" in f.next_action
    assert f"first: {kind} {ident} from bob" in f.message
    messages.mark_read(State.open(root, "alice"), [ident])  # what `rehydrate mail` records
    [f] = run(root, "alice")
    assert f.status == "ok" and f.message.startswith("1 unread (fyi 1)")


def test_a_message_read_before_the_checkpoint_stays_read_after_it(root: Path) -> None:
    ident = send(root, "bob", "alice", "redirect", "stop")
    messages.mark_read(State.open(root, "alice"), [ident])
    State.open(root, "alice").checkpoint("changed course", "the new plan")
    [f] = run(root, "alice")
    assert f.status == "ok" and "nothing unread" in f.message


def test_listing_sorts_by_kind_then_time(root: Path) -> None:
    kinds = ["fyi", "actionable", "redirect", "fyi", "blocker"]
    for i, kind in enumerate(kinds):
        send(root, "bob", "alice", kind, f"message {i}")
    found = inbox.listing(State.open(root, "alice"), set())
    assert [(m.kind, m.text) for m in found.messages] == [
        ("redirect", "message 2"),
        ("blocker", "message 4"),
        ("actionable", "message 1"),
        ("fyi", "message 0"),
        ("fyi", "message 3"),
    ]


def _plant(root: Path, name: str) -> Path:
    folder = root / "mail" / "alice"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


GOOD_NAME = "20261201T060000000Z-mallory-M-0123abcd.md"


@pytest.mark.parametrize("what", ["symlink", "fifo", "huge", "bad-header", "bad-hash", "bad-name", "folder-link"])
def test_hostile_files_under_state_mail_are_named_and_skipped(root: Path, tmp_path: Path, what: str) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("from: x\n\nsecret text\n")
    send(root, "bob", "alice", "fyi", "a good one")
    if what == "symlink":
        _plant(root, GOOD_NAME).symlink_to(secret)
    elif what == "fifo":
        os.mkfifo(_plant(root, GOOD_NAME))
    elif what == "huge":
        _plant(root, GOOD_NAME).write_bytes(b"x" * (messages.MAX_BYTES + 1))
    elif what == "bad-header":
        _plant(root, GOOD_NAME).write_text("from: mallory\nhello\n\ntext")
    elif what == "bad-hash":
        text = messages.render("mallory", "alice", "redirect", "2026-12-01T06:00:00.000Z", "M-0123abcd", "ok")
        _plant(root, GOOD_NAME).write_bytes(text.replace(b"\n\nok", b"\n\nnot ok"))
    elif what == "bad-name":
        _plant(root, "notes.md").write_text("hello")
    elif what == "folder-link":
        (root / "mail" / "all").symlink_to(tmp_path)
    findings = run(root, "alice")
    skipped = [f for f in findings if f.status == "skipped"]
    assert len(skipped) == 1, [(f.status, f.message) for f in findings]
    assert "secret text" not in " ".join(f.message for f in findings)
    assert any(f.status == "ok" and "1 unread (fyi 1)" in f.message for f in findings)  # the good one still counts
    assert secret.read_text() == "from: x\n\nsecret text\n"  # never followed, never changed
