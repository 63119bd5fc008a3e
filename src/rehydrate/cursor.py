"""Pipelines: the cursor invariant for batch work that processes records one at a time.

The output is a JSONL file whose records carry their index (under `index`, or another key); a progress file holds the
cursor, the index of the next record to process. The output line is written (one write) and synced first; the cursor
is advanced after. The output is the truth: on opening, the index of the last complete output record must be
`cursor - 1`; otherwise the cursor is moved to match the output and the discrepancy is reported. A torn last line is
cut off (its bytes kept in a `.broken` file) and reported. Indexes that repeat, go backwards or skip are named.

Because the cursor can always be derived from the output, the progress file is rewritten in place without a sync:
a durable commit costs one sync (the output line's). Batch mode writes and syncs every N records or T milliseconds
instead, so that up to that many records can be lost by a crash or a power failure, and are then redone.

    with Pipeline.open("out.jsonl", "progress.json") as p:
        for index, item in p.pending(items):
            p.commit({"summary": summarize(item)})
"""

from __future__ import annotations

import json
import os
import time

from rehydrate import fsio
from rehydrate.errors import RehydrateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

PROGRESS_WIDTH = 40  # the progress file is rewritten in place at one fixed width


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

    @property
    def expected(self) -> int:
        """The cursor the output calls for."""
        return 0 if self.last_index is None else self.last_index + 1


def check(output: str, progress: str, key: str = "index") -> Check:
    """Read both files (the output whole, line by line) and name every discrepancy. Writes nothing."""
    c = Check()
    _read_output(output, key, c)
    _read_progress(progress, c)
    _compare(c)
    return c


def quick_check(output: str, progress: str, key: str = "index") -> Check:
    """check() from the output's last lines only: the cursor against the last complete record, and a torn tail.
    Its cost does not grow with the output (the brief runs it); the full content check is check()'s."""
    c = Check()
    try:
        _, buf, at_start = fsio.read_tail(output, 2, 16 << 20)
    except FileNotFoundError:
        buf, at_start = b"", True
    except RehydrateError as e:
        c.problems.append(Problem("output-unreadable", e.message))
        return c
    pieces = buf.split(b"\n")
    if pieces[-1]:
        c.torn = pieces[-1]
        c.problems.append(Problem("torn-tail", f"the last line ({len(pieces[-1])} bytes) has no newline"))
    complete = [p for p in (pieces[:-1] if at_start else pieces[1:-1]) if p.strip()]
    if complete:
        try:
            rec = json.loads(complete[-1])
            index = rec.get(key) if isinstance(rec, dict) else None
        except ValueError:
            index = None
        if isinstance(index, int) and not isinstance(index, bool):
            c.last_index = index  # records stays 0: counting them would mean reading it all
        else:
            c.problems.append(Problem("bad-record", f"the last record has no integer {key!r}"))
    _read_progress(progress, c)
    _compare(c)
    return c


def _compare(c: Check) -> None:
    if c.cursor is not None and c.cursor != c.expected:
        if c.cursor > c.expected:
            c.problems.append(
                Problem(
                    "cursor-ahead",
                    f"cursor {c.cursor} is {c.cursor - c.expected} ahead of the output "
                    f"(its last index is {c.last_index}); moved back to {c.expected}",
                )
            )
        else:
            c.problems.append(
                Problem(
                    "cursor-behind",
                    f"cursor {c.cursor} is {c.expected - c.cursor} behind the output "
                    f"(its last index is {c.last_index}); moved up to {c.expected}",
                )
            )


def _read_output(output: str, key: str, c: Check) -> None:
    fd = fsio.open_read(output)
    if fd is None:
        return
    os.close(fd)
    offset = 0
    previous: int | None = None
    with open(output, "rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                c.torn, c.torn_offset = raw, offset
                c.problems.append(Problem("torn-tail", f"the last line ({len(raw)} bytes) has no newline", number))
                break
            offset += len(raw)
            try:
                rec = json.loads(raw)
                index = rec[key] if isinstance(rec, dict) else None
            except (ValueError, KeyError):
                index = None
            if not isinstance(index, int) or isinstance(index, bool):
                c.problems.append(Problem("bad-record", f"not a JSON object with an integer {key!r}", number))
                continue
            expected = 0 if previous is None else previous + 1
            if index != expected:
                if previous is not None and index <= previous:
                    code = "index-repeats" if index == previous else "index-backwards"
                else:
                    code = "index-skips"
                c.problems.append(Problem(code, f"index {index} where {expected} was expected", number))
            previous = index if previous is None else max(previous, index)
            c.records += 1
    c.last_index = previous


def _read_progress(progress: str, c: Check) -> None:
    try:
        data = fsio.read_bytes(progress, 1 << 20)
    except RehydrateError as e:
        c.problems.append(Problem("progress-unreadable", e.message))
        return
    if data is None:
        if c.records or c.torn:  # a pipeline that never started has neither file: nothing to say
            c.problems.append(
                Problem("progress-missing", "the progress file is missing; the cursor comes from the output")
            )
        else:
            c.cursor = 0
        return
    try:
        value = json.loads(data) if data.strip() else None
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


def repair(output: str, progress: str, key: str = "index") -> tuple[Check, list[str]]:
    """The safe repairs: cut a torn last line (kept in a .broken file), set the cursor from the output.

    Damage in the records themselves (an index that repeats, goes backwards or skips) is not repaired: it is refused
    with its line, since the output cannot say which record is right.
    """
    output, progress = os.path.abspath(output), os.path.abspath(progress)
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
        while os.path.lexists(broken):
            broken = f"{output}.broken.{n}"
            n += 1
        fsio.replace(broken, c.torn, "cursor.broken")
        fsio.truncate(output, c.torn_offset, "cursor.truncate")
        done.append(f"cut a torn last line ({len(c.torn)} bytes) off {output}; kept in {broken}")
    if c.cursor != c.expected:
        _write_progress(progress, c.expected)
        done.append(
            f"set the cursor of {progress} to {c.expected}" + (f" (it was {c.cursor})" if c.cursor is not None else "")
        )
    return c, done


def _write_progress(progress: str, cursor: int) -> None:
    """Rewrite the progress file in place, at one fixed width, without a sync: the output can always redo it."""
    data = json.dumps({"cursor": cursor}).encode().ljust(PROGRESS_WIDTH - 1) + b"\n"
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    if fsio.lstat(progress) is not None:
        fsio.check_regular(progress)
    fd = fsio.sys.open(progress, flags)
    try:
        fsio.sys.write(fd, data)
        if os.fstat(fd).st_size > len(data):
            fsio.sys.ftruncate(fd, len(data))
    finally:
        fsio.sys.close(fd)


REGISTRY = "pipelines.json"  # in the state folder: {name: {"output", "progress", "key", "total"}}


def registered(state_root: str) -> dict[str, dict[str, Any]]:
    try:
        data = fsio.read_bytes(os.path.join(state_root, REGISTRY), 1 << 20)
        value = json.loads(data) if data else {}
    except (RehydrateError, ValueError):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, dict)} if isinstance(value, dict) else {}


def register(
    state_root: str, name: str, output: str, progress: str, key: str = "index", total: int | None = None
) -> None:
    """Register a pipeline in the state folder, so that the brief shows it and the recovery checks verify it.
    Paths are kept relative to the state folder's parent (the project)."""
    project = os.path.dirname(os.path.abspath(state_root))
    entries = registered(state_root)
    entries[name] = {
        "output": os.path.relpath(os.path.abspath(output), project),
        "progress": os.path.relpath(os.path.abspath(progress), project),
        "key": key,
        "total": total,
    }
    fsio.replace(
        os.path.join(state_root, REGISTRY),
        (json.dumps(entries, indent=2, sort_keys=True) + "\n").encode(),
        "cursor.register",
    )


def summary(state_root: str, name: str, entry: dict[str, Any]) -> tuple[bool, str]:
    """One line for the brief: "pass B: cursor 381 of 1,200; output ends at 379; cursor would roll back to 380"."""
    project = os.path.dirname(os.path.abspath(state_root))
    c = quick_check(
        os.path.join(project, str(entry.get("output"))),
        os.path.join(project, str(entry.get("progress"))),
        str(entry.get("key") or "index"),
    )
    total = entry.get("total")
    of = f" of {total:,}" if isinstance(total, int) else ""
    ends = "output is empty" if c.last_index is None else f"output ends at {c.last_index:,}"
    text = f"{name}: cursor {c.cursor if c.cursor is not None else '?'}{of}; {ends}"
    if c.problems:
        text += "; " + "; ".join(p.message for p in c.problems[:3])
    return not c.problems, text


class Pipeline:
    """An open pipeline: commit one record at a time; the cursor follows the output."""

    def __init__(self, output: str, progress: str, key: str, batch: int, batch_ms: float | None) -> None:
        self.output = output
        self.progress = progress
        self.key = key
        self.batch = batch
        self.batch_ms = batch_ms
        self.cursor = 0
        self.report: list[str] = []  # what opening found and repaired
        self._fd: int | None = None
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
        """
        if batch < 1:
            raise RehydrateError("batch must be at least 1")
        p = cls(os.fspath(output), os.fspath(progress), key, batch, batch_ms)
        c, done = repair(p.output, p.progress, key)
        p.report = [x.message for x in c.problems if x.code not in CONTENT] + done
        p.cursor = c.expected
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        if fsio.lstat(p.output) is not None:
            fsio.check_regular(p.output)
        created = fsio.lstat(p.output) is None
        p._fd = fsio.sys.open(p.output, flags)
        if created:  # a new output file: its folder entry must be durable too
            fsio.fsync_dir(os.path.dirname(os.path.abspath(p.output)), "cursor.create")
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
        line = json.dumps({**record, self.key: index}, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        self._buffer.append(line)
        self._unsynced += 1
        self.cursor = index + 1
        if self._unsynced >= self.batch or (
            self.batch_ms is not None and (time.monotonic() - self._last_sync) * 1000 >= self.batch_ms
        ):
            self.sync()
        return index

    def sync(self) -> None:
        """Make every written record durable, then advance the progress file to match."""
        if self._fd is not None and self._unsynced:
            view = memoryview(b"".join(self._buffer))
            self._buffer.clear()
            while view:  # one write in practice; a short write is finished, never left torn
                view = view[fsio.sys.write(self._fd, bytes(view)) :]
            fsio.sys.fsync(self._fd, "cursor.output")
            self._unsynced = 0
            self._last_sync = time.monotonic()
            _write_progress(self.progress, self.cursor)

    def close(self) -> None:
        if self._fd is not None:
            self.sync()
            fsio.sys.close(self._fd)
            self._fd = None

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
