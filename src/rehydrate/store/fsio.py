"""Every byte the state writes goes through this module.

The writes are made of a handful of system calls, all made through ``fsio.sys``. Tests replace it with a recorder
that logs each call, then rebuild the disk as it could be after a crash at every point of the log (see
``tests/crashsim.py``). Each ``fsync`` names its sync point so that a test can remove one and watch recovery fail.

Opens never follow symlinks and never block: a state file that is a symlink, a FIFO or a folder is refused.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat

from rehydrate.errors import RehydrateError, UnsafeFile

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

_NO_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOSYS, getattr(errno, "ENOTSUP", -1), errno.EOPNOTSUPP}
READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK
APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | _NOFOLLOW | _CLOEXEC | _NONBLOCK
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC


class Sys:
    """The system calls behind every state write. The real one; tests swap in a recorder."""

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        return os.open(path, flags, mode)

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

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


sys: Sys = Sys()


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


def _unsafe(path: str, what: str) -> UnsafeFile:
    return UnsafeFile(
        f"{path} is {what}; rehydrate only reads and writes regular files inside the state folder",
        "move it away and run `rehydrate verify --repair`, or restore the file from git",
    )


def _not_a_folder(path: str, mode: int) -> UnsafeFile:
    if stat.S_ISREG(mode):
        return UnsafeFile(
            f"{path} is a file, not a folder",
            "point --dir (or REHYDRATE_DIR) at the state folder, or move the file away",
        )
    return UnsafeFile(
        f"{path} is {kind(mode)}, not a folder; rehydrate only uses real folders for the state",
        "move it away, then run the command again (restore the folder from git if it was replaced)",
    )


def lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def check_regular(path: str) -> bool:
    """True if path is a regular file, False if absent; UnsafeFile for anything else."""
    st = lstat(path)
    if st is None:
        return False
    if not stat.S_ISREG(st.st_mode):
        raise _unsafe(path, kind(st.st_mode))
    return True


def check_dir(path: str) -> bool:
    """True if path is a real folder (not a symlink to one), False if absent; UnsafeFile otherwise."""
    st = lstat(path)
    if st is None:
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise _not_a_folder(path, st.st_mode)
    return True


def open_read(path: str) -> int | None:
    """An fd open for reading on a regular file, or None if the file is absent. Never follows, never blocks."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _unsafe(path, "a symbolic link") from None
        if e.errno in (errno.ENXIO, errno.EISDIR):
            raise _unsafe(path, "not a regular file") from None
        raise RehydrateError(f"cannot read {path}: {e.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _unsafe(path, kind(st.st_mode))
    return fd


def read_bytes(path: str, limit: int) -> bytes | None:
    """The whole file (None if absent); RehydrateError if it is larger than limit."""
    fd = open_read(path)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise RehydrateError(f"{path} is {size:,} bytes, more than the {limit:,} allowed for it")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_tail(path: str, want_lines: int, max_bytes: int, end: int | None = None) -> tuple[int, bytes, bool]:
    """The end of a file holding at least want_lines complete lines (fewer if the file is short).

    Returns (offset of the returned bytes in the file, bytes, whether the start of the file was reached).
    Reads backwards in growing chunks and stops after max_bytes: the cost depends on the lines read,
    not on the size of the file.
    """
    fd = open_read(path)
    if fd is None:
        raise FileNotFoundError(path)
    try:
        size = os.fstat(fd).st_size if end is None else end
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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = sys.write(fd, bytes(view))
        view = view[n:]


class _writing:
    """A failed system call (no space, no permission, a read-only mount) becomes a message, not a crash."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: object) -> None:
        if not isinstance(e, OSError):
            return
        if e.errno == errno.ELOOP:
            raise _unsafe(self.path, "a symbolic link") from None
        raise RehydrateError(
            f"cannot write {self.path}: {e.strerror or e}",
            "check the disk (space, permissions, a read-only mount), then run the command again: "
            "a write that failed half-way is redone or reported by the next command",
        ) from None


def fsync_dir(path: str, point: str) -> None:
    with _writing(path):
        fd = sys.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            sys.fsync(fd, point)
        finally:
            sys.close(fd)


def _mkdir(path: str) -> bool:
    """mkdir: False if something is there already."""
    with _writing(path):
        try:
            sys.mkdir(path)
        except FileExistsError:
            return False
    return True


def ensure_dir(path: str, point: str | None) -> bool:
    """Create a folder if it is absent; sync its parent unless point is None. True if it was created."""
    if check_dir(path):
        return False
    if not _mkdir(path):
        check_dir(path)
        return False
    if point is not None:
        fsync_dir(os.path.dirname(path) or ".", point)
    return True


def append(path: str, data: bytes, point: str, *, create: bool = False) -> None:
    """Append data with one write and sync it. With create, a new file's folder entry is synced too."""
    flags = APPEND_FLAGS | (os.O_CREAT if create else 0)
    existed = check_regular(path)
    if not existed and not create:
        raise RehydrateError(f"{path} is missing", "run `rehydrate verify` to see the state, then `--repair`")
    with _writing(path):
        fd = sys.open(path, flags)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _unsafe(path, kind(st.st_mode))
            _write_all(fd, data)
            sys.fsync(fd, point)
        finally:
            sys.close(fd)
    if not existed:
        fsync_dir(os.path.dirname(path), point + ".dir")


def replace(path: str, data: bytes, point: str) -> None:
    """Replace a file atomically: temp file in the same folder, sync, rename, sync the folder."""
    folder = os.path.dirname(path)
    st = lstat(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _unsafe(path, kind(st.st_mode))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    with _writing(path):
        fd = sys.open(tmp, CREATE_FLAGS)
        try:
            _write_all(fd, data)
            sys.fsync(fd, point + ".file")
        finally:
            sys.close(fd)
        sys.replace(tmp, path)
    fsync_dir(folder, point + ".dir")


def link(src: str, dst: str, point: str) -> None:
    """Hard-link src to dst (kept if dst exists already) and sync dst's folder; copy where links are not allowed."""
    try:
        sys.link(src, dst)
    except FileExistsError:
        check_regular(dst)
    except OSError as e:
        if e.errno not in _NO_LINKS:
            with _writing(dst):
                raise
        data = read_bytes(src, 1 << 40)
        replace(dst, data or b"", point)  # a filesystem without hard links: an atomic copy instead
        return
    fsync_dir(os.path.dirname(dst), point)


def truncate(path: str, size: int, point: str) -> None:
    with _writing(path):
        fd = sys.open(path, os.O_WRONLY | _NOFOLLOW | _CLOEXEC)
        try:
            sys.ftruncate(fd, size)
            sys.fsync(fd, point)
        finally:
            sys.close(fd)


def write_hint(path: str, data: bytes) -> None:
    """Write a cache file that is not state: no sync (losing it only costs a re-check); never through a symlink."""
    try:
        fd = sys.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC | _NONBLOCK)
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            _write_all(fd, data)
    finally:
        sys.close(fd)


def unlink(path: str) -> None:
    try:
        sys.unlink(path)
    except FileNotFoundError:
        pass


# What flock on a folder may answer where the filesystem cannot lock folders: the lock file alone is held there.
_NO_FOLDER_LOCKS = {errno.ENOLCK, errno.EINVAL, errno.EBADF, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", -1)}
_REPLACED_MAX = 100  # a folder replaced this many times in a row while we wait for it is being attacked


class locked:
    """Hold the state's lock while the block runs: a flock on the state folder itself, then on its `.lock` file.

    A lock file alone is not enough: it is git-ignored, and deleting it (`git clean -fdX`) or replacing it while a
    writer holds it lets the next writer lock a new file and write beside the first (a forked chain). The folder
    is not deleted from under a holder (git deletes a folder only once it holds no files, and the state's are
    committed); and a waiter whose lock turns out to be on a folder that was replaced meanwhile (renamed away, a
    copy put in its place) lets it go and locks the new one: after the flock, the folder's path must still name the
    folder locked (same device and inode). The lock
    file is still locked after the folder, so that writers which lock only it (rehydrate 0.1; other machines on a
    network filesystem, where a folder's lock may be local to each machine) are still excluded.

    flock, not lockf: a flock belongs to the open file description, so another descriptor of the same file being
    closed (fsync_dir opens the folder) does not release it. Shared mode (readers) keeps working without a lock
    file where none can be created (a read-only checkout).
    """

    def __init__(self, folder: str, *, shared: bool = False) -> None:
        self.folder = folder
        self.path = os.path.join(folder, ".lock")
        self.shared = shared
        self.fds: list[int] = []

    def __enter__(self) -> None:
        how = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
        try:
            self._lock_folder(how)
            self._lock_file(how)
        except BaseException:
            self._release()
            raise

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: object) -> None:
        self._release()

    def _release(self) -> None:
        while self.fds:
            os.close(self.fds.pop())  # closing releases the lock

    def _lock_folder(self, how: int) -> None:
        for _ in range(_REPLACED_MAX):
            try:
                fd = os.open(self.folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    st = lstat(self.folder)
                    raise _not_a_folder(self.folder, st.st_mode if st else 0) from None
                raise RehydrateError(f"cannot lock {self.folder}: {e.strerror}") from None
            self.fds.append(fd)
            try:
                fcntl.flock(fd, how)
            except OSError as e:
                if e.errno not in _NO_FOLDER_LOCKS:
                    raise RehydrateError(f"cannot lock {self.folder}: {e.strerror}") from None
                os.close(self.fds.pop())
                return
            st = lstat(self.folder)
            held = os.fstat(fd)
            if st is not None and (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino):
                return
            os.close(self.fds.pop())  # the folder was replaced while we waited: lock the one there now
        raise RehydrateError(
            f"{self.folder} was replaced {_REPLACED_MAX} times while rehydrate waited for its lock",
            "stop whatever keeps moving the state folder, then run the command again",
        )

    def _lock_file(self, how: int) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise _unsafe(self.path, "a symbolic link") from None
            if e.errno in (errno.EACCES, errno.EROFS, errno.EPERM) and self.shared:
                return  # a read-only checkout can still be verified
            raise RehydrateError(f"cannot open the lock file {self.path}: {e.strerror}") from None
        self.fds.append(fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _unsafe(self.path, "not a regular file")
        try:
            fcntl.flock(fd, how)
        except OSError as e:
            raise RehydrateError(f"cannot lock {self.path}: {e.strerror}") from None
