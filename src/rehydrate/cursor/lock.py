"""One process at a time per pipeline: an exclusive flock on PROGRESS.lock, taken at once or refused."""

from __future__ import annotations

import fcntl
import os

from rehydrate.cursor.verify import WORDS
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio


def _lstat(path: str) -> os.stat_result | None:
    with fsio.failing(path, "look at", WORDS):
        return fsio.lstat(path)


class PipelineLock:
    """An exclusive flock on PROGRESS.lock, taken at once or refused (never waited for), held until release().

    After the lock is taken, the file at the path must still be the one locked (another holder may have removed it on
    release, or someone deleted it); otherwise it is taken again on the new file. `still_held` lets the holder see that
    its lock file was deleted or replaced from under it, before each write.
    """

    def __init__(self, output: str, progress: str) -> None:
        self.path = progress + ".lock"
        self.fd: int | None = None
        self.identity = (0, 0)
        self.pid = os.getpid()
        for _ in range(20):
            fd = fsio.open_lock(self.path, WORDS)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise RehydrateError(
                        f"the pipeline {output} is already open {self._holder(fd)}",
                        "let it finish or stop it first: two writers on one pipeline would each write every index",
                    ) from None
                except OSError as e:
                    raise fsio.error(self.path, "lock", e, WORDS) from None
                st, now = os.fstat(fd), _lstat(self.path)
                if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                    self.fd, self.identity = fd, (st.st_dev, st.st_ino)
                    try:
                        os.ftruncate(fd, 0)
                        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # a note for the message above
                    except OSError:
                        pass
                    return
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # the path now names another file: lock that one
        raise RehydrateError(f"could not lock {self.path}: it keeps being replaced", "find what removes it, then retry")

    @staticmethod
    def _holder(fd: int) -> str:
        try:
            pid = os.pread(fd, 20, 0).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            pid = ""
        if pid == str(os.getpid()):
            return "in this process (close the other Pipeline first)"
        return f"in another process (pid {pid})" if pid.isdigit() else "in another process"

    def still_held(self) -> bool:
        try:
            now = os.lstat(self.path)
        except OSError:
            return False
        return (now.st_dev, now.st_ino) == self.identity

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        try:
            if self.still_held() and os.getpid() == self.pid:  # not a forked child's copy
                os.unlink(self.path)  # while still holding it: a waiter that opened it re-checks and retries
        except OSError:
            pass
        finally:
            os.close(fd)  # closing releases the lock
