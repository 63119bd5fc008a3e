"""The write-ahead log: record encoding, the hash chain, tail reads and full scans.

One JSON object per line, canonical (sorted keys, no spaces, UTF-8), so that a record's hash is reproducible. ``h`` is
the sha256 of the record without ``h``; ``prev`` is the previous record's ``h``. A record is valid only if its line is
byte for byte the canonical encoding of what it parses to: any edit, bit flip or torn write shows.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

from rehydrate import safejson
from rehydrate.store import fsio

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    Record = dict[str, Any]

VERSION = 1
MAX_LINE = 8 << 20  # a record larger than this is damage: the inputs are capped well below it
REQUIRED = ("v", "seq", "ts", "actor", "op", "data", "views", "prev", "h")


class BadRecord(ValueError):
    """A line that is not a valid record; the message says why."""


class Conflicted(BadRecord):
    """The log's tail holds a git merge conflict marker: the file must not be changed until the merge is finished."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"a git merge conflict marker at byte {offset}")
        self.offset = offset


# git's conflict markers: <<<<<<< ours, ||||||| base (diff3), =======, >>>>>>> theirs. No record starts with one.
MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")


def is_conflict_marker(line: bytes) -> bool:
    """A line (without its newline) that git writes around a conflict."""
    return line[:7] in MARKERS and line[7:8] in (b"", b" ", b"\r")


def canonical(obj: object) -> bytes:
    """Sorted keys, no spaces, UTF-8. safejson.TooDeep (a ValueError) for an object nested too deeply to encode."""
    return safejson.dumps_canonical(obj)


try:  # CPython's built-in sha256 (HACL*): hashlib would load OpenSSL, 2-3 ms at every hook's start
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found, unused-ignore]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found, no-redef, unused-ignore]  # 3.10, 3.11
    except ImportError:
        from hashlib import sha256 as _sha256  # type: ignore[assignment, unused-ignore]


def sha256(data: bytes) -> str:
    return str(_sha256(data).hexdigest())


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
    """Parse and check one line (without its newline). Raises BadRecord."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRecord(f"invalid UTF-8 at byte {e.start}") from None
    if is_conflict_marker(line):
        raise BadRecord("a git merge conflict marker (an unresolved merge)")
    try:
        obj = safejson.loads(text)
    except json.JSONDecodeError as e:
        raise BadRecord(f"not JSON ({e.msg} at column {e.colno})") from None
    except ValueError as e:  # nested too deeply for the parser (safejson.TooDeep), a number too long to convert
        raise BadRecord(f"not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise BadRecord("not a JSON object")
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise BadRecord(f"missing field(s) {', '.join(missing)}")
    if not isinstance(obj["seq"], int) or not isinstance(obj["h"], str) or not isinstance(obj["views"], dict):
        raise BadRecord("a field has the wrong type")
    try:
        same = canonical(obj) == line
    except ValueError as e:
        raise BadRecord(f"not JSON ({e})") from None
    if not same:
        raise BadRecord("not in canonical form (edited by hand?)")
    body = {k: v for k, v in obj.items() if k != "h"}
    if sha256(canonical(body)) != obj["h"]:
        raise BadRecord("hash mismatch (the record was changed after it was written)")
    shape = _shape_error(obj)
    if shape:
        raise BadRecord(shape)
    return obj


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
    start, buf, at_start = fsio.read_tail(path, want + 1, MAX_LINE + 65536, end)
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
    fd = fsio.open_read(path)
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
    fd = fsio.open_read(path)
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
