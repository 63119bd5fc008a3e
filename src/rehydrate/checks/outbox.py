"""outbox: this actor's open promises (`rehydrate promise TEXT`, closed by `rehydrate promise done ID`).

- ok: none open, or the open ones named (a promise is named, never degraded: it is a reminder, not a fault);
- n/a: the state has one actor (no one to promise to; its log is not read).
Bounded: this actor's log read past what a per-worktree cache covers (store/mail/known.py).
"""

from __future__ import annotations

from rehydrate.checks import Context, Finding
from rehydrate.store import actors
from rehydrate.store.state import State
from rehydrate.text import quoted

SHOWN = 3  # open promises named in the finding; the rest counted


class OutboxCheck:
    name = "outbox"

    def run(self, context: Context) -> list[Finding]:
        if context.state is None:
            return []
        # a promise is made to the other actors: with none, nothing to look at (and the log is not read)
        if len(actors.listed(context.state.root)) <= 1:
            return [Finding(self.name, "n/a", "one actor in state/wal/")]
        from rehydrate.store.mail import promises  # only with several actors: the hook path does not load it otherwise

        state = State(context.state.root, context.state.actor)  # store.mail reads through a State (never writes)
        made = promises.promises(state)
        open_ = [(i, p) for i, p in made.items() if not p["done"]]
        if not open_:
            done = f"{len(made)} made, all done" if made else "none made"
            return [Finding(self.name, "ok", f"no open promise ({done}) in {state.wal_rel}")]
        named = "; ".join(f"{i} {quoted(p['text'], 60)}" for i, p in open_[:SHOWN])  # a promise's text: outside
        more = f"; and {len(open_) - SHOWN} more" if len(open_) > SHOWN else ""
        step = "keep them, or record each one kept with `rehydrate promise done ID`"
        return [Finding(self.name, "ok", f"{len(open_)} open: {named}{more}", step)]
