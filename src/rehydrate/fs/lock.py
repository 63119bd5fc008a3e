"""The state's lock: a flock on the state folder itself, then on its `.lock` file, held while one command reads
or writes (see `locked`). Its opens follow no symlink and take nothing but a real folder and a regular file, as
fs.read's do.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat

from rehydrate.errors import RehydrateError
from rehydrate.fs.read import ANY, Words, lstat, not_a_folder, unsafe

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

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

    def __init__(self, folder: str, *, shared: bool = False, words: Words = ANY) -> None:
        self.folder = folder
        self.words = words
        self.path = os.path.join(folder, ".lock")
        self.shared = shared
        self.fds: list[int] = []
        self.waited = False  # whether another process held the lock when this one asked for it

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
                    raise not_a_folder(self.folder, st.st_mode if st else 0) from None
                raise RehydrateError(f"cannot lock {self.folder}: {e.strerror}") from None
            self.fds.append(fd)
            try:
                self._flock(fd, how)
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
                raise unsafe(self.path, "a symbolic link", self.words) from None
            if e.errno in (errno.EACCES, errno.EROFS, errno.EPERM) and self.shared:
                return  # a read-only checkout can still be verified
            raise RehydrateError(f"cannot open the lock file {self.path}: {e.strerror}") from None
        self.fds.append(fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise unsafe(self.path, "not a regular file", self.words)
        try:
            self._flock(fd, how)
        except OSError as e:
            raise RehydrateError(f"cannot lock {self.path}: {e.strerror}") from None

    def _flock(self, fd: int, how: int) -> None:
        """flock, noting in `waited` whether another process held the lock first (a session start then asks git
        again for what it asked before it had the lock)."""
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            self.waited = True
            fcntl.flock(fd, how)
