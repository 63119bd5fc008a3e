"""store/mail/inbox.py: an actor's inbox lists the messages to it and to all, unread first by name, a file that is
not a message named and skipped, at most `limit` read."""

from __future__ import annotations

from pathlib import Path

from rehydrate.store.mail import inbox, messages
from rehydrate.store.state import State


def test_the_inbox_lists_unread_messages_by_kind_and_skips_what_is_not_one(state: State) -> None:
    messages.send(state, "bob", "fyi", "the lexer is done")
    messages.send(state, "bob", "blocker", "the parser needs the lexer's tokens")
    messages.send(state, "all", "fyi", "to everyone")
    bob = State.open(state.root, "bob")
    got = inbox.listing(bob, set())
    assert [(m.kind, m.sender, m.text) for m in got.messages] == [
        ("blocker", "agent", "the parser needs the lexer's tokens"),
        ("fyi", "agent", "the lexer is done"),
        ("fyi", "agent", "to everyone"),
    ]
    assert got.unread_names == 3 and got.any_mail and got.skipped == [] and got.forged == []
    assert inbox.listing(state, set()).messages == []  # the sender's own message to all is not in her inbox
    read = {m.id for m in got.messages[:2]}
    assert [m.text for m in inbox.listing(bob, read).messages] == ["to everyone"]
    assert len(inbox.listing(bob, read, everything=True).messages) == 3
    newest = inbox.listing(bob, set(), limit=1)
    assert newest.not_read == 2 and len(newest.messages) == 1
    Path(state.root, "mail", "bob", "notes.md").write_text("not a message\n")
    assert inbox.listing(bob, set()).skipped == ["state/mail/bob/notes.md: not a message file's name"]
