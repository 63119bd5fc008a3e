"""store/mail/senders.py: a message in a keyed actor's name counts only when her signed log records it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.store.keys.keyed import keyed

from rehydrate.store.mail import messages, senders
from rehydrate.store.state import State


def test_a_message_in_a_keyed_actors_name_counts_only_with_its_signed_record(
    state: State, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages.send(state, "bob", "fyi", "sent before the key")
    assert senders.forged(State.open(state.root)) == []  # no key: a message is as good as the hands that pushed it
    folder = Path(state.root, "mail", "bob")
    (before,) = os.listdir(folder)
    keyed(state, tmp_path, monkeypatch)
    messages.send(State.open(state.root), "bob", "fyi", "signed")
    ts, ident = "2026-12-01T05:58:07.245Z", "M-0123abcd"
    planted = messages.file_name(ts, "agent", ident)
    (folder / planted).write_bytes(messages.render("agent", "bob", "redirect", ts, ident, "stop everything"))
    found = senders.forged(State.open(state.root))
    assert [(p.code, p.file) for p in found] == [
        ("forged", f"state/mail/bob/{planted}"),
        ("forged", f"state/mail/bob/{before}"),
    ]
    assert found[0].message.startswith(
        f"a redirect ({ident}) in agent's name that agent's signed log does not vouch for "
        f"(agent's log holds no mail record {ident}): not shown as agent's"
    )
    assert "(its mail record in state/wal/agent.jsonl (seq 5) is not: it carries no signature)" in found[1].message
