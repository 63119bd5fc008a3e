"""`rehydrate recover`: the recovery ledger, computed by code, read-only.

It opens the state under a shared lock and reconciles it without repairing anything on disk (what a repair would
change is reported by the state check, `rehydrate verify --repair` applies it), reads back the WAL to the last
checkpoint (store/wal/since.py), reads state/config.json, and releases the lock before any check runs: git and gh may
take seconds, and a writer must not wait for them. Then every built-in check in ledger order, in recover scope (git
10 s a call, gh, the user's own checks from config.json), summed up by checks/ledger.py. It writes nothing: no
record, no repair, no cache. `resume` stays the logged rehydration.
"""

from __future__ import annotations

import os
import stat
import sys

from rehydrate import checks
from rehydrate.brief import ack, receipt, with_line
from rehydrate.checks import ledger, user
from rehydrate.cli import cli_hint, common_options, emit_json, flagged
from rehydrate.errors import ExitCode, RehydrateError, StateMissing, UsageError
from rehydrate.fs import lock as fslock
from rehydrate.store import WORDS, actors, config, layout, views
from rehydrate.store.reconcile import reconcile
from rehydrate.store.state import State
from rehydrate.store.wal import since
from rehydrate.text import clean, named, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from rehydrate.checks.ledger import Ledger


def args_recover(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the recovery checks in their fixed order (identity, state, handoff, recency, live-state, direction, "
        "cursors, then the user's own checks named in state/config.json) and print the ledger: one line per "
        "finding, the confidence, and the next safe action, or the one fact to ask a human. Read-only: it writes "
        "nothing, not even a record. Exit 0 when recovered, 1 when degraded, 3 when the state does not load."
    )
    p.add_argument(
        "--transcript",
        metavar="PATH",
        help="the agent's transcript to read back to the last checkpoint (a regular file), in place of the ones "
        "the hooks recorded",
    )
    common_options(p)
    for action in p._actions:
        if action.dest == "actor":
            action.help = "the actor whose WAL is read (default: $REHYDRATE_ACTOR, else 'agent')"
        elif action.dest == "json":
            action.help = (
                "print one JSON object: version, command, ok, confidence, degraded, checks, next, ask "
                "(the shape is pinned)"
            )


class _Read:
    """What recover read under the lock: the state (None when it did not load), and everything the checks need."""

    def __init__(self) -> None:
        self.state: Any = None
        self.outcome: Any = None
        self.since: Any = None
        self.views: dict[str, str | None] = {}
        self.config: dict[str, Any] = {}
        self.error: str | None = None
        self.hint: str | None = None
        self.empty = False  # the state did not load because there is none (an empty or missing folder)


def cmd_recover(args: argparse.Namespace) -> int:
    transcript = _transcript(args.transcript)
    got = _read(args)
    context = checks.Context(
        got.state,
        got.outcome,
        got.error,
        got.views,
        scope="recover",
        since=got.since,
        transcript=transcript,
        config=got.config,
        env=os.environ,
    )
    chosen = checks.registry("recover")
    if got.state is not None:
        chosen += user.load(got.config, os.environ)
    findings = checks.run_all(context, chosen)
    if got.state is not None:  # judged, not recorded: recover writes nothing
        with_line(findings, receipt.finding(receipt.settle(got.state, record=False)))
        with_line(findings, ack.finding(ack.last(got.state, got.since.ts if got.since is not None else None)))
    if got.state is not None:
        step = views.parse_next(got.views.get(layout.NEXT) or "").get("next") or None
    else:  # nothing to act on: an empty folder asks for the task, a broken one says to fix it first
        step = (
            None if got.empty else "fix the state first: " + (got.error or "") + (f" ({got.hint})" if got.hint else "")
        )
    summed = ledger.summarize(
        findings, checkpoint_next=step, goal_present=bool((got.views.get(layout.GOAL) or "").strip())
    )
    code = ExitCode.STATE if got.state is None else (0 if summed.recovered else ExitCode.DISCREPANCY)
    if args.json:
        emit_json("recover", summed.recovered, **summed.as_json())
    else:
        _print(got, summed)
        if got.error:
            print(f"rehydrate: {got.error}" + (f"\n  hint: {got.hint}" if got.hint else ""), file=sys.stderr)
    return code


def _transcript(path: str | None) -> str | None:
    """--transcript as given, once it names a regular file (a FIFO, a device or a folder is refused)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else "cannot be read"
        raise UsageError(f"{path}: {why}", "give the path of a transcript file", field="transcript") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{path}: not a regular file", "give the path of a transcript file", field="transcript")
    return os.path.abspath(path)


def _read(args: argparse.Namespace) -> _Read:
    """The state reconciled under a shared lock, nothing repaired or written; the lock is released on return."""
    got = _Read()
    try:
        state = State.open(args.dir, args.actor)
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
        got.error, got.hint = flagged(e, args), cli_hint(e, args)
        got.empty = isinstance(e, StateMissing) and e.field is None
    return got


def _print(got: _Read, summed: Ledger) -> None:
    """The ledger as text: a header naming the checkpoint, one line per finding (a non-ok one's next under it), the
    confidence, the next safe action or the question for a human, then what the findings quote (Q1, ...)."""

    def one(text: str) -> str:
        return clean(text, one_line=True)

    lines = [one(_header(got))]
    for f in summed.findings:
        lines.append(one(f"- {f.check}: {f.status}: {f.message}"))
        if f.status not in ("ok", "n/a") and f.next_action:
            lines.append("  next: " + one(f.next_action))
    lines.append(one(f"confidence: {summed.confidence}"))
    if summed.next is not None:
        lines.append(one(f"next safe action: {summed.next}"))
    else:
        lines.append(one(f"ask a human: {summed.ask}"))
    if summed.deferred:
        lines.append(one(summed.deferred))
    if summed.quotes:  # each an inline quotation: it can neither end its line nor pass for the ledger's words
        lines.append("quoted by the checks (text they read, data only):")
        for q in summed.quotes:
            lines.append(f"  {one(f'{q.ref} ({q.what}, {q.source}):')} {quoted(q.text)}")
    sys.stdout.write("\n".join(lines) + "\n")


def _header(got: _Read) -> str:
    """`rehydrate recover · state/ · actor agent · checkpoint 42 at 2026-11-29T22:04Z (HEAD a1b2c3d on feat)`."""

    state, found = got.state, got.since
    if state is None:
        return "rehydrate recover · the state did not load"
    where = state.rel("").rstrip("/") + "/"
    head = f"rehydrate recover · {where} · actor {state.actor}"
    if found is None or found.seq is None:
        return head + " · no checkpoint found"
    when = f" at {named(found.ts[:16] + 'Z')}" if found.ts else ""
    git = found.git or {}
    sha, branch = git.get("head"), git.get("branch")
    on = f" on {named(branch)}" if isinstance(branch, str) else ""  # the WAL's: untrusted
    at = f" (HEAD {named(str(sha)[:7])}{on})" if sha else ""
    return f"{head} · checkpoint {found.seq}{when}{at}"
