"""The state store: open (lock, reconcile), the record's seal and append, and the write operations.

Every write follows the redo-log rule: under one lock, (1) reconcile the views with the WAL, (2) append a WAL record
that carries everything needed to redo the view update, (3) update the view. A crash between (2) and (3) leaves a view
that lags the WAL's last record; the next command redoes it from that record and says so. A view that differs in any
other way was edited by hand: it is reported, never overwritten silently. The WAL itself is wal/'s, the latches
latches/'s, the replaceable views views.py's, a command's working values session.py's and the steps of a write
write/'s; State never renders a brief and never runs checks.
"""

from __future__ import annotations

import os

from rehydrate.errors import StateMissing, UsageError
from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, actors, layout, records
from rehydrate.store.evidence import inforce
from rehydrate.store.layout import INVARIANTS, NEXT
from rehydrate.store.local import journal
from rehydrate.store.local import place as local
from rehydrate.store.local.memo import Memo
from rehydrate.store.local.seen import Seen, fingerprint
from rehydrate.store.locate import locate, resolve_actor
from rehydrate.store.reconcile import keyed, reconcile
from rehydrate.store.session import Outcome, Reading, Session, Snapshot, flush
from rehydrate.store.views import extra_views, render_record
from rehydrate.store.wal import record as wal
from rehydrate.text import cap, clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.latches.latch import Bound
    from rehydrate.store.wal.record import Record

__all__ = ["State"]


class State:
    """One state folder, written by one actor. Open it with State.open or create it with State.init."""

    def __init__(self, root: str, actor: str) -> None:
        self.root = root
        self.actor = actor
        self.wal_dir = os.path.join(root, layout.WAL_DIR)
        self.wal_path = self.log_path(actor)
        self.wal_rel = self.log_rel(actor)  # the log as named to users
        # What this worktree saw of the log (seen.py), in its own git folder (local.py); the old place is read once
        self.local = local.local_dir(root)  # this worktree's own folder for what it alone knows (local.py)
        self.seen_path = os.path.join(self.local, "seen", f"{actor}.seen")
        self.old_seen_path = os.path.join(self.wal_dir, f".{actor}.seen")
        self.memo = Memo()  # what this object last wrote, used while each file is still as written (memo.py)
        self.paths: dict[str, str] = {}  # path(name), joined once
        self.joining = False  # an actor without a log yet in a state that has others: its first write joins
        self.signer: Any = False  # the key this actor signs with (None: it signs nothing; False: not looked for)
        self.keyed_dir: bool | None = None  # whether state/keys/ exists (None: not looked)
        self.session = Session()  # the command's working values: made anew by each command, dropped by flush

    # ----------------------------------------------------------------------------------------------- opening

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, actor: str | None = None) -> State:
        root = locate(path)
        state = cls(root, resolve_actor(actor))
        if not fsio.check_dir(root):
            raise StateMissing(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
        if not fsio.check_dir(state.wal_dir) or not fsio.check_regular(state.wal_path, WORDS):
            if not state.actor_names():
                raise StateMissing(f"no WAL in {root}", "run `rehydrate init --goal TEXT` to create the state")
            state.joining = True  # another actor's state: reads say so (actors.no_history), the first write joins
        return state

    @classmethod
    def init(
        cls,
        path: str | os.PathLike[str] | None,
        goal: str,
        done_when: str | None = None,
        actor: str | None = None,
    ) -> tuple[State, Outcome]:
        """Create the state folder, its WAL and views. The goal is write-once: an existing one is never replaced."""
        from rehydrate.store.write.create import create  # a write's modules: a read never loads them (see _write)

        return create(cls, path, goal, done_when, actor)

    def log_path(self, actor: str) -> str:
        """An actor's log (wal/<actor>.jsonl)."""
        return os.path.join(self.wal_dir, actor + ".jsonl")

    def log_rel(self, actor: str) -> str:
        """An actor's log as named to users (state/wal/<actor>.jsonl)."""
        return self.rel(layout.WAL_DIR, actor + ".jsonl")

    def rel(self, *parts: str) -> str:
        """A path as shown to users: from the state folder's parent (state/wal/agent.jsonl)."""
        return os.path.join(os.path.basename(self.root), *parts)

    def path(self, name: str) -> str:
        found = self.paths.get(name)
        if found is None:
            found = self.paths[name] = os.path.join(self.root, name)
        return found

    def load_seen(self) -> Seen | None:
        """This worktree's cache of the log (seen.py); the old wal/.<actor>.seen while the new one is absent."""
        return self.memo.load_seen(self.seen_path, self.old_seen_path)

    def actor_names(self) -> list[str]:
        return actors.listed(self.root)

    # ----------------------------------------------------------------------------------------------- reconcile

    def recorded_lines(self) -> dict[str, list[Bound]]:
        """Every actor's recorded lines of 10_invariants.md, each in its actor's order (reads every log)."""
        from rehydrate.store.latches import latch as latches  # off the hook path (tests/cli/test_cli_imports.py)

        return latches.recorded_lines(self)

    # ----------------------------------------------------------------------------------------------- writing

    def begin(self, repair: bool = True) -> Snapshot:
        if self.joining:
            raise actors.no_history(self)
        snap = reconcile(self, repair)
        if repair and snap.unrecorded:
            from rehydrate.store.latches import latch as latches  # off the hook path (tests/cli/test_cli_imports.py)

            latches.adopt(self, snap)
        return snap

    def append(
        self,
        snap: Snapshot | None,
        op: str,
        data: dict[str, Any],
        *,
        views: dict[str, str] | None = None,
        git: Any = None,
    ) -> Record:
        """Append one record to this actor's WAL (the commit point) and return it: every record, the init (with no
        snapshot: the log's first) included. A checkpoint acknowledges a rollback found by reconciliation: its
        record carries what was lost."""
        return self.append_many(snap, op, [(data, views or {})], git=git)[-1]

    def append_many(
        self, snap: Snapshot | None, op: str, items: list[tuple[dict[str, Any], dict[str, str]]], *, git: Any = None
    ) -> list[Record]:
        """Append records (each its data and the views it binds beyond the last record's), each chained to the one
        before, in one write and one fsync: a crash tears at most the last, which the next command cuts."""
        last = snap.last if snap is not None else None
        kind = records.of(op)
        acknowledged = snap.lost if snap is not None and kind is records.CHECKPOINT else None
        bound = dict(last["views"]) if last is not None else {}
        if snap is not None and snap.inv_ok and snap.inv is not None:
            bound[INVARIANTS] = snap.inv.text()
        recs: list[Record] = []
        lines: list[bytes] = []
        self.session.joined = None
        if snap is not None and last is not None and len(snap.heads) > 1 and kind is not records.RESUME:
            # lines of work were merged (several heads): this write joins them, with a merge record first
            from rehydrate.store.wal import graph  # several heads alone (tests/cli/test_cli_imports.py)

            self.session.joined, line = graph.join(self, snap, last, bound)
            bound[NEXT] = self.session.joined["views"][NEXT]
            recs.append(self.session.joined)
            lines.append(line)
        for data, views in items:
            carried = {**data, "rolled_back": acknowledged} if acknowledged is not None else data
            rec, line = self.seal(recs[-1] if recs else last, op, carried, {**bound, **views}, git)
            recs.append(rec)
            lines.append(line)
        size = max(map(len, lines))
        if size > wal.MAX_LINE:
            raise UsageError(f"the record would be {size:,} bytes, more than the {wal.MAX_LINE:,} allowed")
        log = fsio.append(self.wal_path, b"".join(lines), "wal.append", create=last is None, words=WORDS)
        cache = snap.cache if snap is not None else Seen()
        for rec in recs:
            cache.saw(rec)
        if self.session.joined is not None:
            cache.heads = ""
        if snap is not None:
            snap.heads, snap.merged = [recs[-1]], cache.merged
        from rehydrate.store.write.rules import acknowledge, written_on  # a write's modules (see _write)

        cache.branch = written_on(self, git)
        if snap is not None and kind is records.CHECKPOINT:
            acknowledge(self, snap, recs[-1], acknowledged, cache)
        cache.fp, cache.at = fingerprint(log), log.st_size - len(lines[-1])
        self.memo.appended(cache.fp, cache.at, recs[-1])
        if self.signer:  # what this actor signed needs no verifying when it is read back here (store/keys/)
            at = log.st_size - sum(map(len, lines))
            places: list[tuple[str, int | None]] = []
            for rec, line in zip(recs, lines, strict=True):
                places.append((rec["h"], at))
                at += len(line)
            from rehydrate.store.keys import pins  # loaded only where an actor signs: the hook path stays light

            pins.signed(self, places)
        self.session.pending = cache  # written once the command is done (flush)
        if snap is not None:
            snap.prev, snap.last = recs[-2] if len(recs) > 1 else last, recs[-1]
        return recs[1:] if self.session.joined is not None else recs

    def seal(
        self,
        last: Record | None,
        op: str,
        data: dict[str, Any],
        views: dict[str, str],
        git: Any,
        parents: list[Record] | None = None,
    ) -> tuple[Record, bytes]:
        """A new record following `last` (and, for a merge record, `parents`: the other heads it joins), sealed, and
        its line. Its seq is one more than its parents' highest (a generation number)."""
        seqs = [int(r["seq"]) for r in ([last] if last is not None else []) + (parents or [])]
        kind = records.of(op)
        rec: Record = {
            "v": wal.VERSION,
            "seq": max(seqs) + 1 if seqs else 1,
            "ts": self.session.entry_ts
            if self.session.entry_ts is not None and (kind.appends or kind is records.MERGE)
            else wal.now(),
            "actor": self.actor,
            "op": op,
            "data": data,
            "views": views,
            "prev": last["h"] if last is not None else None,
        }
        if parents:
            rec["parents"] = [r["h"] for r in parents]
        if git is not None:
            rec["git"] = git
        text = None
        if kind.moves == NEXT:  # 99 (an actor's own next/<actor>.md) rendered here, bound by the record itself
            text = render_record(rec).encode()
            rec["views"][self.pc(last)[0] if kind is not records.INIT else NEXT] = wal.sha256(text)
        signer = self._signing()
        if signer is not None:  # a keyed actor: the signature covers the record (store/keys/); `h` covers both
            rec["sig"] = signer.sign(rec)
        sealed, line = wal.seal_line(rec)
        if text is not None:
            self.session.rendered = (sealed, text)  # write.apply writes these bytes, not rendered again
        return sealed, line

    def _signing(self) -> Any:
        """The key this actor signs with (store/keys/): looked for once per State (an lstat or two when no actor
        has one: state/keys/ and this clone's pins)."""
        if self.signer is False:
            if self.keyed_dir is None:
                self.keyed_dir = keyed(self)
            if not self.keyed_dir:
                return None

            from rehydrate.store.keys import register  # loaded only where an actor signs: the hook path stays light

            self.signer = register.signer_for(self)
        return self.signer

    def pc(self, last: Record | None) -> tuple[str, str]:
        """This actor's program counter: (next view, handoff view) as its last record binds them (store/actors.py)."""
        return actors.pc_names(self.actor, last)

    def view_bytes(self, name: str, snap: Snapshot | None = None) -> bytes | None:
        """A view's bytes: as reconciliation read them into snap when it repaired nothing since, else from disk."""
        found = None
        if snap is not None and not snap.repaired:
            if name in snap.seen:
                return snap.seen[name]
            found = snap.fresh.get(name)
        # as this object wrote it, while the file is still that one (found: as this command found it, under the lock)
        known = self.memo.view(name, self.path(name), found)
        return known if known is not None else fsio.read_bytes(self.path(name), layout.MAX_VIEW, WORDS)

    # ----------------------------------------------------------------------------------------------- commands

    def _entry(self, op: str, text: str, because: str, *more: str | None) -> Outcome:
        from rehydrate.store.write.rules import entry_data  # a write's modules (see _write)

        try:
            return self._write(op, entry_data(op, text, because, *more))
        finally:
            self.session.entry_ts = None

    def invariant(self, text: str, because: str, supersedes: str | None = None) -> Outcome:
        """Record a decision in 10_invariants.md (append-only); supersedes: an earlier entry it takes out of force."""
        return self._entry("invariant", text, because, None, None, supersedes)

    def reject(
        self,
        approach: str,
        because: str,
        guard: str | None = None,
        contains: str | None = None,
        supersedes: str | None = None,
    ) -> Outcome:
        """Record a rejected approach. A hook watches for it: guard is a path glob or command pattern, contains a
        text that the content being written (or the command) must hold; with both, both must match. supersedes: as
        for invariant."""
        return self._entry("reject", approach, because, guard, contains, supersedes)

    def withdraw(self, ident: str, because: str) -> Outcome:
        """Take an entry recorded by mistake out of force: a withdrawal's line in 10_invariants.md (append-only)."""
        return self._entry("withdraw", ident, because, None, None, None)

    def checkpoint(
        self, done: str, next: str, goal: str | None = None, claims: list[tuple[str, str | None]] | None = None
    ) -> Outcome:
        """Write a checkpoint: WAL record first (binding git HEAD, branch, dirty files), then 99_next.md. claims:
        (text, receipt id or None) each; the receipts with a claim written since the last checkpoint join them
        (store/evidence/prepare.py)."""
        done, next = clean(done), clean(next)
        for field, what, value in (("done", "what was finished", done), ("next", "the next allowed action", next)):
            if not value:
                raise UsageError(
                    f"{what} is empty", "a checkpoint says what was finished and the next allowed action", field=field
                )
        data: dict[str, Any] = {"done": done, "next": next, "goal": clean(goal) if goal else None}
        for name, value in data.items():
            cap(name, value or "", layout.MAX_FIELD)
        if claims:
            data["_claims"] = [(inforce.clean_claim(t), inforce.parse_id(r) if r else None) for t, r in claims]
        reads, mark = journal.reads(self)
        out = self._write("checkpoint", {**data, "reads": reads} if reads else data, with_git=True)
        journal.folded(self, mark)
        return out

    def handoff(self, text: str, clear: bool = False) -> Outcome:
        """Replace 20_handoff.md, the note the next session reads in full; clear: with none (a stale one degrades)."""
        text = "" if clear else clean(text)
        if not text and not clear:
            raise UsageError("the handoff note is empty", "give the note, or clear the old one (`handoff --clear`)")
        cap("handoff", text, layout.MAX_HANDOFF)
        return self._write("handoff", {"text": text, "sha256": wal.sha256(text.encode())})

    def tasks(self, data: dict[str, Any]) -> Outcome:
        """Replace the task list (30_tasks.md, or tasks/<actor>.md) with the harness's, as store/tasks.make built
        it. A list the view already shows records nothing: the outcome has no record."""
        if not isinstance(data.get("items"), list):
            raise UsageError("the task list has no items")
        return self._write("tasks", data)

    def receipt(self, data: dict[str, Any]) -> Outcome:
        """Append a `receipt` record (store/evidence/): a command's run, with git's HEAD, branch and dirty files."""
        return self._write("receipt", data, with_git=True)

    def stamp(self, files: list[str], drop: list[str] | None = None) -> Outcome:
        """Record the sha256 of each file (the checks report one that changes), or drop files from the stamps."""
        from rehydrate.store.evidence import paths  # a write's modules (see _write)

        data: dict[str, Any] = {"files": paths.stamp_files(self, files) if files else {}}
        if drop:
            data["dropped"] = paths.drop_paths(self, drop)
        if not files and not drop:
            raise UsageError("no file named", "name the files to stamp")
        return self._write("stamp", data)

    def accept(self, data: dict[str, Any]) -> Outcome:
        """Record an approval file accepted against its reviewer's transcript (store/evidence/, cli/evidence.py)."""
        return self._write("accept", data)

    def register_key(self, signer: Any, previous: Any = None) -> Outcome:
        """Register signer's public key for this actor: a `key` record signed by it (naming the key it replaces, and
        endorsed by that key when `previous` holds it), then state/keys/<actor>.pub; from then on every record this
        actor writes is signed (store/keys/)."""
        from rehydrate.store.keys import register, sign  # loaded only where an actor signs: the hook path stays light

        old = sign.committed(self).get(self.actor)
        data: dict[str, Any] = {"alg": "ed25519", "public": sign.public_text(signer), "id": signer.id}
        data["replaces"] = old.id if old is not None and old.id != signer.id else None
        data["state"] = register.start_of(self)  # the state it signs for: a log copied to another project is told apart
        if previous is not None and old is not None and previous.id == old.id:
            data["endorsed"] = previous.endorse(self.actor, signer)
        self.signer, self.keyed_dir = signer, True
        out = self._write("key", data)
        name = sign.pub_name(self.actor)
        fsio.ensure_dir(self.path(layout.KEYS_DIR), "mkdir.keys", WORDS)
        text = sign.Public.of(signer.public, name).text(self.actor).encode()
        fsio.replace(self.path(name), text, "view.replace", words=WORDS)  # (the record pinned the key: append_many)
        return out

    def record(self, op: str, data: dict[str, Any]) -> Outcome:
        """Append a record that changes no view (compaction, receipt, ...)."""
        import re  # the hook path never loads re (tests/cli/test_cli_imports.py)

        if op in records.OWN or not re.match(records.NAME, op):
            raise UsageError(f"{op!r} cannot be recorded this way", "use the method of the same name")
        return self._write(op, data)

    def _write(self, op: str, data: dict[str, Any], *, with_git: bool = False) -> Outcome:
        """One write under the lock (store/write/command.py). The write path's modules (write/, evidence/prepare,
        git/info) are loaded here, by the first write: a read, which every hook and resume is, never loads them
        (tests/cli/test_cli_imports.py)."""
        from rehydrate.store.write.command import write

        return write(self, op, data, with_git=with_git)

    def rotate(self) -> Outcome:
        """Archive the WAL (end of a task) and start a new one whose first record is anchored to the old last hash."""
        from rehydrate.store.write.rules import rotate  # a write's modules (see _write)

        return rotate(self)

    def reconcile(self, repair: bool = True) -> Outcome:
        """The cheap recognize step every command starts with: WAL tail against views, safe repairs applied."""
        with fslock.locked(self.root, shared=not repair, words=WORDS):
            out = self.begin(repair).outcome()
            flush(self)
            return out

    def reading(self) -> Reading:
        """`with state.reading() as snapshot:` the state locked (exclusively) and reconciled, safe repairs applied;
        read the views with `view_bytes(name, snapshot)`, log what was read with `log_resume(snapshot, data)`."""
        return Reading(self)

    def log_resume(self, snap: Snapshot, data: dict[str, Any]) -> Record:
        """Log a rehydration (a `resume` record: what was read, which checks ran) inside `reading()`, in this
        worktree's journal (store/local/journal.py), never in the WAL: reading leaves the tree clean (journal.log)."""
        return journal.log(self, snap, "resume", data)

    def verify(self, repair: bool = False) -> Outcome:
        """The full recognize step: every log's chain, the latches line by line, the views against the WAL."""
        from rehydrate.store.verify import verify  # it loads the latches: off the hook path

        with fslock.locked(self.root, shared=not repair, words=WORDS):
            out = verify(self, repair)
            flush(self)
            return out

    def status(self) -> Outcome:
        """One screen: the goal, the last checkpoint, the next action, and what is wrong (safe repairs applied)."""
        out = self.reconcile(repair=True)
        from rehydrate.store.write.rules import status_extra  # a write's modules (see _write)

        out.extra = status_extra(self, out)
        return out

    def view_text(self, name: str) -> str | None:
        data = fsio.read_bytes(self.path(name), layout.MAX_VIEW, WORDS)
        return None if data is None else data.decode("utf-8", "replace")

    def extra_views(self) -> list[str]:
        """Other NN_*.md files in the state folder, in lexical (boot) order."""
        return extra_views(self.root)
