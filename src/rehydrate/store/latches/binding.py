"""10_invariants.md's binding: a running hash over its lines, so that an append costs O(1) in the file's size.

A record binds 10 (which only grows) by the string "lines-sha256:<lines>:<bytes>:<hex>" in its `views` map: <hex> is
h_n over the file's lines, h_0 = 32 zero bytes and h_i = sha256(h_(i-1) || line_i || b"\n") (each line's bytes
without its newline, then one newline, whether or not the file's last line has one); <lines> is the line count n and
<bytes> the file's size. The lines are the file split at b"\n", the empty piece after a final newline left out. A
file whose last line has no newline (a hand edit) is bound with ":open" after <hex>: the size alone tells the two
apart, the suffix lets the binding be extended. So appending a line extends the last record's binding in O(1)
(`Lines.add`), reading and hashing nothing already in the file; checking a file against a binding (`is_bound`, the
cheap path's `read_invariants`) is one pass that hashes each line once. Records written by older versions bind
the plain sha256 of the whole file (64 hex digits): still understood (the file is hashed whole as well, in the same
pass), and the next write binds the running form. The hash is digest.HASHER[0] (the built-in sha256 for small inputs,
OpenSSL's once a pass is long: store/wal/digest.py), looked up at each use: one seam for the tests.
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, UnsafeFile
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS
from rehydrate.store.layout import INVARIANTS, MAX_VIEW
from rehydrate.store.views import read_view
from rehydrate.store.wal import digest
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State

LINES = "lines-sha256"
_ZERO = bytes(32)
_PARSED: tuple[object, Lines | None] = (None, None)  # the binding Lines.parse parsed last, and its Lines (or None)


class Lines:
    """The running binding of 10_invariants.md: its line count, size, h_n, and whether it ends with a newline."""

    __slots__ = ("_text", "ends", "h", "n", "size")

    def __init__(self, n: int = 0, size: int = 0, h: bytes = _ZERO, ends: bool = True) -> None:
        self.n, self.size, self.h, self.ends = n, size, h, ends or not size
        self._text = ""

    def text(self) -> str:
        """The binding as a record's views map holds it."""
        if not self._text:
            self._text = f"{LINES}:{self.n}:{self.size}:{self.h.hex()}" + ("" if self.ends else ":open")
        return self._text

    @classmethod
    def parse(cls, binding: object) -> Lines | None:
        """A running binding read from a record (untrusted), or None (a plain sha256, or not a binding). The last
        one parsed is kept (a Lines is never changed: add makes a new one): each command parses its last record's."""
        global _PARSED  # one module-wide entry
        if isinstance(binding, str) and binding == _PARSED[0]:
            return _PARSED[1]
        lines = cls._parse(binding)
        _PARSED = (binding, lines)
        return lines

    @classmethod
    def _parse(cls, binding: object) -> Lines | None:
        parts = binding.split(":") if isinstance(binding, str) and len(binding) < 200 else []
        if len(parts) not in (4, 5) or parts[0] != LINES or parts[4:] not in ([], ["open"]):
            return None
        n, size, h = parts[1:4]
        if not (n.isascii() and n.isdigit() and size.isascii() and size.isdigit() and len(h) == 64):
            return None
        try:
            return cls(int(n), int(size), bytes.fromhex(h), len(parts) == 4)
        except ValueError:
            return None

    def add(self, line: bytes) -> Lines:
        """The binding after latches.append_line appends a line (a newline first if the file's last line has none)."""
        sep = 0 if self.ends else 1
        return Lines(self.n + 1, self.size + sep + len(line) + 1, digest.HASHER[0](self.h + line + b"\n").digest())


class LineHasher:
    """Binds a file fed in chunks of any size: each line hashed once, in order (one pass, bounded memory)."""

    def __init__(self, plain: bool = False) -> None:
        self.h, self.n, self.size, self.rest = _ZERO, 0, 0, b""
        # the whole file's sha256 too, for a binding written by an older version
        self.plain = digest.HASHER[0]() if plain else None

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.plain is not None:
            self.plain.update(chunk)
        parts = (self.rest + chunk if self.rest else chunk).split(b"\n")
        self.rest = parts.pop()
        digest.hashed(self.size)  # a long pass: OpenSSL's sha256, faster at every size (store/wal/digest.py)
        h, sha256 = self.h, digest.HASHER[0]
        for part in parts:
            h = sha256(h + part + b"\n").digest()
        self.h, self.n = h, self.n + len(parts)

    def lines(self) -> Lines:
        if not self.rest:
            return Lines(self.n, self.size, self.h)
        return Lines(self.n + 1, self.size, digest.HASHER[0](self.h + self.rest + b"\n").digest(), False)


def lines_of(data: bytes) -> Lines:
    """The running binding of these bytes."""
    hasher = LineHasher()
    hasher.feed(data)
    return hasher.lines()


def is_plain(binding: object) -> bool:
    """A binding written by an older version: the plain sha256 of the whole file."""
    return isinstance(binding, str) and len(binding) == 64 and not binding.strip("0123456789abcdef")


def is_bound(data: bytes | None, expected: object, found: Lines | None = None) -> Lines | None:
    """Whether these bytes are 10_invariants.md as the binding `expected` says (either form): their running binding
    if so (found, if the caller has it already), else None."""
    if data is None or not isinstance(expected, str):
        return None
    found = found if found is not None else lines_of(data)
    return found if expected == found.text() or (is_plain(expected) and wal.sha256(data) == expected) else None


MAX_INVARIANTS = 1 << 30  # 10_invariants.md is checked line by line up to this size (200,000 decisions: ~25 MB)


def read_invariants(state: State, snap: Snapshot) -> tuple[bool, bytes | None]:
    """The cheap path's check of 10_invariants.md against the WAL's last record: (whether it is as bound, its bytes
    when it is not, for the full check). One pass. A file of up to MAX_VIEW is read whole and kept in snap.seen (the
    brief reads it from there); a bigger one is streamed, not kept, and not read at all if its size is not the
    binding's."""
    expected = snap.last["views"].get(INVARIANTS)
    path = state.path(INVARIANTS)
    try:
        data = fsio.read_bytes(path, MAX_VIEW, WORDS)
    except UnsafeFile:
        return False, read_view(state, INVARIANTS, snap.problems, snap.seen)  # named there
    except RehydrateError:  # bigger than MAX_VIEW (or unreadable: then named below)
        try:
            found = _stream(path, expected)
        except (RehydrateError, OSError):
            found = None
        if found is None:
            return False, read_view(state, INVARIANTS, snap.problems, None, MAX_INVARIANTS)
    else:
        snap.seen[INVARIANTS] = data
        found = is_bound(data, expected)
        if found is None:
            return False, data
    snap.set_invariants(found)
    return True, None


def _stream(path: str, expected: object) -> Lines | None:
    """The file's running binding if it is as `expected` binds it (read in chunks: memory stays flat), else None."""
    bound = Lines.parse(expected)
    fd = fsio.open_read(path, WORDS)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        if (bound is None and not is_plain(expected)) or (bound is not None and bound.size != size):
            return None  # it cannot match: not read
        hasher = LineHasher(plain=bound is None)
        done = 0
        while done < size:
            chunk = os.pread(fd, min(1 << 20, size - done), done)
            if not chunk:
                break
            hasher.feed(chunk)
            done += len(chunk)
    finally:
        os.close(fd)
    found = hasher.lines()
    if expected == found.text() or (hasher.plain is not None and hasher.plain.hexdigest() == expected):
        return found
    return None
