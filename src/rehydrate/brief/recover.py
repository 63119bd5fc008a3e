"""The recovery ledger, computed by code and read-only: what `rehydrate recover` prints and the MCP server's
`recover` tool returns.

It opens the state under a shared lock and reconciles it without repairing anything on disk (what a repair would
change is reported by the state check, `rehydrate verify --repair` applies it), reads back the WAL to the last
checkpoint (store/wal/since.py), reads state/config.json, and releases the lock before any check runs: git and gh may
take seconds, and a writer must not wait for them. Then every built-in check in ledger order, in recover scope (git
10 s a call, gh, the user's own checks from config.json), summed up by checks/ledger.py. It writes nothing: no
record, no repair, no cache. `resume` stays the logged rehydration.
"""

from __future__ import annotations

import os

from rehydrate import checks
from rehydrate.brief import ack, receipt, with_line
from rehydrate.checks import ledger, user
from rehydrate.errors import RehydrateError, StateMissing, UsageError
from rehydrate.fs import lock as fslock
from rehydrate.store import WORDS, actors, config, layout, views
from rehydrate.store.reconcile import reconcile
from rehydrate.store.state import State
from rehydrate.store.wal import since

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from rehydrate.checks.ledger import Ledger


class Recovery:
    """What recover read under the lock (the state, None when it did not load, and everything the checks need),
    and the ledger the checks gave."""

    def __init__(self) -> None:
        self.state: Any = None
        self.outcome: Any = None
        self.since: Any = None
        self.views: dict[str, str | None] = {}
        self.config: dict[str, Any] = {}
        self.error: RehydrateError | None = None  # why the state did not load
        self.empty = False  # the state did not load because there is none (an empty or missing folder)
        self.summed: Ledger | None = None

    @property
    def recovered(self) -> bool:
        return self.summed is not None and self.summed.recovered


def recover(
    path: str | None,
    actor: str | None,
    transcript: str | None = None,
    env: Mapping[str, str] | None = None,
    words: Callable[[RehydrateError], tuple[str, str | None]] | None = None,
) -> Recovery:
    """Every check in recover scope on the state at path (found as State.open finds it), read-only. A state that
    does not load is not raised: `error` says why and the ledger asks to fix it first, in the caller's words
    (words(e): the message and the hint, as a command line names its options). UsageError is raised."""
    env = os.environ if env is None else env
    got = _read(path, actor)
    said, hint = (words or _words)(got.error) if got.error is not None else ("", None)
    context = checks.Context(
        got.state,
        got.outcome,
        said or None,
        got.views,
        scope="recover",
        since=got.since,
        transcript=transcript,
        config=got.config,
        env=env,
    )
    chosen = checks.registry("recover")
    if got.state is not None:
        chosen += user.load(got.config, env)
    findings = checks.run_all(context, chosen)
    if got.state is not None:  # judged, not recorded: recover writes nothing
        with_line(findings, receipt.finding(receipt.settle(got.state, record=False)))
        with_line(findings, ack.finding(ack.last(got.state, got.since.ts if got.since is not None else None)))
    if got.state is not None:
        step = views.parse_next(got.views.get(layout.NEXT) or "").get("next") or None
    elif got.empty:  # nothing to act on: an empty folder asks for the task, a broken one says to fix it first
        step = None
    else:
        step = "fix the state first: " + said + (f" ({hint})" if hint else "")
    got.summed = ledger.summarize(
        findings, checkpoint_next=step, goal_present=bool((got.views.get(layout.GOAL) or "").strip())
    )
    return got


def _words(e: RehydrateError) -> tuple[str, str | None]:
    return e.message, e.hint


def _read(path: str | None, actor: str | None) -> Recovery:
    """The state reconciled under a shared lock, nothing repaired or written; the lock is released on return."""
    got = Recovery()
    try:
        state = State.open(path, actor)
        if state.joining:  # an actor that has not written yet: its first write joins (store/actors.py)
            raise actors.no_history(state)
        with fslock.locked(state.root, shared=True, words=WORDS):
            snap = reconcile(state, repair=False)
            state.session.pending = None  # the seen-cache is not written either: recover leaves every file as it was
            for name in (layout.GOAL, layout.NEXT):  # 99, or an actor's own next/<actor>.md
                raw = state.view_bytes(
                    actors.pc_names(state.actor, snap.last)[0] if name == layout.NEXT else name, snap
                )
                got.views[name] = None if raw is None else raw.decode("utf-8", "replace")
            got.since = since.find(state, snap, since.RECOVER_BYTES)
            got.outcome = snap.outcome()
        got.config = config.read(state.root)
        got.state = state
    except UsageError:
        raise
    except RehydrateError as e:
        got.error = e
        got.empty = isinstance(e, StateMissing) and e.field is None
    return got
