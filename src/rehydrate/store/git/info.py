"""What git says about the work tree, in one `git status`: HEAD, branch and dirty files (the state folder left out),
and each dirty file's content bound by its git blob id (`dirty_blobs`, read in this process: no git call per file).

`start` launches git and `finish` reads its answer, so that a checkpoint can reconcile the state while git runs.
git is started with os.posix_spawn rather than subprocess: importing subprocess (and threading) costs more than the
whole git call, on a path that runs at every checkpoint (bench/startup.py measures it). Its answer is waited for with
poll(), not select(): select() refuses descriptor numbers above 1,023, which a long-lived process (an MCP server, a
test suite) can reach.
"""

from __future__ import annotations

import os
import select
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable, Collection
    from typing import Any

MAX_DIRTY = 200
TIMEOUT = 20.0

# The content of the dirty files (`dirty_blobs`): what a checkpoint hashes, and what live-state hashes again, is
# bounded here, so that a checkpoint costs the same whatever the work tree holds.
MAX_BLOBS = MAX_DIRTY  # paths given an entry: the first, in path order (the ones `dirty` records)
MAX_BLOB_BYTES = 4 << 20  # a larger file is not read: its size stands for its content
MAX_BLOB_TOTAL = 32 << 20  # bytes hashed for one record (or one check); the files past it get their size too
DELETED = "deleted"  # the entry of a dirty path that does not exist (deleted in the work tree)


class Pending:
    """A running `git status` in root, or the reason it could not start."""

    def __init__(self, pid: int | None, fd: int | None, reason: str | None, root: str | None = None) -> None:
        self.pid = pid
        self.fd = fd
        self.reason = reason
        self.root = root


def start(state_dir: str) -> Pending:
    argv = ["git", "-C", state_dir, "status", "--porcelain=v2", "--branch", "-z", "--", ":/", ":(exclude)."]
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        read_fd, write_fd = os.pipe()
    except OSError as e:  # out of descriptors: the checkpoint goes on without git, and says so
        return Pending(None, None, f"git could not start: {e.strerror}")
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
    except OSError as e:
        os.close(read_fd)
        os.close(write_fd)
        return Pending(None, None, f"git could not start: {e.strerror}")
    try:
        pid = os.posix_spawnp(
            "git",
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, write_fd, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
                (os.POSIX_SPAWN_CLOSE, read_fd),
            ],
        )
    except FileNotFoundError:
        os.close(read_fd)
        return Pending(None, None, "git is not installed")
    except OSError as e:
        os.close(read_fd)
        return Pending(None, None, f"git could not start: {e.strerror}")
    finally:
        os.close(write_fd)
        os.close(devnull)
    return Pending(pid, read_fd, None, state_dir)


def finish(pending: Pending) -> dict[str, Any]:
    """{"head", "branch", "dirty"[, "dirty_count"][, "dirty_blobs"]} for the repository holding the state folder, or
    {"repo": False, "reason"}. dirty_blobs (see blobs()) only when a file is dirty."""
    if pending.pid is None or pending.fd is None:
        return {"repo": False, "reason": pending.reason or "git did not run"}
    chunks: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT
    timed_out = False
    try:
        poller = select.poll()  # any descriptor number, unlike select.select
        poller.register(pending.fd, select.POLLIN)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(int(left * 1000) + 1):
                timed_out = True
                os.kill(pending.pid, 9)  # SIGKILL (the signal module costs the hook path 0.5 ms to import)
                break
            chunk = os.read(pending.fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(pending.fd)
        _, status = os.waitpid(pending.pid, 0)
    if timed_out:
        return {"repo": False, "reason": f"git status took more than {TIMEOUT:.0f} s"}
    if os.waitstatus_to_exitcode(status) != 0:
        return {"repo": False, "reason": "not inside a git repository"}
    found = parse(b"".join(chunks))
    where = top(pending.root) if pending.root is not None and found["dirty"] else None
    if where is not None:
        found["dirty_blobs"] = blobs(where, found["dirty"][:MAX_BLOBS])
    return found


def snapshot(state_dir: str) -> dict[str, Any]:
    return finish(start(state_dir))


def parse(output: bytes) -> dict[str, Any]:
    """Read `git status --porcelain=v2 --branch -z`."""
    head: str | None = None
    branch: str | None = None
    dirty: list[str] = []
    skip = False
    for entry in output.decode("utf-8", "replace").split("\0"):
        if skip:  # the original path of a rename
            skip = False
            continue
        if entry.startswith("# branch.oid "):
            oid = entry[len("# branch.oid ") :]
            head = None if oid == "(initial)" else oid
        elif entry.startswith("# branch.head "):
            name = entry[len("# branch.head ") :]
            branch = None if name == "(detached)" else name
        elif entry[:2] in ("1 ", "u "):
            dirty.append(entry.split(" ", 8 if entry[0] == "1" else 10)[-1])
        elif entry.startswith("2 "):
            dirty.append(entry.split(" ", 9)[-1])
            skip = True
        elif entry.startswith("? "):
            dirty.append(entry[2:])
    out: dict[str, Any] = {"head": head, "branch": branch, "dirty": sorted(dirty)[:MAX_DIRTY]}
    if len(dirty) > MAX_DIRTY:
        out["dirty_count"] = len(dirty)
    return out


def parse_upstream(output: bytes) -> dict[str, Any]:
    """The upstream of `git status --porcelain=v2 --branch -z` (which parse() leaves out, so that a checkpoint's
    `git` does not change): {"upstream": its name or None, "ahead": commits HEAD has that it lacks, "behind": the
    reverse}; ahead and behind are None without an upstream, or when git did not count them (the upstream gone)."""
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    for entry in output.decode("utf-8", "replace").split("\0"):
        if entry.startswith("# branch.upstream "):
            upstream = entry[len("# branch.upstream ") :]
        elif entry.startswith("# branch.ab "):
            counts = entry[len("# branch.ab ") :].split(" ")
            if len(counts) == 2 and counts[0][1:].isdigit() and counts[1][1:].isdigit():
                ahead, behind = int(counts[0][1:]), int(counts[1][1:])
        elif not entry.startswith("#"):
            break  # the headers come first
    return {"upstream": upstream, "ahead": ahead, "behind": behind}


# ------------------------------------------------------------------------------------------ the dirty files' content


def top(state_dir: str) -> str | None:
    """The work tree's top folder, the one the paths git status names are relative to: store.local.place.repo's (GIT_DIR
    and GIT_WORK_TREE honoured as git honours them), found from the state folder's real path (git -C goes there);
    None outside a repository. A checkpoint and live-state both ask it here, so that both read the same files."""
    from rehydrate.store.local.place import repo

    found = repo(os.path.realpath(state_dir))
    return found.top if found is not None else None


def blobs(where: str, paths: list[str], *, sized: Collection[str] = (), budget: int = MAX_BLOB_TOTAL) -> dict[str, Any]:
    """Each path's entry as a record's `dirty_blobs` holds it, for the work tree whose top is `where`:
    - its git blob id (40 hex digits: sha1 of b"blob <size>\\0" and the bytes, what `git hash-object --no-filters`
      prints in a sha1 repository); a symbolic link's is the blob of its target's text, as git stores a link (the
      link is never followed);
    - DELETED when nothing is at the path;
    - {"size": n} for a regular file that is not read: larger than MAX_BLOB_BYTES, past `budget` bytes hashed in
      all (in path order), or named in `sized` (its size alone is wanted);
    - None when it cannot be told: a folder (an untracked folder, a submodule), a FIFO or device, unreadable.
    A path that is not safe to look at is left out, never read: one that is not plain (absolute, `..`, an empty or
    `.` part, a control character, a name git printed that is not UTF-8) or that leads through a symbolic link (a
    recorded path is untrusted: the WAL arrives by git pull, and a linked folder could lead out of the repository).
    At most MAX_BLOBS paths are looked at."""
    import stat

    folders: dict[str, bool] = {}
    found: dict[str, Any] = {}
    reads: list[tuple[str, str, os.stat_result]] = []
    total = 0
    for rel in paths[:MAX_BLOBS]:
        full = _inside(where, rel, folders)
        if full is None:
            continue
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            found[rel] = DELETED
            continue
        except (OSError, ValueError):
            found[rel] = None
            continue
        if stat.S_ISLNK(st.st_mode) and rel not in sized:
            reads.append((rel, full, st))
        elif not stat.S_ISREG(st.st_mode):
            found[rel] = None
        elif rel in sized or st.st_size > MAX_BLOB_BYTES or total + st.st_size > budget:
            found[rel] = {"size": st.st_size}
        else:
            total += st.st_size
            reads.append((rel, full, st))
    sha1 = _sha1(total)
    for rel, full, st in reads:
        found[rel] = _blob(full, st, sha1)
    return found


def _inside(where: str, rel: object, folders: dict[str, bool]) -> str | None:
    """The full path of rel in the work tree whose top is `where`, or None when it is not safe to look at (see
    blobs()). Each folder on the way is lstat'ed from the top down (folders: those already seen, path -> safe), so
    that nothing a symbolic link points to is ever looked at, not even its metadata; the last part may be a link
    (its text is hashed, never followed)."""
    import stat

    from rehydrate.store.evidence.inforce import safe_rel

    path = safe_rel(rel)
    if path is None or "\ufffd" in path:  # an undecodable name git printed: the file it names cannot be opened
        return None
    parts = path.split("/")
    folder = where
    for part in parts[:-1]:
        folder = os.path.join(folder, part)
        safe = folders.get(folder)
        if safe is None:
            try:
                safe = stat.S_ISDIR(os.lstat(folder).st_mode)  # a link (to a folder or not) is never gone through
            except (FileNotFoundError, NotADirectoryError):
                break  # nothing there: the path names no file now (deleted), and the lstat of it will say so
            except (OSError, ValueError):
                safe = False
            folders[folder] = safe
        if not safe:
            return None
    return os.path.join(where, *parts)


def _blob(full: str, st: os.stat_result, sha1: Callable[[bytes], Any]) -> str | None:
    """The git blob id of a symbolic link's text or of a regular file's bytes (st: its lstat); None when it cannot
    be read, is no longer that file, or changed size while it was read."""
    import stat

    if stat.S_ISLNK(st.st_mode):
        try:
            text = os.readlink(os.fsencode(full))
        except (OSError, ValueError):
            return None
        return str(sha1(b"blob %d\0%s" % (len(text), text)).hexdigest())
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(full, flags)  # never a FIFO's wait, never a link swapped in since the lstat
    except (OSError, ValueError):
        return None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino, now.st_size) != (st.st_dev, st.st_ino, st.st_size):
            return None  # another file, or one being written: its size was what the bounds were kept with
        size = now.st_size
        h = sha1(b"blob %d\0" % size)
        left = size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                return None  # shorter than it was: being written
            h.update(chunk)
            left -= len(chunk)
        if os.read(fd, 1):
            return None  # longer than it was: being written
        return str(h.hexdigest())
    except OSError:
        return None
    finally:
        os.close(fd)


def _sha1(total: int) -> Callable[[bytes], Any]:
    """sha1: OpenSSL's (hashlib) once the bytes to hash pay for its import (store/wal/digest.py's BIG) or it is loaded
    anyway; else the built-in module, so that a checkpoint with a few small dirty files loads no OpenSSL."""
    import sys

    from rehydrate.store.wal.digest import BIG

    if total < BIG and "hashlib" not in sys.modules:
        try:
            from _sha1 import sha1 as builtin  # type: ignore[import-not-found,unused-ignore]

            return builtin  # type: ignore[no-any-return,unused-ignore]
        except ImportError:  # pragma: no cover - a build without the built-in module
            pass
    from hashlib import sha1

    return sha1
