"""Every byte rehydrate writes goes through this module: the state's files, pipelines' outputs, installed files.

The writes are made of a handful of system calls, all made through ``fsio.calls``. Tests replace it with a recorder
that logs each call, then rebuild the disk as it could be after a crash at every point of the log (see
``tests/crashsim.py``). Each ``fsync`` names its sync point so that a test can remove one and watch recovery fail.

Opens never follow symlinks and never block: a file that is a symlink, a FIFO or a folder is refused. A failed system
call becomes a RehydrateError that says what to do, worded for the caller's files (`Words`), never a bare OSError.
"""

from __future__ import annotations

import errno
import os
import stat

from rehydrate.errors import RehydrateError
from rehydrate.fs.read import (
    ANY,
    READ_FLAGS,
    Words,
    check_dir,
    check_regular,
    checked_fd,
    checked_stat,
    error,
    failing,
    kind,
    lstat,
    not_a_folder,
    open_read,
    open_stat,
    read_bytes,
    read_head,
    read_small,
    read_stat,
    read_stat_bytes,
    read_tail,
    stat_regular,
    unsafe,
)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

_NO_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOSYS, getattr(errno, "ENOTSUP", -1), errno.EOPNOTSUPP}
APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | _NOFOLLOW | _CLOEXEC | _NONBLOCK
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
OVERWRITE_FLAGS = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK
LOCK_FLAGS = os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK


class Calls:
    """The system calls behind every write. The real one; tests swap in a recorder."""

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        return os.open(path, flags, mode)

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        return os.pwrite(fd, data, offset)

    def fsync(self, fd: int, point: str) -> None:
        os.fsync(fd)

    def close(self, fd: int) -> None:
        os.close(fd)

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def link(self, src: str, dst: str) -> None:
        os.link(src, dst, follow_symlinks=False)

    def mkdir(self, path: str) -> None:
        os.mkdir(path, 0o755)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def ftruncate(self, fd: int, size: int) -> None:
        os.ftruncate(fd, size)


calls: Calls = Calls()

# fs.read's names are fs.write's too: its callers look, read and write through one module
__all__ = [
    "ANY",
    "READ_FLAGS",
    "Words",
    "check_dir",
    "check_regular",
    "checked_fd",
    "checked_stat",
    "error",
    "failing",
    "kind",
    "lstat",
    "not_a_folder",
    "open_read",
    "open_stat",
    "read_bytes",
    "read_head",
    "read_small",
    "read_stat",
    "read_stat_bytes",
    "read_tail",
    "stat_regular",
    "unsafe",
]


# ---------------------------------------------------------------------------------------------------- writing


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:  # one write in practice; a short write is finished, never left torn
        n = calls.write(fd, bytes(view))
        view = view[n:]


def _open(path: str, flags: int, doing: str, words: Words, mode: int = 0o644) -> int:
    """calls.open on a regular file (checked through the descriptor), errors in words."""
    with failing(path, doing, words):
        fd = calls.open(path, flags, mode)
    return checked_fd(fd, path, words, calls.close)


def close(fd: int) -> None:
    calls.close(fd)


def write_synced(fd: int, path: str, data: bytes, point: str, words: Words = ANY) -> None:
    """Write all of data to fd, open on path, and sync it."""
    with failing(path, "write", words):
        _write_all(fd, data)
        calls.fsync(fd, point)


def fsync_dir(path: str, point: str, words: Words = ANY) -> None:
    with failing(path, "write", words):
        fd = calls.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            calls.fsync(fd, point)
        finally:
            calls.close(fd)


def _mkdir(path: str, words: Words) -> bool:
    """mkdir: False if something is there already."""
    with failing(path, "create", words):
        try:
            calls.mkdir(path)
        except FileExistsError:
            return False
    return True


def ensure_dir(path: str, point: str | None, words: Words = ANY) -> bool:
    """Create a folder if it is absent; sync its parent unless point is None. True if it was created."""
    if check_dir(path):
        return False
    if not _mkdir(path, words):
        check_dir(path)
        return False
    if point is not None:
        fsync_dir(os.path.dirname(path) or ".", point, words)
    return True


def make_dirs(folder: str, point: str, words: Words = ANY) -> list[str]:
    """Create folder and its missing parents, each one's parent synced at point; the ones made, outermost first.

    The nearest existing folder above may be reached through a link; the ones made are real folders."""
    missing = []
    here = folder
    while not os.path.lexists(here) and os.path.dirname(here) != here:
        missing.append(here)
        here = os.path.dirname(here)
    if not os.path.isdir(here):
        st = lstat(here)
        raise not_a_folder(here, st.st_mode if st else 0)
    return [path for path in reversed(missing) if ensure_dir(path, point, words)]


def open_append(path: str, point: str, words: Words = ANY) -> int:
    """An fd appending to a regular file, created if absent (its folder entry then synced at point)."""
    created = not check_regular(path, words)
    fd = _open(path, APPEND_FLAGS | os.O_CREAT, "open", words)
    if created:
        try:
            fsync_dir(os.path.dirname(path) or ".", point, words)
        except BaseException:
            calls.close(fd)
            raise
    return fd


def append(path: str, data: bytes, point: str, *, create: bool = False, words: Words = ANY) -> os.stat_result:
    """Append data with one write and sync it. With create, a new file's folder entry is synced too. Returns the
    file's fstat after the write (its fingerprint, without looking the path up again)."""
    existed = True
    try:
        fd = calls.open(path, APPEND_FLAGS, 0o644)
    except OSError as e:
        stat_regular(path, words)  # a link, a FIFO, a folder: named as what it is
        if e.errno != errno.ENOENT:
            raise error(path, "write", e, words) from None
        if not create:
            hint = "run `rehydrate verify` to see the state, then `--repair`"
            raise RehydrateError(f"{path} is missing", hint) from None
        existed = False
        fd = _open(path, APPEND_FLAGS | os.O_CREAT, "write", words)
    else:
        checked_stat(fd, path, words, calls.close)
    try:
        write_synced(fd, path, data, point, words)
        st = os.fstat(fd)
    finally:
        calls.close(fd)
    if not existed:
        fsync_dir(os.path.dirname(path), point + ".dir", words)
    return st


def overwrite(path: str, data: bytes, words: Words = ANY) -> None:
    """Write data over the start of a regular file (created if absent) and cut what follows, in place and without a
    sync: only for a file that can always be redone from another (a pipeline's progress)."""
    check_regular(path, words)
    fd = _open(path, OVERWRITE_FLAGS, "write", words)
    try:
        with failing(path, "write", words):
            _write_all(fd, data)
            if os.fstat(fd).st_size > len(data):
                calls.ftruncate(fd, len(data))
    finally:
        calls.close(fd)


def open_overwrite(path: str, words: Words = ANY) -> int:
    """An fd kept open to rewrite a regular file (created if absent) in place with overwrite_at."""
    check_regular(path, words)
    return _open(path, OVERWRITE_FLAGS, "write", words)


def overwrite_at(fd: int, path: str, data: bytes, words: Words = ANY, *, cut: bool = False) -> None:
    """overwrite through an fd from open_overwrite: data over the start of the file with one pwrite (with cut, what
    follows is cut off), in place and without a sync. Only for a file that can always be redone from another."""
    with failing(path, "write", words):
        done = 0
        while done < len(data):  # one pwrite in practice; a short one is finished
            done += calls.pwrite(fd, data[done:], done)
        if cut and os.fstat(fd).st_size > len(data):
            calls.ftruncate(fd, len(data))


def temp_name(path: str) -> str:
    """replace's temporary file for path: `.NAME.PID.8HEX.tmp`, beside it."""
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of replace's temporary files (left behind only by a crash)."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return False
    parts = name[1:-4].rsplit(".", 2)
    return (
        len(parts) == 3
        and parts[0] != ""
        and parts[1].isascii()
        and parts[1].isdigit()
        and len(parts[2]) == 8
        and set(parts[2]) <= set("0123456789abcdef")
    )


def replace(
    path: str, data: bytes, point: str, *, mode: int | None = None, new_mode: int = 0o644, words: Words = ANY
) -> os.stat_result:
    """Replace a file atomically: temp file in the same folder, sync, rename, sync the folder. Returns the new file's
    fstat after the rename (which changes its ctime): its fingerprint, without looking the path up again.

    mode: the permission bits the file gets, exactly (the temporary copy is never more open); None: new_mode less
    the umask, as open() gives. A failed write leaves no temporary file behind."""
    folder = os.path.dirname(path)
    stat_regular(path, words)
    tmp = temp_name(path)
    with failing(path, "write", words):
        fd = calls.open(tmp, CREATE_FLAGS, new_mode if mode is None else mode)
        try:
            try:
                if mode is not None:
                    os.fchmod(fd, mode)  # exactly these bits, whatever the umask
                _write_all(fd, data)
                calls.fsync(fd, point + ".file")
                calls.replace(tmp, path)
            except BaseException:
                _discard(tmp)
                raise
            st = os.fstat(fd)
        finally:
            calls.close(fd)
    fsync_dir(folder, point + ".dir", words)
    return st


def _discard(tmp: str) -> None:
    try:
        calls.unlink(tmp)
    except OSError:
        pass


def free_name(path: str) -> str:
    """path, or path.2, path.3, ...: the first that does not exist (a kept copy never replaces another)."""
    candidate, i = path, 1
    while lstat(candidate) is not None:
        i += 1
        candidate = f"{path}.{i}"
    return candidate


def cut_tail(path: str, offset: int, torn: bytes, point: str, words: Words = ANY) -> str:
    """Cut a torn last line (torn, from offset on) off a log, keeping its bytes in a .broken file beside it that
    never replaces an older one; the kept file's path. Sync points: point.broken.file/.dir, then point.truncate."""
    broken = free_name(path + ".broken")
    replace(broken, torn, point + ".broken", words=words)
    truncate(path, offset, point + ".truncate", words)
    return broken


def link(src: str, dst: str, point: str, words: Words = ANY) -> None:
    """Hard-link src to dst (kept if dst exists already) and sync dst's folder; copy where links are not allowed."""
    try:
        calls.link(src, dst)
    except FileExistsError:
        check_regular(dst, words)
    except OSError as e:
        if e.errno not in _NO_LINKS:
            raise error(dst, "write", e, words) from None
        data = read_bytes(src, 1 << 40, words)
        replace(dst, data or b"", point, words=words)  # a filesystem without hard links: an atomic copy instead
        return
    fsync_dir(os.path.dirname(dst), point, words)


def truncate(path: str, size: int, point: str, words: Words = ANY) -> None:
    with failing(path, "write", words):
        fd = calls.open(path, os.O_WRONLY | _NOFOLLOW | _CLOEXEC)
        try:
            calls.ftruncate(fd, size)
            calls.fsync(fd, point)
        finally:
            calls.close(fd)


def write_hint(path: str, data: bytes) -> os.stat_result | None:
    """Write a cache file that is not state: no sync (losing it only costs a re-check); never through a symlink.
    Returns the file's fstat after the write (None if it was not written).

    Written in place, without O_TRUNC (which empties the file first, and makes ext4 flush it at close): the new
    bytes over the old, then the rest cut. A crash in between leaves a mix of the two, so a cache must carry its
    own checksum (seen.py's does) and read as absent when it does not match."""
    try:
        fd = calls.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        _write_all(fd, data)
        if st.st_size > len(data):
            calls.ftruncate(fd, len(data))
        return os.fstat(fd)
    except OSError:
        return None  # a hint that cannot be written is only a re-check later
    finally:
        calls.close(fd)


def unlink(path: str, words: Words = ANY) -> None:
    """Remove a file; nothing if it is absent."""
    try:
        calls.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise error(path, "remove", e, words) from None


# ---------------------------------------------------------------------------------------------------- locks


def open_lock(path: str, words: Words = ANY) -> int:
    """An fd open for reading and writing on a regular lock file, created if absent. Not through the seam: a lock
    file holds no state."""
    check_regular(path, words)
    with failing(path, "create the lock file", words):
        fd = os.open(path, LOCK_FLAGS, 0o644)
    return checked_fd(fd, path, words)
