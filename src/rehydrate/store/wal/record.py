"""The write-ahead log: record encoding, the hash chain, tail reads and full scans.

One JSON object per line, canonical (sorted keys, no spaces, UTF-8), so that a record's hash is reproducible. ``h`` is
the sha256 of the record without ``h``; ``prev`` is the previous record's ``h``. A record is valid only if its line is
byte for byte the canonical encoding of what it parses to: any edit, bit flip or torn write shows.
"""

from __future__ import annotations

import os
import time

from rehydrate import safejson
from rehydrate.errors import RehydrateError, StateMissing
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS
from rehydrate.store.wal import digest

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Container, Iterator
    from typing import Any

    Record = dict[str, Any]

VERSION = 1
MAX_LINE = 8 << 20  # a record larger than this is damage: the inputs are capped well below it
REQUIRED = ("v", "seq", "ts", "actor", "op", "data", "views", "prev", "h")
_REQUIRED = frozenset(REQUIRED)


class BadRecord(ValueError):
    """A line that is not a valid record; the message says why."""


class Conflicted(BadRecord):
    """The log's tail holds a git merge conflict marker: the file must not be changed until the merge is finished."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"a git merge conflict marker at byte {offset}")
        self.offset = offset


# git's conflict markers: <<<<<<< ours, ||||||| base (diff3), =======, >>>>>>> theirs. No record starts with one.
MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")


canonical = safejson.dumps_canonical
sha256, fast_hashing, seal_line = digest.sha256, digest.fast_hashing, digest.seal_line  # see digest.py


def is_conflict_marker(line: bytes) -> bool:
    """A line (without its newline) that git writes around a conflict."""
    return line[:7] in MARKERS and line[7:8] in (b"", b" ", b"\r")


def now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def seal(record: Record) -> Record:
    """The record with its hash set."""
    body = {k: v for k, v in record.items() if k != "h"}
    body["h"] = sha256(canonical(body))
    return body


def encode(record: Record) -> bytes:
    return canonical(record) + b"\n"


def decode(line: bytes) -> Record:
    """Parse and check one line (without its newline). Raises BadRecord.

    One parse and one canonical encode (in a long pass, orjson's when it can tell: digest.long_pass); the hash is over
    the line's own bytes less its `h` member."""
    fast = digest.CANONICAL[0]
    obj = fast(line) if fast is not None else None
    text = None  # obj: the line is canonical, as json's path would find
    if obj is None:
        text, obj = _parse(line)
    if not _REQUIRED.issubset(obj):
        raise BadRecord(f"missing field(s) {', '.join(k for k in REQUIRED if k not in obj)}")
    seq, h, bound = obj["seq"], obj["h"], obj["views"]
    if isinstance(seq, bool) or not (isinstance(seq, int) and isinstance(h, str) and isinstance(bound, dict)):
        raise BadRecord("a field has the wrong type")
    try:
        same = text is None or safejson.canonical_text(obj) == text
    except ValueError:
        same = False
    if not same:  # the bytes compared the long way, for the message (a lone surrogate cannot be encoded, say)
        try:
            same = canonical(obj) == line
        except ValueError as e:
            raise BadRecord(f"not JSON ({e})") from None
        if not same:
            raise BadRecord("not in canonical form (edited by hand?)")
    body = digest.without_hash(line, h)  # the canonical line less its `h` member: what the hash covers
    if sha256(body if body is not None else canonical({k: v for k, v in obj.items() if k != "h"})) != h:
        raise BadRecord("hash mismatch (the record was changed after it was written)")
    shape = _shape_error(obj)
    if shape:
        raise BadRecord(shape)
    return obj


def _parse(line: bytes) -> tuple[str, Record]:
    """(the line's text, json.loads(text)); BadRecord if it is not a JSON object."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRecord(f"invalid UTF-8 at byte {e.start}") from None
    if is_conflict_marker(line):
        raise BadRecord("a git merge conflict marker (an unresolved merge)")
    try:
        obj = safejson.loads(text)
    except safejson.JSONDecodeError as e:  # json is loaded when there is one
        raise BadRecord(f"not JSON ({e.msg} at column {e.colno})") from None
    except ValueError as e:  # nested too deeply for the parser (safejson.TooDeep), a number too long to convert
        raise BadRecord(f"not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise BadRecord("not a JSON object")
    return text, obj


# What each known op's data must hold, so that a view can be redone from it. Unknown ops are kept as they are.
_SHAPES: dict[str, tuple[tuple[str, type], ...]] = {
    "init": (("goal", str), ("header", str)),
    "invariant": (("line", str),),
    "reject": (("line", str),),
    "checkpoint": (("goal", str), ("done", str), ("next", str)),
    "handoff": (("text", str),),
    "rotate": (("archive", str), ("goal", dict), ("lines", list)),
}


def _shape_error(rec: Record) -> str | None:
    data = rec["data"]
    if not all(isinstance(v, str) for v in rec["views"].values()):
        return "its views map holds something other than hashes"
    if not isinstance(rec["op"], str) or not isinstance(data, dict):
        return "its op or data has the wrong type"
    for key, kind in _SHAPES.get(rec["op"], ()):
        if not isinstance(data.get(key), kind):
            return f"a {rec['op']} record without a valid data.{key} (written by another tool?)"  # op: a known name
    return None


class Tail:
    """The end of a log, as read without reading the rest."""

    def __init__(
        self,
        records: list[tuple[int, Record]],
        torn: bytes,
        torn_offset: int,
        torn_reason: str,
    ) -> None:
        self.records = records  # (byte offset, record), oldest first; the last is the recovery point
        self.torn = torn  # bytes after the last valid record (a torn or damaged last line); empty if none
        self.torn_offset = torn_offset
        self.torn_reason = torn_reason


def read_tail(path: str, want: int = 2, end: int | None = None) -> Tail:
    """The last `want` valid records; a bad last line is returned as `torn`.

    A bad line before the last one is damage, not a torn write: BadRecord is raised with its byte offset.
    A git conflict marker among the lines read raises Conflicted: a conflicted log is neither torn nor damaged.
    """
    start, buf, at_start = fsio.read_tail(path, want + 1, MAX_LINE + 65536, end, WORDS)
    size = start + len(buf)
    lines = buf.split(b"\n")
    # lines[-1] is what follows the last newline: empty, or a torn line
    tail_parts: list[tuple[int, bytes]] = []
    pos = start
    for i, raw in enumerate(lines):
        tail_parts.append((pos, raw))
        pos += len(raw) + (1 if i < len(lines) - 1 else 0)
    if not at_start and tail_parts:
        tail_parts = tail_parts[1:]  # the first piece may be the end of a longer line
    for off, raw in tail_parts:  # an unfinished merge: nothing may be cut or appended until a person finishes it
        if is_conflict_marker(raw):
            raise Conflicted(off)
    last_raw_off, last_raw = tail_parts[-1] if tail_parts else (size, b"")
    complete = tail_parts[:-1]
    torn = b""
    torn_off = size
    reason = ""
    if last_raw:  # no newline at the end: a torn write
        torn, torn_off, reason = last_raw, last_raw_off, "the last line has no newline (a torn write)"
    if torn.strip(b"\0") == b"" and torn:
        reason = "the file ends in zero bytes (a torn write)"
    if not at_start and not complete:
        raise BadRecord(f"the last line is longer than {MAX_LINE:,} bytes")
    records: list[tuple[int, Record]] = []
    for idx in range(len(complete) - 1, -1, -1):
        off, raw = complete[idx]
        try:
            rec = decode(raw)
        except BadRecord as e:
            if not records and not torn:  # the last complete line: damage at the tail, cut like a torn write
                torn, torn_off, reason = raw + b"\n", off, f"the last line is damaged: {e}"
                continue
            raise BadRecord(f"damaged record at byte {off}: {e}") from None
        records.append((off, rec))
        if len(records) >= want:
            break
    records.reverse()
    return Tail(records, torn, torn_off, reason)


def line_number(path: str, offset: int) -> int:
    """The 1-based line number of the byte at offset (reads the file up to there: error paths only)."""
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return 1
    n = 1
    done = 0
    try:
        while done < offset:
            chunk = os.pread(fd, min(1 << 20, offset - done), done)
            if not chunk:
                break
            n += chunk.count(b"\n")
            done += len(chunk)
    finally:
        os.close(fd)
    return n


class Line:
    def __init__(self, number: int, offset: int, raw: bytes | None, newline: bool) -> None:
        self.number = number
        self.offset = offset
        self.raw = raw  # None when the line is longer than MAX_LINE (its bytes are skipped, not held)
        self.newline = newline


def iter_lines(path: str, end: int | None = None) -> Iterator[Line]:
    """Every line of a file (those that start before byte `end`, if given) with bounded memory; an oversized line
    is yielded with raw=None."""
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return
    with open(fd, "rb", buffering=1 << 20) as f:
        number = 0
        offset = 0
        while end is None or offset < end:
            raw = f.readline(MAX_LINE + 1)
            if not raw:
                return
            number += 1
            start = offset
            offset += len(raw)
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                while True:  # skip the rest of the oversized line
                    more = f.readline(1 << 20)
                    offset += len(more)
                    if not more or more.endswith(b"\n"):
                        break
                yield Line(number, start, None, True)
                continue
            if raw.endswith(b"\n"):
                yield Line(number, start, raw[:-1], True)
            else:
                yield Line(number, start, raw, False)


def scan(path: str, end: int | None = None) -> Iterator[tuple[Line, Record | None, str | None]]:
    """Every line of a log (up to byte `end`), decoded: (line, record, None), or (line, None, why it is not one).
    A line without its newline is decoded too: the caller tells a torn write from a lost newline."""
    for line in iter_lines(path, end):
        if line.raw is None:
            yield line, None, f"a line longer than {MAX_LINE:,} bytes"
            continue
        try:
            yield line, decode(line.raw), None
        except BadRecord as e:
            yield line, None, str(e)


def parsed(path: str, end: int | None = None, skip: Container[int] = ()) -> Iterator[tuple[int, Record]]:
    """(offset, record) of each whole line of a log (before byte `end`, the offsets in skip left out) that parses to
    a record's shape (h, seq, op, data, prev), parsed and not hashed: for a second read of bytes a pass under the
    same lock has just checked (walscan._Known, graph.Graph)."""
    try:
        from orjson import loads
    except ImportError:  # pragma: no cover - a platform without orjson's wheels
        from json import loads  # type: ignore[assignment]
    for line in iter_lines(path, end):
        if line.raw is None or not line.newline or line.offset in skip:
            continue
        try:
            rec = loads(line.raw)
        except ValueError:
            continue
        if (
            isinstance(rec, dict)
            and isinstance(rec.get("h"), str)
            and type(rec.get("seq")) is int
            and isinstance(rec.get("op"), str)
            and isinstance(rec.get("data"), dict)
            and (rec.get("prev") is None or isinstance(rec.get("prev"), str))
        ):
            yield line.offset, rec


def records(path: str) -> Iterator[Record]:
    """Every valid, complete record of a log, in file order (parents before children), each once: a line repeating
    an earlier record's h (a cherry-pick merged again) is skipped (full scan: verify and error paths only)."""
    digest.long_pass()
    known: set[str] = set()
    for line, rec, _ in scan(path):
        if rec is not None and line.newline and rec["h"] not in known:  # a repeated record (union) is skipped
            known.add(rec["h"])
            yield rec


def first_record(path: str, rel: str) -> Record:
    """The log's first record (init, or rotate after an archive); RehydrateError if its first line is damaged."""
    for _, rec, _ in scan(path):
        if rec is not None:
            return rec
        break
    raise RehydrateError(f"the first line of {rel} is damaged")


def unrepairable(wal_rel: str) -> str:
    """The hint for a log damaged before its tail."""
    return (
        f"the WAL cannot be repaired safely: restore it from git (`git checkout -- {wal_rel}`) "
        "or move it away; `rehydrate verify` lists every problem"
    )


def conflicted(path: str, wal_rel: str) -> RehydrateError:
    """The log holds git's conflict markers (an unfinished merge): say where, and how to finish the merge."""
    lines = [line.number for line in iter_lines(path) if line.raw and is_conflict_marker(line.raw)]
    where = f"line {lines[0]}" if lines else "its tail"
    return RehydrateError(
        f"{wal_rel} {where}: an unresolved git merge conflict ({len(lines)} marker line(s)) [merge-conflict]; "
        "rehydrate changes nothing in it until the merge is finished",
        "this actor's log was written on both branches and the merge did not use the union attributes of "
        "state/.gitattributes: `rehydrate resolve` keeps both sides' records and says what finishes the merge; "
        f"or keep one side (`git checkout --ours -- {wal_rel}` or `--theirs`, then `git add {wal_rel}`); or "
        "`git merge --abort`. `rehydrate team init` sets the union attributes up for this clone",
    )


def first_bad_line(path: str) -> tuple[int, int, str, bool] | None:
    """(line number, byte offset, reason, whether it is the last line) of the first bad line of the log."""
    found: tuple[int, int, str] | None = None
    for line, rec, why in scan(path):
        if found is not None:
            return (*found, False)
        if rec is None:
            found = (line.number, line.offset, str(why))
    return (*found, True) if found is not None else None


def tail(path: str, wal_rel: str) -> Tail:
    """The log's last two records. An oversized bad last line is returned as torn; damage before it, or a
    conflicted log, raises RehydrateError (StateMissing for no log)."""
    try:
        return read_tail(path, 2)
    except FileNotFoundError:
        raise StateMissing(f"no WAL at {wal_rel}", "run `rehydrate init --goal TEXT`") from None
    except Conflicted:
        raise conflicted(path, wal_rel) from None
    except BadRecord as e:
        bad = first_bad_line(path)
        if bad is None or not bad[3]:
            where = f"line {bad[0]}: {bad[2]}" if bad else str(e)
            raise RehydrateError(
                f"{wal_rel} is damaged before its last line ({where})", unrepairable(wal_rel)
            ) from None
        _, offset, reason, _ = bad  # the bad line is the last one (an oversized torn write): a torn tail
        fd = fsio.open_read(path, WORDS)
        assert fd is not None
        try:
            torn = os.pread(fd, os.fstat(fd).st_size - offset, offset)
        finally:
            os.close(fd)
        return Tail(read_tail(path, 2, end=offset).records, torn, offset, reason)


def read_at(path: str, offset: int) -> Record | None:
    """The record whose line starts at byte offset (one bounded read), or None if there is none there."""
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return None
    try:
        data = b""
        while b"\n" not in data and len(data) <= MAX_LINE:
            chunk = os.pread(fd, 1 << 16, offset + len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if b"\n" not in data:
        return None
    try:
        return decode(data.split(b"\n", 1)[0])
    except BadRecord:
        return None


def only_newline_lost(t: Tail, path: str | None = None) -> bool:
    """The torn piece is a whole, valid record that follows the one before it, or (given the log's path) any
    earlier record of the log (a union merge puts the other side's records last): only its newline is missing
    (an editor or a merge tool stripped it). It is kept, not cut."""
    if t.torn.endswith(b"\n"):
        return False
    try:
        rec = decode(t.torn)
    except BadRecord:
        return False
    before = t.records[-1][1] if t.records else None
    if rec["prev"] == (before["h"] if before else None):
        return True
    from rehydrate.store.wal.scan import parents_of

    wanted = set(parents_of(rec))
    if path is None or not wanted:
        return False
    for _, earlier, _ in scan(path, t.torn_offset):  # the graph rule: every parent is an earlier record
        if earlier is not None:
            wanted.discard(earlier["h"])
            if not wanted:
                return True
    return False


def cut_torn(path: str, wal_rel: str, t: Tail) -> str:
    """Cut a torn last line off the log, keeping the cut bytes in a .broken file beside it; says what it did."""
    n = line_number(path, t.torn_offset)
    broken = fsio.cut_tail(path, t.torn_offset, t.torn, "repair", WORDS)
    kept = os.path.join(os.path.dirname(wal_rel), os.path.basename(broken))
    return f"cut a torn last line off {wal_rel} (line {n}, {len(t.torn)} bytes: {t.torn_reason}); kept in {kept}"


# The scan of a whole log as a graph (walscan.py), named here as before.
from rehydrate.store.wal.scan import (  # noqa: E402  (walscan reads this module's names when it is loaded)
    ARCHIVE_NAME,
    Heads,
    Node,
    archive_error,
    chain_error,
    check_chain,
    parents_of,
    scan_log,
)

__all__ = ["ARCHIVE_NAME", "Heads", "Node", "archive_error", "chain_error", "check_chain", "parents_of", "scan_log"]
