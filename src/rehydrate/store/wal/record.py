"""A record of the write-ahead log: its canonical encoding, its hash, its seal, and the strict decode of one line.

One JSON object per line, canonical (sorted keys, no spaces, UTF-8), so that a record's hash is reproducible. ``h`` is
the sha256 of the record without ``h``; ``prev`` is the previous record's ``h`` (a merge record names its other
parents in ``parents``). A record is valid only if its line is byte for byte the canonical encoding of what it parses
to: any edit, bit flip or torn write shows.
"""

from __future__ import annotations

import time

from rehydrate import safejson
from rehydrate.store import records
from rehydrate.store.wal import digest

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    Record = dict[str, Any]

VERSION = 1
MAX_LINE = 8 << 20  # a record larger than this is damage: the inputs are capped well below it
REQUIRED = ("v", "seq", "ts", "actor", "op", "data", "views", "prev", "h")
_REQUIRED = frozenset(REQUIRED)

sha256, fast_hashing, seal_line = digest.sha256, digest.fast_hashing, digest.seal_line  # see digest.py


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


def _shape_error(rec: Record) -> str | None:
    data = rec["data"]
    if not all(isinstance(v, str) for v in rec["views"].values()):
        return "its views map holds something other than hashes"
    if not isinstance(rec["op"], str) or not isinstance(data, dict):
        return "its op or data has the wrong type"
    key = records.of(rec["op"]).lacks(data)  # what a view is redone from; an unknown op needs nothing
    if key is not None:
        return f"a {rec['op']} record without a valid data.{key} (written by another tool?)"  # op: a known name
    return None


def other_parents(rec: Record) -> list[str]:
    """A record's other parents (a merge record's `parents`): [] when absent or not a list of strings."""
    parents = rec.get("parents")
    if not isinstance(parents, list):
        return []
    return [p for p in parents if isinstance(p, str)]


def parents_of(rec: Record) -> list[str]:
    """Every parent of a record: its prev (if any), then its other parents."""
    prev = rec["prev"]
    return ([prev] if isinstance(prev, str) else []) + other_parents(rec)
