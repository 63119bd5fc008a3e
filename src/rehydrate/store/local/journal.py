"""The journal: this worktree's record of the briefs it read, kept where reading the state never dirties the tree.

A session start reads the state and logs the read as a `resume` record. In the WAL, that record would change a
committed file at every session start and dirty the tree, so it goes to `<local_dir>/journal/<actor>.jsonl`
(store/local/place.py: in the worktree's own git folder, or `state/.local/` outside git), never committed, never
shared by two worktrees. The records have the WAL's shape and encoding (wal.seal, wal.encode, wal.decode) and their
own chain (seq, prev); each append is one write and one fsync (fsio.append), under the state lock the read holds.

The journal is an audit trail, not state: it is read as untrusted (every record decoded strictly, a bad line ends a
read; a reader that asks for some ops only passes over the lines that hold none undecoded: Recent.of, read_since's
skip), capped in size (past MAX_BYTES the file becomes the previous generation `<actor>.1.jsonl`, replacing the one
before), and it never fails a command: a journal that cannot be written (a symlink, a FIFO, a full disk) costs the
audit line only, and `append` says why instead of raising. A torn last line is cut before the next append.

The committed history still says which briefs were read: the next checkpoint carries `data.reads` (`reads`: how many
resumes since the last fold, the last five of them), and `<actor>.folded` keeps the last folded record's hash.
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem
from rehydrate.store.local import place as local
from rehydrate.store.records import RESUME, op_of
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

FOLDER = "journal"
MAX_BYTES = 4 << 20  # a generation's size: past it, the next append starts a new file
READ_BYTES = 1 << 20  # the most a hook reads back of the journal (a few thousand resumes)
FOLD_LAST = 5  # the resumes a checkpoint's data.reads names one by one
_MARK_SIZE = 200


_KEY = "\0journal"  # where the State object keeps its journal's path once found (State.paths: paths joined once)


def path(state: State) -> str:
    """The journal of the state's actor in this worktree (not created here)."""
    found = state.paths.get(_KEY)
    if found is None:
        found = state.paths[_KEY] = os.path.join(state.local, FOLDER, state.actor + ".jsonl")
    return found


def _previous(current: str) -> str:
    return current[: -len(".jsonl")] + ".1.jsonl"


def _mark(current: str) -> str:
    return current[: -len(".jsonl")] + ".folded"


def shown(state: State) -> str:
    """The journal as named to users: from the worktree's top (.git/rehydrate/...) or the state folder's parent
    when it is inside, else in full (a linked worktree's git folder)."""
    full = path(state)
    found = local.repo(state.root)
    base = found.top if found is not None else os.path.dirname(state.root)
    rel = os.path.relpath(full, base)
    return full if rel.startswith("..") else rel


# ---------------------------------------------------------------------------------------------------- writing


def append(state: State, op: str, data: dict[str, Any]) -> tuple[Record, str | None, str | None]:
    """Append one record to the journal: (the record, what was repaired or None, why it was not written or None).
    Never raises for the journal's sake: the record is returned sealed even when it could not be written."""
    current = path(state)
    last: Record | None = None
    repaired: str | None = None
    try:
        folder = os.path.dirname(current)
        for where in (os.path.dirname(folder), folder):  # absent, or a real folder: never a link to one
            fsio.check_dir(where)
        fsio.make_dirs(folder, "journal.mkdir", WORDS)
        last, prefix, repaired = _prepare(current)
        rec = _seal(state, last, op, data)
        fsio.append(current, prefix + wal.encode(rec), "journal.append", create=True, words=WORDS)
        return rec, repaired, None
    except (RehydrateError, OSError, wal.BadRecord, ValueError) as e:
        why = e.message if isinstance(e, RehydrateError) else f"{type(e).__name__}: {e}"
        return _seal(state, last, op, data), repaired, why


def log(state: State, snap: Snapshot, op: str, data: dict[str, Any]) -> Record:
    """append, what it repaired added to snap.repaired, and why it wrote nothing (once) to snap.problems."""
    rec, repaired, why = append(state, op, data)
    if repaired:
        snap.repaired.append(repaired)
    if why:
        snap.problems.append(Problem("journal-unwritten", shown(state), None, f"this {op} was not logged: {why}"))
    return rec


def _seal(state: State, last: Record | None, op: str, data: dict[str, Any]) -> Record:
    return wal.seal(
        {
            "v": wal.VERSION,
            "seq": int(last["seq"]) + 1 if last is not None else 1,
            "ts": wal.now(),
            "actor": state.actor,
            "op": op,
            "data": data,
            "views": {},
            "prev": last["h"] if last is not None else None,
        }
    )


def _prepare(current: str) -> tuple[Record | None, bytes, str | None]:
    """(the record the next one follows, bytes to write before it, what was repaired): a torn last line cut, a
    damaged journal moved aside (a new chain starts), a full one made the previous generation (the chain goes on)."""
    try:
        t = walback.read_tail(current, 1)
    except FileNotFoundError:
        return None, b"", None
    except wal.BadRecord as e:  # damage before the last line: nothing in it is worth keeping in the chain
        broken = fsio.free_name(current + ".broken")
        _rename(current, broken)
        return None, b"", f"moved a damaged journal aside ({e}); kept in {os.path.basename(broken)}"
    last = t.records[-1][1] if t.records else None
    prefix, repaired = b"", None
    if t.torn:
        if walback.only_newline_lost(t):
            last, prefix = wal.decode(t.torn), b"\n"
        else:
            fsio.truncate(current, t.torn_offset, "journal.cut", WORDS)
            repaired = f"cut a torn last line off the journal ({len(t.torn)} bytes: {t.torn_reason})"
    st = fsio.lstat(current)
    if st is not None and st.st_size > MAX_BYTES and not prefix:
        _rename(current, _previous(current))
    return last, prefix, repaired


def _rename(src: str, dst: str) -> None:
    with fsio.failing(src, "write", WORDS):
        fsio.calls.replace(src, dst)
    fsio.fsync_dir(os.path.dirname(src), "journal.rename", WORDS)


# ---------------------------------------------------------------------------------------------------- reading


def _lines(state: State, max_bytes: int) -> Iterator[bytes]:
    """The journal's lines, newest first, across the current and the previous generation, at most max_bytes in
    all; not decoded. A journal that cannot be read (a link, a FIFO, a line too long) ends the lines quietly."""
    current = path(state)
    left = max_bytes
    for name in (current, _previous(current)):
        back = walback.Back(name, left)
        try:
            for _, raw in back.lines():
                yield raw
        except (RehydrateError, OSError, wal.BadRecord):
            return
        left -= back.read
        if back.cut or left <= 0:
            return


def records(state: State, max_bytes: int = READ_BYTES) -> Generator[Record, None, None]:
    """The journal's records, newest first; a line that does not decode ends them (nothing older is trusted)."""
    for raw in _lines(state, max_bytes):
        try:
            yield wal.decode(raw)
        except wal.BadRecord:
            return


def tail(state: State, n: int) -> list[Record]:
    """The journal's last n records, newest first (a line that does not decode ends them)."""
    return list(recent(state, n))


def recent(state: State, n: int) -> Recent:
    """The journal's last n records, as tail() gives them, each decoded only when a reader reaches it (Recent)."""
    lines: list[bytes] = []
    for raw in _lines(state, READ_BYTES):
        if len(lines) >= n:
            break
        lines.append(raw)
    return Recent(lines)


class Recent:
    """The journal's last records, newest first, each line decoded when a reader first reaches it: a reader that
    stops early (the last brief given, found in the newest records) decodes no more. Iterated, a line that does not
    decode ends the records, as in records(). `of(*ops)` gives the records of those ops alone and decodes only the
    lines that hold one of their names as a record's op (`"op":"ack"`): a line it passes over is not decoded, and so
    not checked, as the WAL's back-scan and since._with_reads pass over theirs; only a line it decodes can end its
    records, so that what it gives does not depend on how far another reader went."""

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines
        self._decoded: dict[int, Record] = {}
        self._bad = len(lines)  # the first line that did not decode: the records end there

    def _decode(self, i: int) -> Record:
        """Line i's record, decoded once (wal.BadRecord when it does not decode)."""
        rec = self._decoded.get(i)
        if rec is None:
            rec = self._decoded[i] = wal.decode(self._lines[i])
        return rec

    def _at(self, i: int) -> Record | None:
        if i >= self._bad:
            return None
        try:
            return self._decode(i)
        except wal.BadRecord:
            self._bad = i
            return None

    def __iter__(self) -> Iterator[Record]:
        for i in range(len(self._lines)):
            rec = self._at(i)
            if rec is None:
                return
            yield rec

    def of(self, *ops: str) -> Iterator[Record]:
        marks = [f'"op":"{op}"'.encode() for op in ops]
        for i, raw in enumerate(self._lines):
            if any(mark in raw for mark in marks):
                try:
                    rec = self._decode(i)
                except wal.BadRecord:
                    return  # a line it decodes itself ends its records, whatever another reader found
                if rec.get("op") in ops:
                    yield rec


def since(state: State, ts: str | None, n: int = 256) -> list[Record]:
    """The journal's records written at ts or later (all of them for None), newest first, at most n."""
    return list(read_since(state, ts, n))


def read_since(
    state: State, ts: str | None, n: int = 256, skip: Callable[[bytes], bool] | None = None
) -> Iterator[Record]:
    """since(), one record at a time, the next line read only when the caller asks for it. skip: told each line
    first; a line it takes is counted among the n and never decoded (what the caller knows it would not use, from
    what it was given so far). A line that does not decode ends the records, as in records()."""
    for read, raw in enumerate(_lines(state, READ_BYTES), start=1):
        if skip is None or not skip(raw):
            try:
                rec = wal.decode(raw)
            except wal.BadRecord:
                return
            if ts is not None and str(rec["ts"]) < ts:
                return
            yield rec
        if read >= n:
            return


# ---------------------------------------------------------------------------------------------------- the fold


def reads(state: State) -> tuple[dict[str, Any] | None, str | None]:
    """What the next checkpoint carries of the journal's resumes since the last fold: (`{"count": n, "last": [{"ts",
    "session_id", "chars", "confidence"}, ...]}` (the last FOLD_LAST, oldest first), or None when there was none;
    the hash to mark folded once the checkpoint is written (`folded`)). Lines are counted by their bytes; only
    the newest few are decoded."""
    if fsio.lstat(os.path.dirname(path(state))) is None:
        return None, None  # no read was ever logged here
    mark = _read_mark(path(state))
    needle = b'"h":"' + mark.encode() + b'"' if mark else None
    count, newest = 0, None
    last: list[dict[str, Any]] = []
    try:
        for raw in _lines(state, 2 * MAX_BYTES + READ_BYTES):
            if needle is not None and needle in raw and _is(raw, mark):
                break
            if newest is None:
                newest = _decoded(raw)
                if newest is None:
                    return None, None  # a damaged last line: folded after the next append cuts it
            if b'"op":"resume"' not in raw:
                continue
            count += 1
            if len(last) < FOLD_LAST:
                rec = _decoded(raw)
                if rec is not None and op_of(rec) is RESUME:
                    last.append(_brief_read(rec))
    except (RehydrateError, OSError):
        return None, None
    mark_h = str(newest["h"]) if newest is not None else None
    if not count:
        return None, mark_h
    last.reverse()
    return {"count": count, "last": last}, mark_h


def folded(state: State, mark: str | None) -> None:
    """Remember that the journal is folded up to the record hashed `mark` (a hint: lost, the next fold counts
    again)."""
    if mark:
        fsio.write_hint(_mark(path(state)), mark.encode() + b"\n")


def _read_mark(current: str) -> str | None:
    try:
        raw, _ = fsio.read_small(_mark(current), _MARK_SIZE, WORDS)
    except (RehydrateError, OSError):
        return None
    text = (raw or b"").decode("ascii", "replace").strip()
    return text if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None


def _decoded(raw: bytes) -> Record | None:
    try:
        return wal.decode(raw)
    except wal.BadRecord:
        return None


def _is(raw: bytes, h: str | None) -> bool:
    rec = _decoded(raw)
    return rec is not None and rec["h"] == h


def _brief_read(rec: Record) -> dict[str, Any]:
    """One resume as a checkpoint keeps it: its time, session, size and confidence, each checked and bounded."""

    data = rec["data"]
    sid, chars, conf = data.get("session_id"), data.get("chars"), data.get("confidence")
    return {
        "ts": clean(str(rec["ts"]), one_line=True)[:40],
        "session_id": clean(sid, one_line=True)[:200] if isinstance(sid, str) else None,
        "chars": chars if isinstance(chars, int) and not isinstance(chars, bool) else None,
        "confidence": clean(conf, one_line=True)[:80] if isinstance(conf, str) else None,
    }
