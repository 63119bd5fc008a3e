"""The recognize step: the WAL's tail against the views, safe repairs applied, each named.

Cheap by default: the log's tail is read, not the log. The whole chain is checked once when the rollback cache
(seen.py) says the log changed outside rehydrate. A torn last line is cut (a .broken copy kept) or, with only its
newline lost, given it back; an interrupted rotate is finished; then the latches (latches.py) and the replaceable
views (views.py) are compared with the WAL's last record. The caller (State) holds the lock.
"""

from __future__ import annotations

import os
import stat

from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, layout, records, views
from rehydrate.store.latches import binding
from rehydrate.store.layout import GOAL, INVARIANTS
from rehydrate.store.local import place as local
from rehydrate.store.local import teamseen
from rehydrate.store.local.seen import Seen, checked, checked_mark, fingerprint
from rehydrate.store.session import Snapshot, dirs_fingerprint
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable

    from rehydrate.store.local.rollback import ScanInfo
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def reconcile(
    state: State, repair: bool, chain: Callable[[int | None], ScanInfo] | None = None, trust_cache: bool = True
) -> Snapshot:
    """The recognize step, cheap path: the WAL's tail against the views. Lock held by the caller. chain(end): the
    caller's own pass over the log up to byte end (verify's), in place of checking the whole chain again. With
    trust_cache (not verify), the views the cache says are unchanged since they were bound are not read (seen.py)."""
    problems: list[Problem] = []
    repaired: list[str] = []
    state.session.pending = None
    seen, log, log_fp = _start(state, repair, problems, repaired)
    # When the log is as this clone left it, its last record is read where the cache says it is, and the one before
    # it only if a view needs it (Snapshot.prev): it may be a record of megabytes (a handoff's). Otherwise the tail
    # (a conflicted log or damage before the tail raises here).
    # With several heads (a merge not yet joined) the last line is not this worktree's head: each head is read where
    # the cache says it is.
    tail, cached = _tail(state, seen, log, log_fp)
    end = tail.torn_offset if tail.torn else None
    info: ScanInfo | None = None
    if seen is None or seen.fp != log_fp or (seen.multi and not cached) or not _ends_as_seen(seen, tail):
        seen, info = _whole_chain(state, seen, end, chain)
        cached = None
    tail = _repair_tail(state, tail, repair, problems, repaired)
    snap = _recovery_point(state, tail, problems, repaired, checked=info is not None)
    if len(tail.records) == 1 and tail.records[0][0] > 0 and not cached:
        snap.prev_at = (state.wal_path, state.wal_rel)
    snap.trust_cache = trust_cache
    if info is not None and end is not None:
        for off, rec in tail.records:  # a record whose newline was put back lay past the pass's end
            if off >= end:
                info.add(rec)
                info.heads.add(off, rec)
    last_offset = tail.records[-1][0]
    if info is not None:
        from rehydrate.store.wal import graph  # see _whole_chain

        snap.branch = local.branch(state.root)
        # the cache's end, if this worktree was on the same branch when it wrote it (a `git switch` in between runs no
        # command), else the head whose last checkpoint was made on this branch, else the first in the file
        same = seen is not None and seen.end is not None and seen.branch in (None, snap.branch)
        hint = seen.end[1] if same and seen is not None and seen.end else None
        last_offset = graph.after_pass(state.wal_path, snap, info.heads, info.merges, hint, last_offset, end)
    elif seen is not None:
        snap.merged = seen.merged
        if cached:  # several heads, each read where the cache says
            snap.heads, snap.prev, snap.heads_text = [r for _, r, _ in cached], cached[0][2], seen.heads
            snap.views_from = state.wal_path
    if records.op_of(snap.last) is records.ROTATE:  # a rotate's last step may be owed (a write's module: see below)
        from rehydrate.store.write.apply import finish_rotate

        finish_rotate(state, snap, last_offset, repair)
    _follow(state, snap, seen, info, repair, log_fp)
    if not repaired and snap.cache.at != last_offset:  # where the next command reads the last record
        snap.cache.at, snap.cache.dirty = last_offset, True
    if snap.lost is not None:
        from rehydrate.store.local.rollback import lost_message  # see _whole_chain

        code = "switched" if snap.lost.get("kind") == "switched" else "rolled-back"
        problems.append(Problem(code, state.wal_rel, None, lost_message(snap.lost)))
    _views_after(state, snap, repair, info if chain is None else None, log_fp)  # (verify's pass put its own lines)
    _signatures(state, snap)
    _teammates(state, snap)
    return snap


def _teammates(state: State, snap: Snapshot) -> None:
    """Each other actor's log against what this worktree last saw of it (store/local/teamseen.py): a listdir of wal/
    and a small file's read, skipped by a process that found them as it saw them while wal/ is as it was then (git
    replaces a file it changes: a pull, a checkout or a reset creates it anew); verify always looks."""
    if snap.trust_cache and state.memo.wal_dir and state.memo.teammates == state.memo.wal_dir:
        return
    found = teamseen.check(state)
    snap.problems.extend(found)
    state.memo.teammates = "" if found else state.memo.wal_dir


def _signatures(state: State, snap: Snapshot) -> None:
    """Each keyed actor's log against its key (store/keys/check.py): two lstats when no actor has one."""
    state.keyed_dir = keyed(state)  # (the write that follows asks too)
    if state.keyed_dir:
        from rehydrate.store.keys import check  # loaded only where an actor signs: the hook path stays light

        snap.problems.extend(check.check(state, snap))


def keyed(state: State) -> bool:
    """Whether any actor may sign here: state/keys/ exists, or this clone pinned a key (store/keys/), without
    loading store/keys/: two lstats at most."""
    return (
        fsio.lstat(state.path(layout.KEYS_DIR)) is not None
        or fsio.lstat(os.path.join(state.local, layout.KEY_PINS)) is not None
    )


def _views_after(state: State, snap: Snapshot, repair: bool, info: ScanInfo | None, log_fp: str) -> None:
    """The views reconciled; after this command's own whole pass, with the recorded lines of 10_invariants.md it
    collected (latches.READ, while the log is as the pass read it): the log is not read again."""
    if info is None:
        _reconcile_views(state, snap, repair)
        return
    lines = info.collected()
    if lines.broken:  # (not collected: latches reads the log itself)
        _reconcile_views(state, snap, repair)
        return
    from rehydrate.store.latches import latch as latches  # off the hook path (tests/cli/test_cli_imports.py)

    latches.READ[state.wal_path] = (log_fp, lines)
    try:
        _reconcile_views(state, snap, repair)
    finally:
        latches.READ.pop(state.wal_path, None)


def _tail(
    state: State, seen: Seen | None, log: os.stat_result | None, log_fp: str
) -> tuple[walback.Tail, list[tuple[int, Record, Record | None]] | None]:
    """The log's last record (my head), read where the cache says while the log is as this worktree left it (with
    several heads, each head: the cached heads), else the tail read."""
    cheap = seen is not None and log is not None and seen.fp == log_fp
    if cheap and seen is not None and log is not None and seen.multi:
        cached = _cached_heads(state, seen)
        if cached:
            return walback.Tail([cached[0][:2]], b"", log.st_size, ""), cached
    elif cheap:
        known = _known_tail(state, seen, log, log_fp)
        if known is not None:
            return known, None
    return walback.tail(state.wal_path, state.wal_rel), None


def _cached_heads(state: State, seen: Seen) -> list[tuple[int, Record, Record | None]] | None:
    """The heads the cache names, each read at its offset, mine first with its prev: (offset, head, prev); None if
    any is not there as named (the log is then read whole)."""
    found: list[tuple[int, Record, Record | None]] = []
    try:
        tokens = seen.head_tokens()
    except ValueError:
        return None
    for seq, h16, at, before in tokens:
        rec = walback.read_at(state.wal_path, at)
        if rec is None or rec["seq"] != seq or not str(rec["h"]).startswith(h16):
            return None
        prev = walback.read_at(state.wal_path, before) if before >= 0 and not found else None
        if (not found and (prev is None) != (before < 0)) or (prev is not None and prev["h"] != rec["prev"]):
            return None
        found.append((at, rec, prev))
    return found if len(found) > 1 else None


def _whole_chain(
    state: State, seen: Seen | None, end: int | None, chain: Callable[[int | None], ScanInfo] | None
) -> tuple[Seen | None, ScanInfo]:
    """The log changed outside rehydrate: its whole chain checked once (by the caller's pass, when it has one), and
    the cache kept only if its ring is one this version wrote."""
    if seen is not None and not seen.check():
        seen = None
    if chain is not None:
        return seen, chain(end)
    # the whole pass's modules (the chain's check, the graph of the heads, the rollback check), like the write
    # path's (write/apply), are loaded where a log changed outside rehydrate or a record must be redone: the cheap
    # read of every hook never loads them (tests/cli/test_cli_imports.py)
    from rehydrate.store.local.rollback import ScanInfo
    from rehydrate.store.wal import scan as walscan

    info = ScanInfo.of(seen)
    walscan.check_chain(state.wal_path, state.wal_rel, end, info.add, info.heads, info.load)
    return seen, info


def _start(
    state: State, repair: bool, problems: list[Problem], repaired: list[str]
) -> tuple[Seen | None, os.stat_result | None, str]:
    """The folders checked, the cache loaded (None: absent or not ours), the log's stat and fingerprint ("" if it
    cannot be stat'ed); temporary files left
    by a crash cleared, unless the folders are as the cache saw them at the end of the last command (no file was
    created or removed in them since)."""
    root = _dir_stat(state.root)
    if root is None:
        raise StateMissing(f"no state folder at {state.root}")
    folder = _dir_stat(state.wal_dir)
    if folder is None:
        raise StateMissing(f"no WAL folder at {state.rel(layout.WAL_DIR)}", "run `rehydrate init --goal TEXT`")
    seen = state.load_seen()
    log = _log_stat(state)
    log_fp = fingerprint(log) if log is not None else ""
    state.memo.wal_dir = fingerprint(folder)
    if seen is None or log is None or seen.fp != log_fp or seen.dirs != dirs_fingerprint(root, folder):
        _clear_temps(state, repair, problems, repaired)
    return seen, log, log_fp


def _known_tail(state: State, seen: Seen | None, log: os.stat_result | None, log_fp: str) -> walback.Tail | None:
    """The log's last record, read at the offset the cache gives, if it is there: a whole valid line, after a
    newline, that is the cache's end. None (the tail is read as usual) for anything else."""
    if seen is None or log is None or seen.end is None or not 0 <= seen.at < log.st_size:
        return None
    if log.st_size - seen.at > wal.MAX_LINE:
        return None
    known = state.memo.tail(log_fp, log.st_size, seen)  # the record this process appended last
    if known is not None:
        return known
    fd = fsio.open_read(state.wal_path, WORDS)
    if fd is None:
        return None
    try:
        start = max(seen.at - 1, 0)
        data = os.pread(fd, log.st_size - start, start)
    finally:
        os.close(fd)
    if seen.at > 0:
        if data[:1] != b"\n":
            return None
        data = data[1:]
    if not data.endswith(b"\n") or data.count(b"\n") != 1:
        return None
    try:
        rec = wal.decode(data[:-1])
    except wal.BadRecord:
        return None
    if (rec["seq"], str(rec["h"])[:16]) != seen.end:
        return None
    return walback.Tail([(seen.at, rec)], b"", log.st_size, "")


def _log_stat(state: State) -> os.stat_result | None:
    try:
        return os.stat(state.wal_path)
    except OSError:
        return None  # the tail read says what is wrong


def _dir_stat(path: str) -> os.stat_result | None:
    """A real folder's lstat (None if absent); UnsafeFile if it is anything else (fsio.check_dir's check)."""
    st = fsio.lstat(path)
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise fsio.not_a_folder(path, st.st_mode)
    return st


def _clear_temps(state: State, repair: bool, problems: list[Problem], repaired: list[str]) -> None:
    for folder in (state.root, state.wal_dir):
        for name in os.listdir(folder):
            if fsio.is_temp_name(name):  # fsio.replace's, and nothing else
                where = os.path.relpath(os.path.join(folder, name), os.path.dirname(state.root))
                if repair:
                    fsio.unlink(os.path.join(folder, name), WORDS)
                    repaired.append(f"removed a temporary file left by a crash: {where}")
                else:
                    problems.append(Problem("stale-temp", where, None, "temporary file left by a crash", True))


def _repair_tail(
    state: State, tail: walback.Tail, repair: bool, problems: list[Problem], repaired: list[str]
) -> walback.Tail:
    """A last line that lost only its newline gets it back; a torn one is cut (or, without repair, named)."""
    rel = state.wal_rel
    if tail.torn and walback.only_newline_lost(tail, state.wal_path):
        n = wallines.line_number(state.wal_path, tail.torn_offset)
        if repair:
            fsio.append(state.wal_path, b"\n", "repair.newline", words=WORDS)
            repaired.append(f"put back the final newline of {rel} (line {n} is a whole, valid record)")
            tail = walback.tail(state.wal_path, rel)
        else:
            problems.append(Problem("missing-newline", rel, n, "the last record lost its final newline", True))
            tail.records.append((tail.torn_offset, wal.decode(tail.torn)))
            tail.torn = b""
    if tail.torn:
        if repair:
            repaired.append(walback.cut_torn(state.wal_path, rel, tail))
            tail = walback.tail(state.wal_path, rel)
        else:
            n = wallines.line_number(state.wal_path, tail.torn_offset)
            problems.append(Problem("torn-tail", rel, n, tail.torn_reason, True))
    return tail


def _recovery_point(
    state: State, tail: walback.Tail, problems: list[Problem], repaired: list[str], checked: bool = False
) -> Snapshot:
    """The WAL's last record and the one before it; an empty log raises. checked: the whole log was just checked as
    a graph (after a merge the last line need not follow the one before it), else the two are checked here."""
    rel = state.wal_rel
    if not tail.records:
        if fsio.lstat(state.path(GOAL)) is not None:
            raise RehydrateError(
                f"{rel} holds no record, but {state.rel(GOAL)} exists: the log was emptied or lost",
                f"restore it from git (`git checkout -- {state.rel(layout.WAL_DIR)}`); to start over instead, "
                "move the state folder away and run `rehydrate init --goal TEXT`",
            )
        raise StateMissing(f"{rel} holds no record (a crash during init?)", "run `rehydrate init --goal TEXT` again")
    last_offset, last = tail.records[-1]
    prev = tail.records[-2][1] if len(tail.records) > 1 else None
    if prev is not None and last["prev"] != prev["h"] and not checked:
        n = wallines.line_number(state.wal_path, last_offset)
        problems.append(Problem("chain-broken", rel, n, "the last record does not follow the one before it"))
    return Snapshot(last, prev, problems, repaired)


def _follow(state: State, snap: Snapshot, seen: Seen | None, info: ScanInfo | None, repair: bool, log_fp: str) -> None:
    """Compare the log with what this clone saw of it (the cache), and keep the cache up to date.

    A log that no longer holds records this clone saw was rolled back: `git checkout` or `git stash` of
    state/, a branch switch, a deleted line. The records' hashes still chain, so nothing else would notice.
    It is reported by every command (code rolled-back: how many records, their last checkpoint's next action)
    until the next checkpoint, whose record carries what was lost (data.rolled_back) and so ends the report;
    other records (resume, compaction, ...) keep it pending. If the lost records come back (the branch is
    checked out again) before that, the report ends too. Without a cache (a fresh clone, a deleted or
    garbled cache file) nothing is known and nothing is reported."""
    if info is None:  # the log is as this clone left it
        snap.cache = seen if seen is not None else Seen()
        snap.lost = snap.cache.lost
    else:
        pending = seen.lost if seen is not None else None
        if pending is not None and str(pending["h"])[:16] in info.present:
            pending = None  # the records are back
        from rehydrate.store.local.rollback import rolled_back  # see _whole_chain

        found = rolled_back(seen, info, snap.last, snap.branch) if seen is not None else None
        if found is not None and pending is not None:
            found["count"] += pending["count"]
            found["exact"] = found["exact"] and pending["exact"]
            found["next"] = found["next"] or pending["next"]
        snap.cache = info.seen
        snap.cache.branch = snap.branch
        if snap.cache.end is not None and snap.cache.end[1] != str(snap.last["h"])[:16]:
            snap.cache.saw(snap.last)  # my head is the ring's end: the record the next write follows
        snap.cache.heads = snap.heads_text if len(snap.heads) > 1 else ""
        snap.cache.merged = snap.merged
        snap.lost = snap.cache.lost = found or pending
    if snap.repaired:  # the tail was repaired or a rotate finished: the log changed since it was looked at
        log = _log_stat(state)
        log_fp = fingerprint(log) if log is not None else ""
    if info is not None or snap.cache.fp != log_fp:
        snap.cache.fp = log_fp
        snap.cache.dirty = True
    if repair:
        state.session.pending = snap.cache  # written when the command is done (session.flush)


def _reconcile_views(state: State, snap: Snapshot, repair: bool) -> None:
    if records.op_of(snap.last) is records.INIT and repair:  # a crash during init: write the views that are missing
        from rehydrate.store.write.apply import apply  # see _whole_chain

        for name in apply(state, snap.last):
            snap.repaired.append(f"redid {state.rel(name)} from the WAL (init was interrupted)")
    changed, goal = views.differs(state, snap, GOAL)
    if changed:
        from rehydrate.store.latches import (
            latch as latches,  # the latches' checks: loaded when one is not as the WAL binds it
        )

        latches.goal_differs(state, snap, goal, repair)
    views.reconcile_views(state, snap, repair)
    bound = snap.last["views"].get(INVARIANTS)
    lines = binding.Lines.parse(bound)
    if lines is not None and snap.trust_cache and snap.cache.fresh(INVARIANTS, state.path(INVARIANTS), bound):
        snap.set_invariants(lines)  # as the last record binds it, and this clone found it so: not read
        return
    st = fsio.lstat(state.path(INVARIANTS))  # before the read: a change during it shows at the next command
    if bound is not None and snap.trust_cache and checked(state, snap, st, bound):
        return
    matches, invariants = binding.read_invariants(state, snap)  # one pass; its bytes only when not as bound
    if matches:  # as the last record binds it, line for line
        snap.cache.verified(INVARIANTS, st, bound)
        return
    snap.cache.forget(INVARIANTS)
    from rehydrate.store.latches import latch as latches  # off the hook path (tests/cli/test_cli_imports.py)

    count = len(snap.problems)
    latches.check_invariants(state, snap, invariants, repair)
    clean = len(snap.problems) == count and snap.inv_ok and not snap.unrecorded and not snap.repaired
    if clean and bound is not None and snap.inv is not None:  # another actor's lines, every one recorded
        snap.cache.verified(INVARIANTS, st, checked_mark(state, bound, snap.inv.text()))


def _ends_as_seen(seen: Seen, tail: walback.Tail) -> bool:
    last = tail.records[-1][1] if tail.records else None
    return last is not None and seen.end == (last["seq"], str(last["h"])[:16])
