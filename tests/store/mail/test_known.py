"""store/mail/known.py: what an actor's log says of mail and promises (its read set, its promises), read through a
cache that the log's own changes outrun."""

from __future__ import annotations

from rehydrate.store.mail import known, messages, promises
from rehydrate.store.state import State


def test_the_read_set_and_the_open_promises_follow_the_log(state: State) -> None:
    assert known.read_set(state) == set() and known.carried(state) == {"read": [], "promises": {}}
    messages.mark_read(state, ["M-0123abcd", "M-89abcdef"])
    promises.promise(state, "review the parser")
    promises.promise(state, "write the docs")
    me = State.open(state.root)
    assert known.read_set(me) == {"M-0123abcd", "M-89abcdef"}
    by_text = {v["text"]: k for k, v in known.known(me).promises.items()}
    first, second = by_text["review the parser"], by_text["write the docs"]
    promises.promise_done(me, first)
    carried = known.carried(State.open(state.root))
    assert carried["read"] == ["M-0123abcd", "M-89abcdef"]
    assert list(carried["promises"]) == [second] and carried["promises"][second]["text"] == "write the docs"
    messages.mark_read(State.open(state.root), ["M-00000000"])  # a later record, past what the cache covered
    assert known.read_set(State.open(state.root)) == {"M-0123abcd", "M-89abcdef", "M-00000000"}


def test_a_rotate_record_carries_what_came_before(state: State) -> None:
    k = known.Known()
    k.add({"op": "read", "data": {"mail": ["M-11111111", 5]}})
    k.add({"op": "promise", "data": {"id": "P-aaaaaa", "text": "old"}, "ts": "t"})
    k.add({"op": "rotate", "data": {"mail": {"read": ["M-22222222"], "promises": {"P-bbbbbb": {"text": "kept"}}}}})
    assert k.read == {"M-22222222"}
    assert k.promises == {"P-bbbbbb": {"text": "kept", "ts": None, "done": False}}
