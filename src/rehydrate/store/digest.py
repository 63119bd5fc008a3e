"""The WAL's sha256, at a scan's pace, the part of a record its hash covers, and a record sealed and encoded at once.

(The canonical JSON is safejson's: json's C encoder, built once for its settings, not once per record.)

sha256: OpenSSL's (hashlib) is faster than CPython's built-in one on every version measured (3.10 to 3.13 on this
kind of machine, `python bench/hashing.py`): about 3 times on a record (0.9 against 3.0 us for 700 bytes) and 5 times
on large inputs (1,440 against 260-280 MB/s: the built-in is portable C, HACL* from 3.12 on, without the CPU's SHA
instructions). But importing hashlib loads OpenSSL: 2.6 ms at every hook's start, more than a hook hashes. So the
built-in hashes small inputs until a large one comes (BIG: there the import pays for itself), or the small ones have
added up to as much (a long-lived process: an MCP server, a loop of checkpoints), or a long pass begins (the scans
call fast_hashing), or hashlib is loaded anyway; from then on, OpenSSL. A hook's process hashes a few kilobytes.
"""

from __future__ import annotations

import sys

from rehydrate.safejson import dumps_canonical

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

try:
    from _sha2 import sha256 as builtin_sha256  # type: ignore[import-not-found, unused-ignore]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as builtin_sha256  # type: ignore[import-not-found, no-redef, unused-ignore]
    except ImportError:  # a build without the built-in module
        from hashlib import sha256 as builtin_sha256  # type: ignore[assignment, unused-ignore]

BIG = 1 << 20  # 2.6 ms of import at about 3 ns a byte saved: it pays for itself near 1 MB
HASHER = [builtin_sha256]
HASHED = [0]  # the bytes sha256() has hashed in this process, in all: past BIG, many small inputs paid it too


def fast_hashing() -> None:
    """Hash with OpenSSL from now on (imports hashlib): before a long pass, or once an input is large."""
    from hashlib import sha256 as openssl

    HASHER[0] = openssl


if "hashlib" in sys.modules:  # loaded anyway: its speed costs nothing more
    fast_hashing()


def hashed(size: int) -> None:
    """A pass has hashed `size` bytes: from BIG on, OpenSSL (unless a test's seam stands in for the built-in)."""
    if size >= BIG and HASHER[0] is builtin_sha256:
        fast_hashing()


def sha256(data: bytes) -> str:
    HASHED[0] += len(data)
    hashed(HASHED[0])  # one large input, or many small ones in a long-lived process (a loop of checkpoints)
    return str(HASHER[0](data).hexdigest())


def without_hash(line: bytes, h: str) -> bytes | None:
    """A canonical record's line less its top-level `"h":"<hex>",` member (followed by `"op":`, the next required
    key), or None when h is not hex or no such member is found. No nested object can hold that member: it would
    carry the hash of a body that contains it."""
    if not (h.isascii() and h.isalnum()):
        return None
    member = b'"h":"' + h.encode() + b'",'
    i = line.rfind(b"," + member + b'"op":')
    return line[: i + 1] + line[i + 1 + len(member) :] if i >= 0 else None


def seal_line(record: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """(wal.seal(record), its line as wal.encode gives it), the record encoded once: its members before `h` and after
    it (canonical JSON sorts the keys) are encoded apart, and the hash's body and the line are both joined from them."""
    body = {k: v for k, v in record.items() if k != "h"}
    head = {k: v for k, v in body.items() if k < "h"}
    rest = {k: v for k, v in body.items() if k > "h"}
    if not head or not rest:  # not a record's shape (a test's): the long way
        body["h"] = sha256(dumps_canonical(body))
        return body, dumps_canonical(body) + b"\n"
    first, last = dumps_canonical(head)[:-1], dumps_canonical(rest)[1:]
    body["h"] = h = sha256(first + b"," + last)
    return body, first + b',"h":"' + h.encode() + b'",' + last + b"\n"
