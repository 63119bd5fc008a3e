"""Looking at and reading files: never following a final symlink, never blocking, regular files only; and the words
for what goes wrong (`Words`, `error`), which fsio's writes share. Nothing here writes.
"""

from __future__ import annotations

import errno
import os
import stat

from rehydrate.errors import RehydrateError, UnsafeFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK


# ---------------------------------------------------------------------------------------------------- errors


class Words:
    """How errors on a caller's files are worded: who only reads and writes regular files, what to do about a file
    that is not one, and what to do after a system call failed."""

    def __init__(self, who: str, unsafe_hint: str, failed_hint: str) -> None:
        self.who = who
        self.unsafe_hint = unsafe_hint
        self.failed_hint = failed_hint


ANY = Words(
    "rehydrate only reads and writes regular files",
    "move it away (or restore it from git), then run the command again",
    "check the disk (space, permissions, a read-only mount), then run the command again: "
    "a write that failed half-way is redone or reported by the next command",
)


def kind(mode: int) -> str:
    """What a file that is not a regular one is, in words (for messages)."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def unsafe(path: str, what: str, words: Words = ANY) -> UnsafeFile:
    """A file that is not a regular one (`what` says what it is), refused."""
    return UnsafeFile(f"{path} is {what}; {words.who}", words.unsafe_hint)


def not_a_folder(path: str, mode: int) -> UnsafeFile:
    if stat.S_ISREG(mode):
        return UnsafeFile(
            f"{path} is a file, not a folder",
            "name the folder itself (for the state: the state folder, not a file in it), or move the file away",
        )
    return UnsafeFile(
        f"{path} is {kind(mode)}, not a folder; rehydrate only uses real folders",
        "move it away, then run the command again (restore the folder from git if it was replaced)",
    )


def error(path: str, doing: str, e: OSError, words: Words = ANY) -> RehydrateError:
    """An OSError met while `doing` something to path, as a message that says what to do."""
    if e.errno == errno.ELOOP:
        return unsafe(path, "a symbolic link", words)
    if e.errno in (errno.ENXIO, errno.EISDIR):
        return unsafe(path, "not a regular file", words)
    if e.errno == errno.ENOENT:
        folder = os.path.dirname(os.path.abspath(path))
        return RehydrateError(
            f"cannot {doing} {path}: the folder {folder} does not exist", "create the folder first, or check the path"
        )
    if e.errno == errno.ENOTDIR:
        return RehydrateError(f"cannot {doing} {path}: a part of its path is not a folder", "check the path")
    if e.errno in (errno.EACCES, errno.EPERM):
        return RehydrateError(f"cannot {doing} {path}: permission denied", "check the permissions")
    return RehydrateError(f"cannot {doing} {path}: {e.strerror or e}", words.failed_hint)


class failing:
    """An OSError raised in the block becomes error()'s RehydrateError (a class, not contextlib: the hook path stays
    light)."""

    def __init__(self, path: str, doing: str = "write", words: Words = ANY) -> None:
        self.path = path
        self.doing = doing
        self.words = words

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: object) -> None:
        if isinstance(e, OSError):
            raise error(self.path, self.doing, e, self.words) from None


# ---------------------------------------------------------------------------------------------------- looking


def lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def stat_regular(path: str, words: Words = ANY) -> os.stat_result | None:
    """path's lstat if it is a regular file, None if absent; UnsafeFile for anything else, which is never opened
    (a FIFO would block, a device could do anything)."""
    with failing(path, "look at", words):
        st = lstat(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise unsafe(path, kind(st.st_mode), words)
    return st


def check_regular(path: str, words: Words = ANY) -> bool:
    """True if path is a regular file, False if absent; UnsafeFile for anything else."""
    return stat_regular(path, words) is not None


def check_dir(path: str) -> bool:
    """True if path is a real folder (not a symlink to one), False if absent; UnsafeFile otherwise."""
    st = lstat(path)
    if st is None:
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise not_a_folder(path, st.st_mode)
    return True


def checked_fd(fd: int, path: str, words: Words, close: Callable[[int], None] = os.close) -> int:
    """fd, if it is open on a regular file (the path may have been replaced since it was looked at); else fd is
    closed (with `close`) and UnsafeFile raised."""
    checked_stat(fd, path, words, close)
    return fd


def checked_stat(fd: int, path: str, words: Words, close: Callable[[int], None] = os.close) -> os.stat_result:
    """checked_fd's check, returning fd's fstat (what the caller would ask again)."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise unsafe(path, kind(st.st_mode), words)
    except BaseException:
        close(fd)
        raise
    return st


# ---------------------------------------------------------------------------------------------------- reading


def open_read(path: str, words: Words = ANY) -> int | None:
    """An fd open for reading on a regular file, or None if the file is absent. Never follows, never blocks."""
    opened = open_stat(path, words)
    return None if opened is None else opened[0]


def open_stat(path: str, words: Words = ANY) -> tuple[int, os.stat_result] | None:
    """open_read's fd with its fstat, or None if the file is absent."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise error(path, "read", e, words) from None
    return fd, checked_stat(fd, path, words)


def read_small(path: str, limit: int, words: Words = ANY) -> tuple[bytes | None, int | None]:
    """A file's bytes if it holds at most `limit` (else none: b"") and its size, never following a link, never
    blocking; (None, None) if it is absent."""
    data, st = read_stat(path, limit, words)
    return data, None if st is None else st.st_size


def read_head(path: str, limit: int, words: Words = ANY) -> tuple[bytes | None, int | None]:
    """A file's first `limit` bytes and its size, never following a link, never blocking; (None, None) if it is
    absent."""
    data, st = read_stat(path, limit, words, head=True)
    return data, None if st is None else st.st_size


def read_stat(
    path: str, limit: int, words: Words = ANY, *, head: bool = False
) -> tuple[bytes | None, os.stat_result | None]:
    """read_small's bytes, with the file's fstat as it was before they were read (its size: st_size); with head,
    the first `limit` bytes of a larger file rather than none."""
    opened = open_stat(path, words)
    if opened is None:
        return None, None
    fd, st = opened
    try:
        size = st.st_size
        if size > limit and not head:
            return b"", st
        size = min(size, limit)
        chunks: list[bytes] = []
        got = 0
        with failing(path, "read", words):
            while got < size:
                chunk = os.pread(fd, min(1 << 20, size - got), got)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_bytes(path: str, limit: int, words: Words = ANY) -> bytes | None:
    """The whole file (None if absent); RehydrateError if it is larger than limit."""
    return read_stat_bytes(path, limit, words)[0]


def read_stat_bytes(path: str, limit: int, words: Words = ANY) -> tuple[bytes | None, os.stat_result | None]:
    """read_bytes's bytes, with the file's fstat as it was before they were read."""
    data, st = read_stat(path, limit, words)
    if st is not None and st.st_size > limit:
        raise RehydrateError(f"{path} is {st.st_size:,} bytes, more than the {limit:,} allowed for it")
    return data, st


def read_tail(
    path: str, want_lines: int, max_bytes: int, end: int | None = None, words: Words = ANY
) -> tuple[int, bytes, bool]:
    """The end of a file holding at least want_lines complete lines (fewer if the file is short).

    Returns (offset of the returned bytes in the file, bytes, whether the start of the file was reached).
    Reads backwards in growing chunks and stops after max_bytes: the cost depends on the lines read,
    not on the size of the file.
    """
    opened = open_stat(path, words)
    if opened is None:
        raise FileNotFoundError(path)
    fd, st = opened
    try:
        size = st.st_size if end is None else end
        start = size
        buf = b""
        chunk = 8192
        while start > 0:
            step = min(chunk, start)
            start -= step
            buf = os.pread(fd, step, start) + buf
            # newlines that end a complete line before the (possibly torn) last one
            if buf.count(b"\n", 0, len(buf) - 1) >= want_lines:
                break
            if size - start >= max_bytes:
                break
            chunk = min(chunk * 4, 1 << 22)
        return start, buf, start == 0
    finally:
        os.close(fd)
