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
    from collections.abc import Callable
    from typing import Any

# the built-in module's name for this version first: a name that is not there costs a look through sys.path
try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256 as builtin_sha256  # type: ignore[import-not-found, unused-ignore]
    else:
        from _sha256 import sha256 as builtin_sha256  # type: ignore[import-not-found, no-redef, unused-ignore]
except ImportError:  # a build without the built-in module
    from hashlib import sha256 as builtin_sha256  # type: ignore[assignment, unused-ignore]

BIG = 1 << 20  # 2.6 ms of import at about 3 ns a byte saved: it pays for itself near 1 MB
HASHER = [builtin_sha256]
HASHED = [0]  # the bytes sha256() has hashed in this process, in all: past BIG, many small inputs paid it too


def fast_hashing() -> None:
    """Hash with OpenSSL from now on (imports hashlib): before a long pass, or once an input is large."""
    from hashlib import sha256 as openssl  # here: only a long pass or a large input pays for loading OpenSSL

    HASHER[0] = openssl


if "hashlib" in sys.modules:  # loaded anyway: its speed costs nothing more
    fast_hashing()


# orjson's parse of a line it writes back byte for byte (sorted keys), in a long pass; else None: see long_pass
CANONICAL: list[Callable[[bytes], Any] | None] = [None]


def long_pass() -> None:
    """Before a pass over a whole log: OpenSSL's sha256 (fast_hashing), and orjson (a dependency; not on the hook
    path) to parse a line and check that it is canonical, about 5 times as fast as json's parse and encode."""
    fast_hashing()
    if CANONICAL[0] is None:
        CANONICAL[0] = _orjson_canonical()


def _orjson_canonical() -> Callable[[bytes], Any] | None:
    """A function giving the object a line parses to if orjson writes it back as the line's own bytes, and json
    would too (json's canonical form is the one that counts); None when it cannot tell, the caller's json path says.
    The two write every string, key order (code points: UTF-8's order), integer and container alike; only a float
    below 1e-4 differs (0.000015 and 1e-7 for json's 1.5e-05 and 1e-07): such lines are left to json. An integer
    beyond 64 bits orjson parses as a float, which it writes otherwise: json's path again."""
    try:  # here: only a long pass loads re and orjson (the hook path loads neither)
        import re

        from orjson import OPT_SORT_KEYS, dumps, loads
    except ImportError:  # pragma: no cover - a platform without orjson's wheels
        return None
    small = re.compile(rb"[0-9]e-").search  # a float's negative exponent, as orjson writes it

    def canonical(line: bytes) -> Any:
        try:
            obj = loads(line)
            if type(obj) is not dict or b"0.0000" in line or (b"e-" in line and small(line) is not None):
                return None
            return obj if dumps(obj, option=OPT_SORT_KEYS) == line else None
        except Exception:  # not JSON (or not for orjson: nested too deeply, a lone surrogate): json's path says
            return None

    return canonical


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
