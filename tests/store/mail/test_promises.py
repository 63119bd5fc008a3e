"""store/mail/promises.py: an actor's promises, made and done, each a record in its log."""

from __future__ import annotations

import pytest

from rehydrate.errors import UsageError
from rehydrate.store.mail import promises
from rehydrate.store.state import State


def test_a_promise_is_made_then_done_once(state: State) -> None:
    assert promises.promises(state) == {}
    promises.promise(state, "review the parser")
    made = promises.promises(State.open(state.root))
    (ident,) = made
    assert ident.startswith("P-") and made[ident]["text"] == "review the parser" and made[ident]["done"] is False
    with pytest.raises(UsageError, match=f"open ones: {ident}"):
        promises.promise_done(state, "P-000000")
    promises.promise_done(state, ident)
    assert promises.promises(State.open(state.root))[ident]["done"] is True
    with pytest.raises(UsageError, match=f"promise {ident} is already done"):
        promises.promise_done(state, ident)
    with pytest.raises(UsageError, match="the promise is empty"):
        promises.promise(state, "  \n ")
