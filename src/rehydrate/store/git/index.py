"""The entries of a git index file that git does not look at in the work tree: those marked assume-unchanged
(`git update-index --assume-unchanged`) or skip-worktree (`--skip-worktree`, a sparse checkout's). git takes the
index's copy for such a file, so a rewrite of it is invisible to `git add -A`; store/evidence/worktree.py's work-tree
hash unmarks them in its scratch index first.

Read from the file's bytes (format: gitformat-index(5)), with no git process: the common case, nothing marked, costs
one pass over the entries' fixed fields, which runs while `git add -A` runs. Versions 2 and 3 (each entry padded to
8 bytes) and 4 (names prefix-compressed, no padding). The file is the user's repository's and may be anything: every
length is checked, and what does not parse gives None (the caller then builds its scratch index without the file), as
does a split index (`core.splitIndex`: most entries are in a shared file).
"""

from __future__ import annotations

_ASSUME_VALID = 0x8000  # the entry's flags: assume-unchanged
_EXTENDED = 0x4000  # the entry's flags: two more bytes of flags follow (version 3 and later)
_SKIP_WORKTREE = 0x4000  # the extended flags: skip-worktree
_STAT = 40  # ctime, mtime, dev, ino, mode, uid, gid, size


class Marked:
    """The names (bytes, as the index holds them) marked assume-unchanged and those marked skip-worktree."""

    def __init__(self) -> None:
        self.assumed: list[bytes] = []
        self.skipped: list[bytes] = []

    def __bool__(self) -> bool:
        return bool(self.assumed or self.skipped)


def marked(data: bytes, hash_len: int = 20) -> Marked | None:
    """The marked entries of an index file's bytes (hash_len: 20 for SHA-1 repositories, 32 for SHA-256); None when
    the bytes are not an index of version 2, 3 or 4 whose entries all parse."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3, 4):
        return None
    out = Marked()
    if version == 4:
        return _walk_v4(data, hash_len, out)
    end = len(data) - hash_len  # the checksum closes the file
    fixed = _STAT + hash_len
    at = 12
    for _ in range(int.from_bytes(data[8:12], "big")):
        if at + fixed + 2 > end:
            return None
        high = data[at + fixed]
        if high & 0xC0 or high & 0x0F == 0x0F:  # marked, extended or a long name: the entry read in full
            got = _entry(data, at, fixed, end, version, out)
            if got is None:
                return None
            at = got
            continue
        stop = at + fixed + 2 + (((high & 0x0F) << 8) | data[at + fixed + 1])  # the common entry, in the loop
        if stop >= end or data[stop]:
            return None
        at += (stop - at + 8) & ~7  # the NULs padding the entry to a multiple of 8 bytes
    return None if _split(data, at, end) else out


def _entry(data: bytes, at: int, fixed: int, end: int, version: int, out: Marked) -> int | None:
    """A version 2 or 3 entry read in full (its marks noted in out); where the next one starts."""
    flags = (data[at + fixed] << 8) | data[at + fixed + 1]
    head = fixed + 2
    extended = 0
    if flags & _EXTENDED:
        if version < 3 or at + head + 2 > end:
            return None
        extended = (data[at + head] << 8) | data[at + head + 1]
        head += 2
    size = flags & 0xFFF  # the name's length, or 0xFFF for one as long or longer, up to a NUL
    stop = at + head + size if size < 0xFFF else data.find(b"\0", at + head + size, end)
    if stop < 0 or stop >= end or data[stop]:
        return None
    _note(out, data[at + head : stop], flags, extended)
    following = at + ((stop - at + 8) & ~7)
    return following if following <= end else None


def _walk_v4(data: bytes, hash_len: int, out: Marked) -> Marked | None:
    end = len(data) - hash_len
    fixed = _STAT + hash_len
    at = 12
    name = b""
    for _ in range(int.from_bytes(data[8:12], "big")):
        if at + fixed + 2 > end:
            return None
        flags = (data[at + fixed] << 8) | data[at + fixed + 1]
        head = fixed + 2
        extended = 0
        if flags & _EXTENDED:
            if at + head + 2 > end:
                return None
            extended = (data[at + head] << 8) | data[at + head + 1]
            head += 2
        got = _name_v4(data, at + head, end, name)
        if got is None:
            return None
        name, at = got
        _note(out, name, flags, extended)
    return None if _split(data, at, end) else out


def _split(data: bytes, at: int, end: int) -> bool:
    """Whether the extensions after the entries (a signature and a size each) hold `link`: a split index, whose
    other entries, and their marks, are in a shared index file this module does not read."""
    while at + 8 <= end:
        if data[at : at + 4] == b"link":
            return True
        at += 8 + int.from_bytes(data[at + 4 : at + 8], "big")
    return False


def _note(out: Marked, name: bytes, flags: int, extended: int) -> None:
    if flags & _ASSUME_VALID:
        out.assumed.append(name)
    if extended & _SKIP_WORKTREE:
        out.skipped.append(name)


def _name_v4(data: bytes, at: int, end: int, previous: bytes) -> tuple[bytes, int] | None:
    """Version 4's name: how many bytes to drop from the previous name (git's offset varint), then the rest up to a
    NUL. The name and where the next entry starts."""
    if at >= end:
        return None
    c = data[at]
    at += 1
    drop = c & 0x7F
    while c & 0x80:
        if at >= end or drop > len(previous):
            return None
        c = data[at]
        at += 1
        drop = ((drop + 1) << 7) | (c & 0x7F)
    if drop > len(previous):
        return None
    stop = data.find(b"\0", at, end)
    if stop < 0:
        return None
    return previous[: len(previous) - drop] + data[at:stop], stop + 1
