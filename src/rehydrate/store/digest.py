"""The WAL's canonical JSON and sha256, at a scan's pace.

Canonical: sorted keys, no spaces, UTF-8 (safejson.dumps_canonical). json.dumps with those settings builds a new
encoder at every call (a few microseconds, and a scan encodes every record): here the same C encoder is built once.

sha256: OpenSSL's (hashlib) is faster than CPython's built-in one on every version measured (3.10 to 3.13 on this
kind of machine, `python bench/hashing.py`): about 3 times on a record (0.9 against 3.0 us for 700 bytes) and 5 times
on large inputs (1,440 against 260-280 MB/s: the built-in is portable C, HACL* from 3.12 on, without the CPU's SHA
instructions). But importing hashlib loads OpenSSL: 2.6 ms at every hook's start, more than a hook hashes. So the
built-in hashes small inputs until a large one comes (BIG: there the import pays for itself) or a long pass begins
(the scans call fast_hashing), or hashlib is loaded anyway; from then on, OpenSSL.
"""

from __future__ import annotations

import sys

from rehydrate import safejson

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable, Sequence
    from typing import Any

    Encoder = Callable[[object, int], Sequence[str]]

# No circular-reference markers: a record comes from JSON or from this program, never holds a cycle, and markers
# left by an encode that failed half-way (too deep) would make the next one fail.
ENCODER: list[Encoder | None] = [None]


def build_encoder() -> Encoder:
    """The canonical encoder (built on the first call): encoder(obj, 0) is the text's pieces."""
    from json import JSONEncoder, encoder

    make = getattr(encoder, "c_make_encoder", None)
    built: Encoder
    if make is None:  # an interpreter without the C accelerator: json.dumps itself
        built = lambda obj, _: (safejson.dumps_canonical(obj).decode("utf-8"),)  # noqa: E731
    else:
        default = JSONEncoder().default  # TypeError for what JSON cannot hold
        built = make(None, default, encoder.encode_basestring, None, ":", ",", True, False, True)
    ENCODER[0] = built
    return built


SCANNER: list[Callable[[str, int], tuple[Any, int]] | None] = [None]


def parse_whole(text: str) -> tuple[bool, Any]:
    """(True, the value) when text is one JSON value and nothing else, read by json's scanner (built once: no call
    of json.loads, its decoder and its two whitespace matches); (False, None) otherwise, for json.loads to name."""
    scan = SCANNER[0]
    if scan is None:
        from json import JSONDecoder

        scan = SCANNER[0] = JSONDecoder().scan_once  # type: ignore[attr-defined]
    try:
        obj, end = scan(text, 0)
    except (StopIteration, ValueError, RecursionError):
        return False, None
    return end == len(text), obj


def canonical(obj: object) -> bytes:
    """Sorted keys, no spaces, UTF-8. safejson.TooDeep (a ValueError) for an object nested too deeply to encode."""
    encode = ENCODER[0] or build_encoder()
    try:
        return "".join(encode(obj, 0)).encode("utf-8")
    except RecursionError:
        raise safejson.TooDeep("JSON nested too deeply") from None


try:
    from _sha2 import sha256 as builtin_sha256  # type: ignore[import-not-found, unused-ignore]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as builtin_sha256  # type: ignore[import-not-found, no-redef, unused-ignore]
    except ImportError:  # a build without the built-in module
        from hashlib import sha256 as builtin_sha256  # type: ignore[assignment, unused-ignore]

BIG = 1 << 20  # 2.6 ms of import at about 3 ns a byte saved: it pays for itself near 1 MB
HASHER = [builtin_sha256]


def fast_hashing() -> None:
    """Hash with OpenSSL from now on (imports hashlib): before a long pass, or once an input is large."""
    from hashlib import sha256 as openssl

    HASHER[0] = openssl


if "hashlib" in sys.modules:  # loaded anyway: its speed costs nothing more
    fast_hashing()


def sha256(data: bytes) -> str:
    if len(data) >= BIG and HASHER[0] is builtin_sha256:
        fast_hashing()
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
