"""Promises: `promise` records of the promiser's own log, each made with an id (`P-` and 6 hex) and later marked
done by another `promise` record naming it."""

from __future__ import annotations

from rehydrate.errors import UsageError
from rehydrate.store import layout
from rehydrate.store.mail.known import known
from rehydrate.store.wal import record as wal
from rehydrate.text import cap, clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.session import Outcome
    from rehydrate.store.state import State


def promises(state: State) -> dict[str, dict[str, Any]]:
    """This actor's promises by id, in the order made: {"text", "ts", "done"}."""
    return known(state).promises


def promise(state: State, text: str) -> Outcome:
    text = clean(text)
    if not text:
        raise UsageError("the promise is empty", field="text")
    cap("the promise", text, layout.MAX_FIELD)
    ident = "P-" + wal.sha256(f"{state.actor}\0{wal.now()}\0{text}".encode())[:6]
    return state.record("promise", {"id": ident, "text": text})


def promise_done(state: State, ident: str) -> Outcome:
    made = promises(state)
    if ident not in made:
        known = ", ".join(i for i, p in made.items() if not p["done"]) or "none open"
        raise UsageError(f"no promise {ident!r} of {state.actor}", f"open ones: {known}", field="id")
    if made[ident]["done"]:
        raise UsageError(f"promise {ident} is already done", field="id")
    return state.record("promise", {"id": ident, "done": True})
