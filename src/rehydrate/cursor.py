"""Pipelines: the cursor invariant for batch work that processes records one at a time.

The output is a JSONL file whose records carry their index (under `index`, or another key); a progress file holds the
cursor, the index of the next record to process. The output line is written (one write) and synced first; the cursor
is advanced after. The output is the truth: on opening, the index of the last complete output record must be
`cursor - 1`; otherwise the cursor is moved to match the output and the discrepancy is reported. A torn last line is
cut off (its bytes kept in a `.broken` file) and reported. Indexes that repeat, go backwards or skip are named.

Because the cursor can always be derived from the output, the progress file is rewritten in place without a sync:
a durable commit costs one sync (the output line's). Batch mode writes and syncs every N records or T milliseconds
instead, so that up to that many records can be lost by a crash or a power failure, and are then redone.

One process at a time: an open pipeline holds an exclusive lock (on `PROGRESS.lock`, beside the progress file) until
it is closed, and a second open, or a repair, is refused at once and names the holder. A pipeline that is dropped
without `close()` releases its descriptors and its lock as a killed process would (in batch mode, the records since
the last sync are redone by the next open).

    with Pipeline.open("out.jsonl", "progress.json") as p:
        for index, item in p.pending(items):
            p.commit({"summary": summarize(item)})

All the I/O goes through `fsio` (reads never follow a final symlink and never block; writes through `fsio.sys`, the
crash-test seam); a failed system call becomes a RehydrateError that says what to do, never a bare OSError.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time

from rehydrate import safejson
from rehydrate.errors import RehydrateError, UnsafeFile
from rehydrate.store import fsio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

PROGRESS_WIDTH = 40  # the progress file is rewritten in place at one fixed width
QUICK_TAIL_BYTES = 4 << 20  # the brief's quick check reads at most this much of each output's end
MAX_CHECKED = 20  # the brief checks at most this many registered pipelines
MAX_NAME = 80
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class Problem:
    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        self.code = code
        self.message = message
        self.line = line

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line}


class Check:
    """What the output and the progress file say, and how they disagree."""

    def __init__(self) -> None:
        self.cursor: int | None = None  # what the progress file says (None: missing or unreadable)
        self.last_index: int | None = None  # the last complete output record's index
        self.records = 0
        self.torn = b""
        self.torn_offset = 0
        self.problems: list[Problem] = []
        self.unchecked: str | None = None  # why the cursor could not be compared (the quick check only)

    @property
    def expected(self) -> int:
        """The cursor the output calls for."""
        return 0 if self.last_index is None else self.last_index + 1


# ---------------------------------------------------------------------------------------------------- I/O errors


def _os_error(path: str, doing: str, e: OSError) -> RehydrateError:
    """An OSError on a pipeline file, as a message that says what to do."""
    if e.errno == errno.ELOOP:
        return UnsafeFile(
            f"{path} is a symbolic link; a pipeline only reads and writes regular files",
            "point the pipeline at the real file, or move the link away",
        )
    if e.errno == errno.ENOENT:
        folder = os.path.dirname(os.path.abspath(path))
        return RehydrateError(
            f"cannot {doing} {path}: the folder {folder} does not exist",
            "create the folder first, or check the path",
        )
    if e.errno == errno.ENOTDIR:
        return RehydrateError(f"cannot {doing} {path}: a part of its path is not a folder", "check the path")
    if e.errno in (errno.EACCES, errno.EPERM):
        return RehydrateError(f"cannot {doing} {path}: permission denied", "check the permissions")
    return RehydrateError(
        f"cannot {doing} {path}: {e.strerror or e}",
        "check the disk (space, permissions, a read-only mount), then open the pipeline again: its start-up check "
        "cuts a torn last line and redoes the records that did not reach the disk",
    )


class _io:
    """An OSError raised in the block, as a RehydrateError (a class, not contextlib: the hook path stays light)."""

    def __init__(self, path: str, doing: str) -> None:
        self.path = path
        self.doing = doing

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: object) -> None:
        if isinstance(e, OSError):
            raise _os_error(self.path, self.doing, e) from None


def _lstat(path: str) -> os.stat_result | None:
    with _io(path, "look at"):
        return fsio.lstat(path)


def _not_regular(path: str, mode: int) -> UnsafeFile:
    kind = (
        "a symbolic link"
        if stat.S_ISLNK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return UnsafeFile(
        f"{path} is {kind}; a pipeline only reads and writes regular files",
        "point the pipeline at a regular file, or move this one away",
    )


def _regular(path: str) -> bool:
    """True for a regular file, False if absent; UnsafeFile for anything else, which is never opened (a FIFO would
    block, a device could do anything)."""
    st = _lstat(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    return st is not None


def _parse_index(raw: bytes, key: str) -> int | None:
    """The record's integer index, or None if the line is not a JSON object that has one."""
    try:
        rec = safejson.loads(raw)  # a thousand nested `[` are a bad record, never a RecursionError
    except ValueError:
        return None
    index = rec.get(key) if isinstance(rec, dict) else None
    return index if isinstance(index, int) and not isinstance(index, bool) else None


class _Sequence:
    """Names each index that repeats, goes backwards or skips, and each line that is not a record."""

    def __init__(self, key: str, c: Check) -> None:
        self.key = key
        self.c = c
        self.previous: int | None = None

    def line(self, raw: bytes, number: int | None) -> None:
        index = _parse_index(raw, self.key)
        if index is None:
            self.c.problems.append(Problem("bad-record", f"not a JSON object with an integer {self.key!r}", number))
            return
        previous = self.previous
        expected = 0 if previous is None else previous + 1
        if index != expected and (previous is not None or number is not None):  # the quick check has no line 1
            if previous is not None and index <= previous:
                code = "index-repeats" if index == previous else "index-backwards"
            else:
                code = "index-skips"
            self.c.problems.append(Problem(code, f"index {index} where {expected} was expected", number))
        self.previous = index if previous is None else max(previous, index)
        self.c.records += 1


# ---------------------------------------------------------------------------------------------------- checks


def check(output: str, progress: str, key: str = "index") -> Check:
    """Read both files (the output whole, line by line) and name every discrepancy. Writes nothing."""
    c = Check()
    _read_output(output, key, c)
    _read_progress(progress, c)
    _compare(c)
    return c


def quick_check(output: str, progress: str, key: str = "index") -> Check:
    """check() from the output's last lines only: the cursor against the last complete record, and a torn tail.

    Its cost does not grow with the output (the brief runs it); the full content check is check()'s. When the last
    record does not fit in QUICK_TAIL_BYTES, it does not guess: `unchecked` says why the cursor was not compared.
    """
    c = Check()
    try:
        _regular(output)
        _, buf, at_start = fsio.read_tail(output, 2, QUICK_TAIL_BYTES)
    except FileNotFoundError:
        buf, at_start = b"", True
    except RehydrateError as e:
        c.problems.append(Problem("output-unreadable", e.message))
        return c
    except OSError as e:
        c.problems.append(Problem("output-unreadable", _os_error(output, "read", e).message))
        return c
    pieces = buf.split(b"\n")
    complete = pieces[:-1] if at_start else pieces[1:-1]  # without at_start, the first piece is a line's end
    if pieces[-1]:
        c.torn = pieces[-1]
        size = f"{len(c.torn):,} bytes" if at_start or len(pieces) > 1 else f"more than {len(c.torn):,} bytes"
        c.problems.append(Problem("torn-tail", f"the last line ({size}) has no newline"))
    seq = _Sequence(key, c)
    for raw in complete:
        seq.line(raw, None)
    c.records = 0  # counting the records would mean reading the whole output
    if seq.previous is not None:
        c.last_index = seq.previous
    elif not at_start:
        window = f"the {QUICK_TAIL_BYTES >> 20} MiB the quick check reads"
        if complete:
            c.unchecked = f"no record with an integer {key!r} in {window}"
        elif c.torn and len(pieces) == 1:
            c.unchecked = f"the torn last line alone is larger than {window}"
        else:
            c.unchecked = f"the last record is larger than {window}"
    _read_progress(progress, c)
    if c.unchecked is None:
        _compare(c)
    return c


def _compare(c: Check) -> None:
    if c.cursor is not None and c.cursor != c.expected:
        way = "ahead of" if c.cursor > c.expected else "behind"
        c.problems.append(
            Problem(
                "cursor-ahead" if c.cursor > c.expected else "cursor-behind",
                f"cursor {c.cursor} is {abs(c.cursor - c.expected)} {way} the output "
                f"(its last index is {c.last_index}): the output calls for {c.expected}",
            )
        )


def _read_output(output: str, key: str, c: Check) -> None:
    _regular(output)
    fd = fsio.open_read(output)  # no-follow, non-blocking, regular files only
    if fd is None:
        return
    seq = _Sequence(key, c)
    offset = 0
    with _io(output, "read"), open(fd, "rb", closefd=True) as f:  # the descriptor just checked, never a reopen
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                c.torn, c.torn_offset = raw, offset
                c.problems.append(Problem("torn-tail", f"the last line ({len(raw):,} bytes) has no newline", number))
                break
            offset += len(raw)
            seq.line(raw, number)
    c.last_index = seq.previous


def _read_progress(progress: str, c: Check) -> None:
    try:
        _regular(progress)
        data = fsio.read_bytes(progress, 1 << 20)
    except RehydrateError as e:
        c.problems.append(Problem("progress-unreadable", e.message))
        return
    except OSError as e:
        c.problems.append(Problem("progress-unreadable", _os_error(progress, "read", e).message))
        return
    if data is None:
        if c.records or c.torn or c.last_index is not None or c.unchecked is not None:  # it has started
            c.problems.append(
                Problem("progress-missing", "the progress file is missing; the cursor comes from the output")
            )
        else:
            c.cursor = 0
        return
    try:
        value = safejson.loads(data) if data.strip() else None
        cursor = value.get("cursor") if isinstance(value, dict) else None
    except ValueError:
        cursor = None
    if not isinstance(cursor, int) or isinstance(cursor, bool) or cursor < 0:
        what = "empty" if not data.strip() else "not a JSON object with a cursor >= 0"
        c.problems.append(
            Problem("progress-unreadable", f"the progress file is {what}; the cursor comes from the output")
        )
        return
    c.cursor = cursor


CONTENT = ("bad-record", "index-repeats", "index-backwards", "index-skips")


# ---------------------------------------------------------------------------------------------------- repair


def repair(output: str, progress: str, key: str = "index") -> tuple[Check, list[str]]:
    """The safe repairs: cut a torn last line (kept in a .broken file), set the cursor from the output.

    Damage in the records themselves (an index that repeats, goes backwards or skips) is not repaired: it is refused
    with its line, since the output cannot say which record is right. Refused too while the pipeline is open in
    another process.
    """
    output, progress = os.path.abspath(output), os.path.abspath(progress)
    lock = _Lock(output, progress)
    try:
        return _repair(output, progress, key)
    finally:
        lock.release()


def _repair(output: str, progress: str, key: str) -> tuple[Check, list[str]]:
    c = check(output, progress, key)
    damaged = [p for p in c.problems if p.code in CONTENT]
    if damaged:
        p = damaged[0]
        raise RehydrateError(
            f"{output} line {p.line}: {p.message} [{p.code}]",
            "the output's records are damaged, not just out of step: fix or restore the file by hand",
        )
    done = []
    if c.torn:
        broken = output + ".broken"
        n = 2
        while _lstat(broken) is not None:
            broken = f"{output}.broken.{n}"
            n += 1
        fsio.replace(broken, c.torn, "cursor.broken")
        fsio.truncate(output, c.torn_offset, "cursor.truncate")
        done.append(f"cut a torn last line ({len(c.torn):,} bytes) off {output}; kept in {broken}")
    if c.cursor != c.expected:
        _write_progress(progress, c.expected)
        done.append(
            f"set the cursor of {progress} to {c.expected}" + (f" (it was {c.cursor})" if c.cursor is not None else "")
        )
    return c, done


def _write_progress(progress: str, cursor: int) -> None:
    """Rewrite the progress file in place, at one fixed width, without a sync: the output can always redo it.
    (A write helper fsio does not have: it goes through fsio.sys, so the crash simulator sees it.)"""
    data = json.dumps({"cursor": cursor}).encode().ljust(PROGRESS_WIDTH - 1) + b"\n"
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK
    _regular(progress)
    with _io(progress, "write"):
        fd = fsio.sys.open(progress, flags)
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise _not_regular(progress, mode)
            fsio.sys.write(fd, data)
            if os.fstat(fd).st_size > len(data):
                fsio.sys.ftruncate(fd, len(data))
        finally:
            fsio.sys.close(fd)


# ---------------------------------------------------------------------------------------------------- the lock


class _Lock:
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
            fd = self._open()
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise RehydrateError(
                        f"the pipeline {output} is already open {self._holder(fd)}",
                        "let it finish or stop it first: two writers on one pipeline would each write every index",
                    ) from None
                except OSError as e:
                    raise _os_error(self.path, "lock", e) from None
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

    def _open(self) -> int:
        _regular(self.path)
        with _io(self.path, "create the lock file"):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK, 0o644)
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise _not_regular(self.path, mode)
        return fd

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


# ---------------------------------------------------------------------------------------------------- registry

REGISTRY = "pipelines.json"  # in the state folder: {name: {"output", "progress", "key", "total"}}


def registry(state_root: str) -> dict[str, Any]:
    """pipelines.json as a dict ({} if absent); RehydrateError if it cannot be read or is not a JSON object."""
    path = os.path.join(state_root, REGISTRY)
    with _io(path, "read"):
        data = fsio.read_bytes(path, 1 << 20)
    if not data:
        return {}
    try:
        value = safejson.loads(data)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise RehydrateError(
            f"{path} is not a JSON object of pipelines",
            "fix it by hand or restore it from git (`cursor register` will not overwrite it)",
        )
    return value


def _inside(project: str, value: object) -> str | None:
    """The path for a registered file, if it resolves (symlinks and all) inside the project; None otherwise.
    pipelines.json arrives by git pull: an absolute path, a `..` or a link out of the project is not followed."""
    if not isinstance(value, str) or not value or "\0" in value:
        return None
    path = os.path.join(project, value)
    root = os.path.realpath(project)
    real = os.path.realpath(path)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return path


def register(
    state_root: str, name: str, output: str, progress: str, key: str = "index", total: int | None = None
) -> None:
    """Register a pipeline in the state folder, so that the brief shows it and the recovery checks verify it.

    Paths are kept relative to the state folder's parent (the project), and must be inside it: the brief reads
    nothing outside the project. Done under the state's lock, reading the registry again inside it, so that
    parallel registrations all stay.
    """
    project = os.path.dirname(os.path.abspath(state_root))
    if not name or name != clean_name(name):
        raise RehydrateError(
            f"the pipeline name {name!r} is empty, too long or holds control characters",
            f"use a short printable name (at most {MAX_NAME} characters)",
        )
    if not key:
        raise RehydrateError("the index key is empty", "name the field that holds each record's index")
    if total is not None and not 0 <= total < 10**15:
        raise RehydrateError(f"the total {total} is out of range", "give the number of items, or leave it out")
    paths = {}
    for what, path in (("output", output), ("progress", progress)):
        rel = os.path.relpath(os.path.abspath(path), project)
        if _inside(project, rel) is None:
            raise RehydrateError(
                f"the {what} file {path} is outside the project {project}",
                "the brief reads only files inside the project: keep the pipeline's files inside it, or check it "
                "with `rehydrate cursor verify OUTPUT PROGRESS`",
            )
        paths[what] = rel
    with fsio.locked(state_root):
        entries = registry(state_root)
        entries[name] = {**paths, "key": key, "total": total}
        fsio.replace(
            os.path.join(state_root, REGISTRY),
            (json.dumps(entries, indent=2, sort_keys=True) + "\n").encode(),
            "cursor.register",
        )


def clean_name(text: str) -> str:
    """A name from pipelines.json as shown: printable characters only, at most MAX_NAME."""
    return "".join(ch for ch in text if ch.isprintable())[:MAX_NAME]


def summary(state_root: str, name: str, entry: dict[str, Any]) -> tuple[str, str]:
    """(status, one line) for the brief: ("degraded", "pass B: cursor 381 of 1,200; output ends at 379; ...").

    The status is "ok", "degraded", or "skipped" when the quick check could not look (the last record is too large
    for it, or a registered path leaves the project): never a guess."""
    project = os.path.dirname(os.path.abspath(state_root))
    label = clean_name(str(name)) or "?"
    output, progress = _inside(project, entry.get("output")), _inside(project, entry.get("progress"))
    if output is None or progress is None:
        what = "output" if output is None else "progress file"
        return "skipped", (
            f"{label}: not checked: the path pipelines.json gives for its {what} leads outside the project, "
            "and the brief reads nothing outside it"
        )
    key = entry.get("key")
    c = quick_check(output, progress, key if isinstance(key, str) and key else "index")
    total = entry.get("total")
    of = f" of {total:,}" if isinstance(total, int) and not isinstance(total, bool) and 0 <= total < 10**15 else ""
    if c.unchecked is not None:
        ends = "output end not read"
    else:
        ends = "output is empty" if c.last_index is None else f"output ends at {c.last_index:,}"
    text = f"{label}: cursor {c.cursor if c.cursor is not None else '?'}{of}; {ends}"
    if c.problems:
        text += "; " + "; ".join(p.message for p in c.problems[:3])
    if c.unchecked is not None:
        text += f"; the cursor was not compared: {c.unchecked}"
    text = text.replace(os.path.join(project, ""), "")  # paths as registered: relative to the project
    status = "degraded" if c.problems else "skipped" if c.unchecked is not None else "ok"
    return status, text


# ---------------------------------------------------------------------------------------------------- Pipeline


class Pipeline:
    """An open pipeline: commit one record at a time; the cursor follows the output."""

    _fd: int | None = None  # class defaults: __del__ may run on an instance whose __init__ never finished
    _lock: _Lock | None = None

    def __init__(self, output: str, progress: str, key: str, batch: int, batch_ms: float | None) -> None:
        self.output = output
        self.progress = progress
        self.key = key
        self.batch = batch
        self.batch_ms = batch_ms
        self.cursor = 0
        self.report: list[str] = []  # what opening found and repaired
        self._fd = None
        self._lock = None
        self._buffer: list[bytes] = []  # lines committed but not yet written (batch mode)
        self._unsynced = 0
        self._last_sync = time.monotonic()

    @classmethod
    def open(
        cls,
        output: str | os.PathLike[str],
        progress: str | os.PathLike[str],
        *,
        key: str = "index",
        batch: int = 1,
        batch_ms: float | None = None,
    ) -> Pipeline:
        """Open (or start) a pipeline; the start-up check runs first and sets the cursor from the output.

        batch=1 (the default) writes and syncs each record before commit returns: no committed record is ever lost.
        With batch=N and/or batch_ms=T, records are kept in memory and written and synced together every N records
        or once T milliseconds have passed since the last sync (checked at each commit): a crash, a kill or a power
        failure can lose the records since the last sync, and the next open redoes them.

        Only one process has a pipeline open at a time: RehydrateError at once if another has it.
        """
        if batch < 1:
            raise RehydrateError("batch must be at least 1")
        p = cls(os.fspath(output), os.fspath(progress), key, batch, batch_ms)
        out, prog = os.path.abspath(p.output), os.path.abspath(p.progress)
        p._lock = _Lock(out, prog)
        try:
            c, done = _repair(out, prog, key)
            p.report = [x.message for x in c.problems if x.code not in CONTENT] + done
            p.cursor = c.expected
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _CLOEXEC | _NONBLOCK
            created = not _regular(out)
            with _io(out, "open"):
                p._fd = fsio.sys.open(out, flags)
            mode = os.fstat(p._fd).st_mode
            if not stat.S_ISREG(mode):
                raise _not_regular(out, mode)
            if created:  # a new output file: its folder entry must be durable too
                fsio.fsync_dir(os.path.dirname(out), "cursor.create")
        except BaseException:
            p._release()
            raise
        return p

    def pending(self, items: Sequence[T]) -> Iterator[tuple[int, T]]:
        """(index, item) for each item from the cursor on; commit each before asking for the next."""
        while self.cursor < len(items):
            index = self.cursor
            yield index, items[index]
            if self.cursor == index:
                raise RehydrateError(f"item {index} was not committed: commit each item before asking for the next")

    def commit(self, record: dict[str, Any]) -> int:
        """Write the record at the cursor's index: the output line first, then the cursor. Returns the index."""
        if self._fd is None:
            raise RehydrateError("the pipeline is closed")
        index = self.cursor
        try:
            text = json.dumps({**record, self.key: index}, ensure_ascii=False, separators=(",", ":"))
        except RecursionError:
            raise safejson.TooDeep(f"record {index} is nested too deeply to write as JSON") from None
        self._buffer.append(text.encode() + b"\n")
        self._unsynced += 1
        self.cursor = index + 1
        if self._unsynced >= self.batch or (
            self.batch_ms is not None and (time.monotonic() - self._last_sync) * 1000 >= self.batch_ms
        ):
            self.sync()
        return index

    def sync(self) -> None:
        """Make every written record durable, then advance the progress file to match.

        If the lock file was removed or replaced (another process may be writing the same output), or a write fails,
        nothing more is written: the pipeline closes itself and raises; the next open redoes what was lost."""
        if self._fd is None or not self._unsynced:
            return
        if self._lock is not None and not self._lock.still_held():
            self._release()
            raise RehydrateError(
                f"the lock file of the pipeline {self.output} was removed or replaced while this process held it; "
                "it stopped before writing, since another process may be writing the same output",
                f"make sure only one process runs it, then run `rehydrate cursor verify {self.output} {self.progress}`",
            )
        try:
            with _io(self.output, "write"):
                view = memoryview(b"".join(self._buffer))
                while view:  # one write in practice; a short write is finished, never left torn
                    view = view[fsio.sys.write(self._fd, bytes(view)) :]
                fsio.sys.fsync(self._fd, "cursor.output")
            self._buffer.clear()
            self._unsynced = 0
            self._last_sync = time.monotonic()
            _write_progress(self.progress, self.cursor)
        except BaseException:
            self._release()  # a half-written batch is cut or redone by the next open, never appended to
            raise

    def close(self) -> None:
        try:
            if self._fd is not None:
                self.sync()
        finally:
            self._release()

    def _release(self) -> None:
        """Close the output and release the lock without writing anything (what a killed process leaves)."""
        fd, self._fd = self._fd, None
        lock, self._lock = self._lock, None
        try:
            if fd is not None:
                fsio.sys.close(fd)
        finally:
            if lock is not None:
                lock.release()

    def __del__(self) -> None:
        try:
            self._release()
        except Exception:
            pass

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
