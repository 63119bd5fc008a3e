"""One command's working values, made when the command starts and dropped when it ends: what reconciliation found
(Snapshot), what the write path did on the way (Session: the cache to write at the end, the views written, the
record a merge joined first, ...) and what the command reports (Outcome). State, which outlives a command, holds the
state folder and its verbs, never these.
"""

from __future__ import annotations

import os

from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem
from rehydrate.store.local.seen import Seen, fingerprint
from rehydrate.store.wal import back as walback

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.latches.binding import Lines
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

__all__ = ["Outcome", "Reading", "Session", "Snapshot", "dirs_fingerprint", "flush"]


class Outcome:
    """What a command did: the record it wrote (if any), what reconciliation repaired, what is still wrong."""

    def __init__(
        self,
        record: Record | None = None,
        repaired: list[str] | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        self.record = record
        self.repaired: list[str] = repaired if repaired is not None else []
        self.merged: list[dict[str, Any]] | None = None  # Snapshot.merged: lines of work a merge joined, not chosen
        self.problems: list[Problem] = problems if problems is not None else []
        self.extra: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Outcome(repaired={self.repaired!r}, problems={self.problems!r})"

    @property
    def ok(self) -> bool:
        """No problem but information (Problem.info: a duplicate record, a branch switch)."""
        return all(p.info for p in self.problems)


class Snapshot:
    """The state as reconciliation found it, carried through one command under the lock: the WAL's last record
    (the recovery point), what was repaired, what is still wrong, and the views' bytes as they were read."""

    def __init__(self, last: Record, prev: Record | None, problems: list[Problem], repaired: list[str]) -> None:
        self.last = last
        self._prev = prev
        self.prev_at: tuple[str, str] | None = None  # (log, name): the record before last is read from it when asked
        self.seen: dict[str, bytes | None] = {}  # view bytes as reconciliation read them (valid while nothing repaired)
        self.view_stats: dict[str, os.stat_result | None] = {}  # each view read: its file's lstat before the read
        self.fresh: dict[str, str] = {}  # the views the cache vouched for, unread: each file's fingerprint as found
        self.problems = problems
        self.repaired = repaired
        self.inv: Lines | None = None  # 10_invariants.md's running binding as it is now (set_invariants)
        self.inv_ok = True  # 10_invariants.md holds every recorded line, in order
        self.unrecorded: list[tuple[int, str]] = []
        self.cache = Seen()  # what this clone has seen of the log, kept up to date by every append
        self.trust_cache = True  # a view the cache says is unchanged since it was bound is not read (not verify)
        self.lost: dict[str, Any] | None = None  # a rollback the next checkpoint acknowledges
        # The log as a graph (store/wal/graph.py): every head, mine (last) first; one normally, several after git merged
        # two lines of work and before a write joins them
        self.heads: list[Record] = [last]
        # the merged lines of work not yet chosen by a checkpoint (a merge record's data.lines, or computed from the
        # heads before the join), mine first: [{"head", "seq", "branch", "checkpoint": {"seq", "h", "ts", "next",
        # "done"} | None}]; None when there is nothing to choose
        self.merged: list[dict[str, Any]] | None = None
        # with several heads, for 99_next.md and 20_handoff.md each head's last record that produced the view
        self._head_views: dict[str, list[Record]] = {}
        self.views_from: str | None = None  # the log head_views is computed from when first asked (cheap path)
        self.heads_text = ""  # the heads as the cache keeps them (Seen.heads)
        self.branch: str | None = None  # the worktree's branch, when it was read (a full pass or a write)

    @property
    def head_views(self) -> dict[str, list[Record]]:
        """For 99_next.md and 20_handoff.md, each head's last record that produced it (several heads only; on the
        cheap path read from the log when first asked: one pass)."""
        if self.views_from is not None:
            from rehydrate.store.wal import graph  # several heads alone (tests/cli/test_cli_imports.py)

            path, self.views_from = self.views_from, None
            self._head_views = graph.head_views(graph.Graph(path), self.heads)
        return self._head_views

    @head_views.setter
    def head_views(self, found: dict[str, list[Record]]) -> None:
        self._head_views, self.views_from = found, None

    @property
    def prev(self) -> Record | None:
        """The record before the last: read from the log's tail only when asked (on the cheap path the tail read
        stops at the last record, which may follow a record of megabytes, a handoff's)."""
        if self.prev_at is not None:
            tail = walback.tail(*self.prev_at)
            self.prev_at = None
            self._prev = tail.records[-2][1] if len(tail.records) > 1 else None
        return self._prev

    @prev.setter
    def prev(self, rec: Record | None) -> None:
        self._prev, self.prev_at = rec, None

    def set_invariants(self, lines: Lines | None) -> None:
        """10_invariants.md's running binding from now on (binding.Lines: a new record binds it, extended by an
        append without reading the file)."""
        self.inv = lines

    def outcome(self) -> Outcome:
        """What reconciliation found, as a command's outcome."""
        out = Outcome(record=self.last, repaired=self.repaired, problems=self.problems)
        out.merged = self.merged
        return out


class Session:
    """What one command's write path carries from step to step, under the lock: State.session, made anew by flush at
    the end of each command. A write that raises before its flush leaves its values to the next command of a
    long-lived process (the MCP server); none of them can mislead it: reconcile clears `pending`, each append sets
    `joined`, `rendered` is used only for the very record it names, and an entry's `entry_ts` is cleared by the
    command that minted it, raised or not."""

    def __init__(self) -> None:
        self.pending: Seen | None = None  # the cache as this command left it, written by flush() under the lock
        self.wrote: dict[str, os.stat_result | None] = {}  # the views State.apply wrote: each file's fstat after it
        self.joined: Record | None = None  # the merge record the last append wrote first (State.append_many)
        self.rendered: tuple[Record, bytes] | None = None  # the record State.seal last rendered a view for, its bytes
        # the time an entry's id was minted from: its record (and a merge record written first) carry the same
        self.entry_ts: str | None = None
        self.all_heads: dict[str, list[Record]] | None = None  # verify's: every other actor's heads (keys.check)


def flush(state: State) -> None:
    """Write the cache as the command left it (once, at its end, under the lock), with the folders' fingerprints as
    they are now: no temporary file can be in them, since every write of the command is done. Never raises: a cache
    that cannot be written costs a full check later, nothing else."""
    cache = state.session.pending
    state.session = Session()  # the command is done: its working values are dropped
    if cache is not None and cache.dirty:
        try:
            dirs = dirs_fingerprint(fsio.lstat(state.root), fsio.lstat(state.wal_dir))
        except OSError:
            return
        state.memo.saved_seen(cache.save(state.seen_path, dirs), cache)


def dirs_fingerprint(root: os.stat_result | None, folder: os.stat_result | None) -> str:
    """The state folder's and wal/'s fingerprints: a file created or removed in either changes them."""
    return f"{fingerprint(root) if root else ''}|{fingerprint(folder) if folder else ''}"


class Reading:
    """`with state.reading() as snapshot:` the state locked and reconciled (safe repairs applied)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.lock = fslock.locked(state.root, words=WORDS)

    def __enter__(self) -> Snapshot:
        self.lock.__enter__()
        try:
            return self.state.begin()
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: object) -> None:
        flush(self.state)  # never raises
        self.lock.__exit__(kind, e, tb)
