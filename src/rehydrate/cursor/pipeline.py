"""An open pipeline (commit, sync, close) and the repairs its start-up check makes."""

from __future__ import annotations

import json
import os
import time
from json import encoder as _json_encoder

from rehydrate import safejson
from rehydrate.cursor.lock import PipelineLock
from rehydrate.cursor.verify import CONTENT, WORDS, CursorReport, check
from rehydrate.errors import RehydrateError
from rehydrate.store import fsio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

PROGRESS_WIDTH = 40  # the progress file is rewritten in place at one fixed width
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps's output, built once


def repair(output: str, progress: str, key: str = "index") -> tuple[CursorReport, list[str]]:
    """The safe repairs: cut a torn last line (kept in a .broken file), set the cursor from the output.

    Damage in the records themselves (an index that repeats, goes backwards or skips) is not repaired: it is refused
    with its line, since the output cannot say which record is right. Refused too while the pipeline is open in
    another process.
    """
    output, progress = os.path.abspath(output), os.path.abspath(progress)
    lock = PipelineLock(output, progress)
    try:
        return _repair(output, progress, key)
    finally:
        lock.release()


def _repair(output: str, progress: str, key: str) -> tuple[CursorReport, list[str]]:
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
        broken = fsio.cut_tail(output, c.torn_offset, c.torn, "cursor")
        done.append(f"cut a torn last line ({len(c.torn):,} bytes) off {output}; kept in {broken}")
    if c.cursor != c.expected:
        _write_progress(progress, c.expected)
        done.append(
            f"set the cursor of {progress} to {c.expected}" + (f" (it was {c.cursor})" if c.cursor is not None else "")
        )
    return c, done


def _progress_data(cursor: int) -> bytes:
    return (b'{"cursor": %d}' % cursor).ljust(PROGRESS_WIDTH - 1) + b"\n"  # json.dumps({"cursor": cursor})'s bytes


def _write_progress(progress: str, cursor: int) -> None:
    """Rewrite the progress file in place, at one fixed width, without a sync: the output can always redo it."""
    fsio.overwrite(progress, _progress_data(cursor), WORDS)


def _c_encoder(markers: dict[int, Any]) -> Callable[[Any, int], Any] | None:
    """The standard json module's C encoder for _ENCODER, made once: json.dumps makes one per call for these options,
    over a third of a batched commit's time. markers is its circular-reference check (cleared after it raises)."""
    make = getattr(_json_encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - a Python without the C accelerator
        return None
    e = _ENCODER  # the arguments of JSONEncoder.iterencode (Python 3.11 to 3.13)
    made: Callable[[Any, int], Any] = make(
        markers,
        e.default,
        _json_encoder.encode_basestring,
        e.indent,
        e.key_separator,
        e.item_separator,
        e.sort_keys,
        e.skipkeys,
        e.allow_nan,
    )
    return made


class Pipeline:
    """An open pipeline: commit one record at a time; the cursor follows the output."""

    _fd: int | None = None  # class defaults: __del__ may run on an instance whose __init__ never finished
    _progress_fd: int | None = None
    _lock: PipelineLock | None = None

    def __init__(self, output: str, progress: str, key: str, batch: int, batch_ms: float | None) -> None:
        self.output = output
        self.progress = progress
        self.key = key
        self.batch = batch
        self.batch_ms = batch_ms
        self.cursor = 0
        self.report: list[str] = []  # what opening found and repaired
        self._fd = None
        self._progress_fd = None  # kept open: the cursor is rewritten in place with one pwrite
        self._lock = None
        self._buffer: list[bytes] = []  # lines committed but not yet written (batch mode)
        self._last_sync = time.monotonic()
        self._markers: dict[int, Any] = {}
        self._iterencode = _c_encoder(self._markers) or (lambda o, _level: _ENCODER.iterencode(o))

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
            raise RehydrateError("the batch must be at least 1", field="batch")
        p = cls(os.fspath(output), os.fspath(progress), key, batch, batch_ms)
        out, prog = os.path.abspath(p.output), os.path.abspath(p.progress)
        p._lock = PipelineLock(out, prog)
        try:
            c, done = _repair(out, prog, key)
            p.report = [x.message for x in c.problems if x.code not in CONTENT] + done
            p.cursor = c.expected
            p._fd = fsio.open_append(out, "cursor.create", WORDS)  # a new output's folder entry is synced too
            p._progress_fd = fsio.open_overwrite(prog, WORDS)
            fsio.overwrite_at(p._progress_fd, prog, _progress_data(p.cursor), WORDS, cut=True)  # at the fixed width
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
            text = "".join(self._iterencode({**record, self.key: index}, 0))  # what json.dumps would give
        except RecursionError:
            self._markers.clear()
            raise safejson.TooDeep(f"record {index} is nested too deeply to write as JSON") from None
        except BaseException:
            self._markers.clear()
            raise
        self._buffer.append(text.encode() + b"\n")
        self.cursor = index + 1
        if len(self._buffer) >= self.batch or (
            self.batch_ms is not None and (time.monotonic() - self._last_sync) * 1000 >= self.batch_ms
        ):
            self.sync()
        return index

    def sync(self) -> None:
        """Make every written record durable, then advance the progress file to match.

        If the lock file was removed or replaced (another process may be writing the same output), or a write fails,
        nothing more is written: the pipeline closes itself and raises; the next open redoes what was lost."""
        if self._fd is None or not self._buffer:
            return
        if self._lock is not None and not self._lock.still_held():
            self._release()
            raise RehydrateError(
                f"the lock file of the pipeline {self.output} was removed or replaced while this process held it; "
                "it stopped before writing, since another process may be writing the same output",
                f"make sure only one process runs it, then run `rehydrate cursor verify {self.output} {self.progress}`",
            )
        try:
            fsio.write_synced(self._fd, self.output, b"".join(self._buffer), "cursor.output", WORDS)
            self._buffer.clear()
            if self.batch_ms is not None:
                self._last_sync = time.monotonic()
            if self._progress_fd is not None:
                fsio.overwrite_at(self._progress_fd, self.progress, _progress_data(self.cursor), WORDS)
        except BaseException:
            self._release()  # a half-written batch is cut or redone by the next open, never appended to
            raise

    def close(self) -> None:
        try:
            if self._fd is not None:
                self.sync()
                self._progress_again()
        finally:
            self._release()

    def _progress_again(self) -> None:
        """Commits write the cursor through the descriptor opened with the pipeline, never looking at the path: if
        the progress file was removed or replaced since, write the cursor at its path once more."""
        if self._progress_fd is None or self._lock is None or not self._lock.still_held():
            return
        with fsio.failing(self.progress, "look at", WORDS):
            now, st = fsio.lstat(self.progress), os.fstat(self._progress_fd)
        if now is None or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            _write_progress(self.progress, self.cursor)

    def _release(self) -> None:
        """Close the output and release the lock without writing anything (what a killed process leaves)."""
        fd, self._fd = self._fd, None
        progress_fd, self._progress_fd = self._progress_fd, None
        lock, self._lock = self._lock, None
        try:
            try:
                if fd is not None:
                    fsio.close(fd)
            finally:
                if progress_fd is not None:
                    fsio.close(progress_fd)
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
