"""<local_dir>/seen/<actor>.seen: the rollback cache, per worktree (store/local/place.py: in the worktree's own git
folder, never committed). What this worktree last saw of its actor's log, so that a log that no longer holds records
it saw is named: a branch switch (`switched`, information) or, on the same branch, a rollback (`git reset`, `git
stash`, a restore of state/, a deleted line: `rolled-back`). The records' hashes still chain, so nothing else would
notice. See `reconcile._follow` for how it is used. The cache of earlier versions, state/wal/.<actor>.seen, is read once
when this one is absent, and left alone.
"""

from __future__ import annotations

import os
import stat

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, records
from rehydrate.store.latches import binding
from rehydrate.store.layout import INVARIANTS
from rehydrate.store.wal import record as wal
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

_SEEN_MAX = 64 << 10  # the cache is small; a bigger file is not ours
_SCAN_MAX = 40 << 10  # the longest scan summary a cache may hold (latches/index.py: 1,024 rejected approaches)
RING = 64  # how many of the last records the cache remembers (seq and hash prefix)
_NEXT_CAP = 300  # the most characters of a checkpoint's next action the cache keeps
_FP_MAX = 120  # the longest fingerprint a cache may hold
_LINES_MAX = 8 << 10  # the merged lines of work the cache keeps (a merge record's data.lines)
# the cache's format: "<16 hex digits of the sha256 of the JSON> <JSON>", v 3 (2, the old one, is read too); any other
# is absent


class Seen:
    """wal/.<actor>.seen: what this clone last saw of its actor's log. A cache, not state: it is git-ignored, never
    synced, and untrusted (missing, garbage, huge, a link or a FIFO all read as "nothing known").

    - fp: the log's identity (fingerprint) after this clone last wrote or checked it: while it holds, nothing
      outside rehydrate touched the log and its tail is enough; otherwise the whole chain is checked once;
    - ring: (seq, first 16 hex digits of h) of the last records seen, each once, oldest first; the last is this
      worktree's head (the record its next write follows; after a union merge not always the log's last line)
      (kept as text, "seq:h seq:h ...", and parsed only when the whole chain is checked);
    - cp: the last checkpoint seen: its seq, its next action and its h's first 16 hex digits;
    - branch: the branch (store/local/place.head) of the last command that looked at the log or wrote to it: records
      missing after a branch change are `switched`, on the same branch `rolled-back`;
    - heads: when the log has several heads (a merge not yet joined), each as "seq:h:offset:prev's offset" (h: 16
      hex digits; -1: none), mine first, else "": while fp holds, each is read at its offset, not the last line;
    - merged: the lines of work of the newest merge record on this worktree's line not yet followed by a
      checkpoint (its data.lines), shown by status and the brief;
    - lost: a rollback found and not yet acknowledged (see `_follow` in store/reconcile.py);
    - views: for each view, (its file's fingerprint, the binding the WAL's record gave it) when this clone wrote it
      or last found it as bound: while both still hold, the view is as the WAL's last record binds it and is
      neither read nor hashed (a `git pull`, `git checkout`, an editor or a `touch` changes the fingerprint);
    - at: the byte offset of the log's last record while fp holds: the only line a command then reads of the log;
    - dirs: the fingerprints of the state folder and wal/ when the cache was written: while they hold, no file
      was created or removed there since, so no temporary file left by a crash can be there;
    - scan: what the brief's scan of 10_invariants.md found, for the binding it names (store/latches/index.py), so
      that a resume on an unchanged 10 reads only what it shows; extended by an append (`wrote`), checked when used.

    The file holds the sha256 of its JSON before it, so that a write torn by a crash reads as absent.
    """

    def __init__(self) -> None:
        self.fp = ""
        self._ring: list[tuple[int, str]] | None = []
        self._text = ""  # the ring as loaded, parsed on first use
        self.cp: tuple[int, str] | None = None
        self.cp_h = ""  # the last checkpoint's h (16 hex digits)
        self.branch: str | None = None
        self.heads = ""
        self.merged: list[dict[str, Any]] | None = None
        self.lost: dict[str, Any] | None = None
        self.views: dict[str, tuple[str, str]] = {}
        self.dirs = ""
        self.scan = ""  # the scan's summary of 10_invariants.md (untrusted: checked against the file when used)
        self.at = -1  # the byte offset of the log's last record (the ring's end), when fp holds; -1: unknown
        self.dirty = False  # changed since loaded: to be written back
        self._end: tuple[str, tuple[int, str]] | None = None  # the ring's last token, parsed (end, on every command)
        self._cp_clean: tuple[str, str] | None = None  # the last checkpoint's next action, and as dump() writes it

    @classmethod
    def load(cls, path: str) -> Seen | None:
        try:
            data = fsio.read_bytes(path, _SEEN_MAX, WORDS)
            if not data or data[:17] != wal.sha256(data[17:]).encode()[:16] + b" ":
                return None
            obj: Any = safejson.loads(data[17:])
        except (RehydrateError, ValueError):
            return None
        seen = cls()
        try:
            _need(isinstance(obj, dict) and obj.get("v") in (2, 3))
            seen.fp, seen.dirs, seen._text, seen.at = obj["fp"], obj["dirs"], obj["ring"], obj["at"]
            _need(type(seen.at) is int)
            _need(isinstance(seen.fp, str) and isinstance(seen.dirs, str) and isinstance(seen._text, str))
            _need(len(seen.fp) <= _FP_MAX and len(seen.dirs) <= 2 * _FP_MAX + 1)
            _need(len(seen._text) > 0 and seen._text.count(" ") < RING)
            seen._ring = None
            _token(seen._text.rpartition(" ")[2])  # the end is used on every command; the rest when needed
            cp = obj.get("cp")
            seen.cp = (int(cp[0]), cp[1]) if cp is not None else None
            _need(seen.cp is None or (isinstance(seen.cp[1], str) and len(seen.cp[1]) <= _NEXT_CAP))
            seen.cp_h = cp[2] if cp is not None and len(cp) > 2 else ""
            _need(isinstance(seen.cp_h, str) and len(seen.cp_h) <= 16)
            seen.branch, seen.heads, seen.merged = obj.get("branch"), obj.get("heads", ""), obj.get("merged")
            _need(seen.branch is None or (isinstance(seen.branch, str) and len(seen.branch) <= 255))
            _need(isinstance(seen.heads, str) and len(seen.heads) <= 16 * 80)
            seen.head_tokens()
            merged = seen.merged
            _need(merged is None or (isinstance(merged, list) and all(isinstance(x, dict) for x in merged)))
            lost = obj.get("lost")
            if lost is not None:
                _need(isinstance(lost, dict) and _lost_ok(lost))
                seen.lost = lost
            seen.scan = obj.get("scan", "")
            _need(isinstance(seen.scan, str) and len(seen.scan) <= _SCAN_MAX)
            views = obj["views"]
            _need(isinstance(views, dict) and len(views) <= 8)
            for name, pair in views.items():
                fp, bound = pair
                _need(isinstance(fp, str) and isinstance(bound, str) and len(fp) <= _FP_MAX and len(bound) <= 400)
                seen.views[name] = (fp, bound)
        except (KeyError, TypeError, ValueError, IndexError, OverflowError):
            return None
        return seen

    def check(self) -> bool:
        """Whether the whole ring is one this version wrote (parsed now; on the cheap path only its end is used)."""
        try:
            _ = self.ring
        except (ValueError, IndexError, OverflowError):
            return False
        return True

    @property
    def ring(self) -> list[tuple[int, str]]:
        if self._ring is None:
            ring = [_token(tok) for tok in self._text.split(" ")]
            _need(len({h for _, h in ring}) == len(ring))  # each record once
            self._ring = ring
        return self._ring

    @ring.setter
    def ring(self, ring: list[tuple[int, str]]) -> None:
        self._ring = ring

    def dump(self) -> bytes:
        if self._ring is None:
            extra = self._text.count(" ") - (RING - 1)  # tokens beyond the last RING: one after each append
            ring = self._text if extra <= 0 else self._text.split(" ", extra)[-1]
        else:
            ring = " ".join(f"{seq}:{h}" for seq, h in self._ring[-RING:])
        if ring:  # as load() reads it back: kept as text, parsed only when needed
            self._text, self._ring = ring, None
        # wal.canonical of {"v": 2, "fp", "at", "ring", "cp": [seq, next] or None, "lost", "views": {name: [fp,
        # binding]}, "dirs", "scan" if any}, joined here from each value's canonical JSON (every string by json's C
        # encoder): the cache is written at every command (tests/store/local/test_memo.py compares the two)
        enc = safejson.canonical_text
        cp = f"[{int(self.cp[0])},{enc(self._cleaned(self.cp[1]))},{enc(self.cp_h)}]" if self.cp else "null"
        lost = enc(self.lost) if self.lost is not None else "null"
        views = ",".join(f"{enc(name)}:[{enc(fp)},{enc(bound)}]" for name, (fp, bound) in sorted(self.views.items()))
        scan = f'"scan":{enc(self.scan)},' if self.scan else ""
        merged = enc(self.merged) if self.merged is not None else "null"
        if len(merged) > _LINES_MAX:
            merged = "null"
        branch = enc(self.branch) if self.branch is not None else "null"
        body = (
            f'{{"at":{int(self.at)},"branch":{branch},"cp":{cp},"dirs":{enc(self.dirs)},"fp":{enc(self.fp)},'
            f'"heads":{enc(self.heads)},"lost":{lost},"merged":{merged},'
            f'"ring":{enc(ring)},{scan}"v":3,"views":{{{views}}}}}'
        ).encode()
        return wal.sha256(body).encode()[:16] + b" " + body

    def _cleaned(self, nxt: str) -> str:
        """The next action as the cache keeps it (cleaned again: it may come from any record of the log)."""
        if self._cp_clean is None or self._cp_clean[0] != nxt:
            self._cp_clean = (nxt, clean(nxt, one_line=True)[:_NEXT_CAP])
        return self._cp_clean[1]

    def save(self, path: str, dirs: str = "") -> os.stat_result | None:
        """Write the cache to path (a hint: never synced), with the folders' fingerprints as they are now. Returns
        the file's fstat after the write (None if it was not written)."""
        self.dirs = dirs
        data = self.dump()
        st = fsio.write_hint(path, data)
        if st is None and not os.path.isdir(os.path.dirname(path)):  # the first save in this worktree
            missing: list[str] = []
            folder = os.path.dirname(path)
            while folder and not os.path.isdir(folder) and len(missing) < 8:
                missing.append(folder)
                folder = os.path.dirname(folder)
            try:
                for folder in reversed(missing):  # (through fsio's calls, as every change to the disk)
                    fsio.calls.mkdir(folder)
            except OSError:
                return None
            st = fsio.write_hint(path, data)
        self.dirty = False
        return st

    def copy(self) -> Seen:
        """A copy that changes apart from this one (store/local/memo.py keeps the cache as saved)."""
        new = Seen.__new__(Seen)
        new.__dict__.update(self.__dict__)
        new.views = dict(self.views)
        new._ring = list(self._ring) if self._ring is not None else None
        new.lost = dict(self.lost) if self.lost is not None else None
        new.merged = list(self.merged) if self.merged is not None else None
        return new

    @property
    def end(self) -> tuple[int, str] | None:
        if self._ring is None:
            tok = self._text.rpartition(" ")[2]
            if self._end is None or self._end[0] != tok:
                self._end = (tok, _token(tok))
            return self._end[1]
        return self._ring[-1] if self._ring else None

    def saw(self, rec: Record) -> None:
        """A record of the log, in order (parents first); it becomes the ring's end. Seen again, it moves there."""
        self.ring_add(rec["seq"], str(rec["h"])[:16])
        self.track(rec)

    def ring_add(self, seq: int, h16: str) -> None:
        """A record (seq, h16) at the ring's end; seen again, it moves there."""
        self.dirty = True
        if self._ring is None and f":{h16}" not in self._text:  # the usual case: a new record, the ring not parsed
            self._text = f"{self._text} {seq}:{h16}" if self._text else f"{seq}:{h16}"
            if self._text.count(" ") >= 4 * RING:
                self._text = " ".join(self._text.split(" ")[-RING:])
        else:
            ring = self.ring
            ring[:] = [item for item in ring if item[1] != h16]
            ring.append((seq, h16))
            if len(ring) > 4 * RING:
                del ring[:-RING]

    def track(self, rec: Record) -> None:
        """The last checkpoint's next action and the open lines of work, as a record changes them."""
        seq, h16 = rec["seq"], str(rec["h"])[:16]
        data = rec["data"]
        op = records.op_of(rec)
        if op is records.MERGE:
            from rehydrate.store.wal.graph import valid_lines  # off the hook path but for a merge record

            self.merged = valid_lines(data)
            return
        if op is records.ROTATE and isinstance(data.get("checkpoint"), dict):
            data, seq = data["checkpoint"].get("data"), data["checkpoint"].get("seq")
            h16 = str(rec["data"]["checkpoint"].get("h", ""))[:16]
        elif op is not records.CHECKPOINT:
            return
        self.merged = None  # a checkpoint chooses the next action
        if isinstance(data, dict) and isinstance(seq, int) and isinstance(data.get("next"), str):
            self.cp = (seq, data["next"][: 4 * _NEXT_CAP])  # cleaned once, when written (a full pass sees many)
            self.cp_h = h16

    @property
    def multi(self) -> bool:
        """The log has several heads (cached as `heads`)."""
        return bool(self.heads)

    def head_tokens(self) -> list[tuple[int, str, int, int]]:
        """(seq, h16, offset, offset of its prev or -1) of each cached head, mine first ([] when one head);
        ValueError if garbled."""
        out = []
        for tok in self.heads.split(" ") if self.heads else []:
            seq, h, at, before = tok.split(":")
            nums = (seq, at, before.removeprefix("-"))
            _need(all(n.isdigit() and len(n) < 20 for n in nums) and 0 < len(h) <= 16)
            out.append((int(seq), h, int(at), int(before)))
        return out

    def fresh(self, name: str, path: str, bound: str | None) -> bool:
        """Whether a view is still as this clone wrote or last found it, bound as the WAL's last record binds it:
        its file's fingerprint and the binding both match (one lstat, no read)."""
        known = self.views.get(name)
        if bound is None or known is None or known[1] != bound:
            return False
        st = fsio.lstat(path)
        return st is not None and stat.S_ISREG(st.st_mode) and fingerprint(st) == known[0]

    def verified(self, name: str, st: os.stat_result | None, bound: str | None) -> None:
        """A view found (or written) as `bound`, its file as `st` was before it was read (or after it was written)."""
        if st is None or bound is None or not stat.S_ISREG(st.st_mode):
            self.forget(name)
            return
        pair = (fingerprint(st), bound)
        if self.views.get(name) != pair:
            self.views[name] = pair
            self.dirty = True

    def wrote(self, rec: Record, stats: dict[str, os.stat_result | None]) -> None:
        """Views just written for rec, each file's fstat after the write (None: not known as bound)."""
        for name, st in stats.items():
            self.verified(name, st, rec["views"].get(name))
        if self.scan:
            self.wrote_line(rec, stats)

    def wrote_line(self, rec: Record, stats: dict[str, os.stat_result | None]) -> None:
        """The brief's scan summary of 10 extended by the line rec appended (else dropped: rescanned when needed)."""
        old, new = self.scan.partition(" ")[0], rec["views"].get(INVARIANTS)
        if new == old or INVARIANTS not in stats:  # 10 not written (or said later: write/command.write)
            return
        from rehydrate.store.latches.summary import extend_summary  # not on a checkpoint's path: it does not write 10

        line = records.data_of(rec).get("line")
        scan = None
        if stats[INVARIANTS] is not None and isinstance(line, str) and isinstance(new, str):
            scan = extend_summary(self.scan, old, new, line.encode())
        self.scan = scan if scan is not None and len(scan) <= _SCAN_MAX else ""
        self.dirty = True

    def remember_scan(self, scan: str | None) -> None:
        """The brief's scan summary of 10 (store/latches/index.py), if it fits."""
        scan = scan if scan is not None and len(scan) <= _SCAN_MAX else ""
        if scan != self.scan:
            self.scan = scan
            self.dirty = True

    def forget(self, name: str) -> None:
        if self.views.pop(name, None) is not None:
            self.dirty = True


def fingerprint(st: os.stat_result) -> str:
    """A file's identity and last change (device, inode, size, mtime, ctime): while it holds, nothing changed the
    file. The ctime cannot be set back (os.utime sets it to now), so a change with its mtime restored still shows."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def file_fingerprint(path: str) -> str:
    """fingerprint of the file at path (OSError if it cannot be stat'ed)."""
    return fingerprint(os.stat(path))


CHECKED = "checked:"  # the cache's mark for 10 found whole and recorded by every actor's logs, past my binding


def checked_mark(state: State, bound: str, found: str) -> str:
    """The cache's binding for 10 checked whole: my binding, every log's fingerprint, the file's running binding."""
    return f"{CHECKED}{logs_print(state)}:{bound}|{found}"


def logs_print(state: State) -> str:
    """Every log's fingerprint in wal/, hashed short: a log changed, added or removed changes it (one stat each)."""
    try:
        names = sorted(n for n in os.listdir(state.wal_dir) if n.endswith(".jsonl"))
    except OSError:
        return "-"
    parts = []
    for name in names:
        st = fsio.lstat(os.path.join(state.wal_dir, name))
        parts.append(f"{name}={fingerprint(st) if st is not None else '-'}")
    return wal.sha256("\n".join(parts).encode())[:16]


def checked(state: State, snap: Snapshot, st: os.stat_result | None, bound: str) -> bool:
    """10_invariants.md is as this worktree last checked it line by line against every actor's log and found every
    line recorded (another actor appended since my last record): the running binding of the file, not read again.
    A read does not write, so without this every session start of an actor would read every log."""
    known = snap.cache.views.get(INVARIANTS)
    if known is None or st is None or not known[1].startswith(CHECKED) or known[0] != fingerprint(st):
        return False
    mark = checked_mark(state, bound, "")  # and every log as it was then
    if not known[1].startswith(mark):
        return False
    found = binding.Lines.parse(known[1][len(mark) :])
    if found is None:
        return False
    snap.set_invariants(found)
    return True


def _token(tok: str) -> tuple[int, str]:
    """One "seq:h" of the ring."""
    seq, sep, h = tok.partition(":")
    _need(sep == ":" and seq.isascii() and seq.isdigit() and len(seq) < 20 and 0 < len(h) <= 16)
    return int(seq), h


def _need(condition: bool) -> None:
    if not condition:
        raise ValueError("not a cache this version wrote")


def _lost_ok(lost: dict[str, Any]) -> bool:
    ints = all(isinstance(lost.get(k), int) and not isinstance(lost.get(k), bool) for k in ("count", "to", "end"))
    nxt = lost.get("next")
    kind, was, now = lost.get("kind", "rolled-back"), lost.get("from"), lost.get("branch")
    return (
        ints
        and kind in ("rolled-back", "switched")
        and all(x is None or (isinstance(x, str) and len(x) <= 255) for x in (was, now))
        and isinstance(lost.get("exact"), bool)
        and isinstance(lost.get("h"), str)
        and len(lost["h"]) <= 64
        and (nxt is None or (isinstance(nxt, str) and len(nxt) <= _NEXT_CAP))
    )
