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
from rehydrate.fs import write as fsio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")

PROGRESS_WIDTH = 40  # the progress file is rewritten in place at one fixed width
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps's output, built once


def _orjson() -> Callable[..., bytes] | None:
    """orjson's dumps (a dependency; None where it cannot be imported), refusing datetimes and dataclasses as json
    does. It writes what json.dumps(record, ensure_ascii=False, separators=(",", ":")) writes, in UTF-8, 8 times as
    fast, but for three things the commit hands to json: an integer beyond 64 bits, a key that is not a string (it
    raises), NaN and the infinities (it writes null: any null sends the record to json, which writes NaN). A float's
    text may differ (1e-7 for json's 1e-07), never its value."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a platform without orjson's wheels
        return None
    option = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj, option=option)

    return dumps


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


def _c_encoder(markers: dict[int, Any] | None) -> Callable[[Any, int], Any] | None:
    """The standard json module's C encoder for _ENCODER, made once: json.dumps makes one per call for these options,
    over a third of a batched commit's time. markers is its circular-reference check (cleared after it raises), None
    for none: a circular record then runs out of stack, and is encoded again with the check, which names it."""
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
        # The records committed but not yet written (batch mode), as their UTF-8 without the closing brace: the key
        # and the index are added to all of them at once by the sync. A record that cannot be completed so (the key
        # already in it, an empty dict, a mapping that is not a dict) is kept as its whole line, in a one-tuple.
        self._buffer: list[bytes | tuple[bytes]] = []
        self._whole = False  # the buffer holds a whole line
        self._field = ("," + _json_encoder.encode_basestring(key) + ":").encode()  # how a dict's key is written
        self._last_sync = time.monotonic()
        self._markers: dict[int, Any] = {}
        self._checking = _c_encoder(self._markers) or (lambda o, _level: _ENCODER.iterencode(o))
        self._fast = _c_encoder(None) or self._checking  # without the check: a tenth of a commit's time
        self._dumps = _orjson()

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
        index = self.cursor
        text: bytes | tuple[bytes]
        if type(record) is dict and record and self.key not in record and self._fd is not None:
            # json.dumps({**record, key: index}) but its closing brace: the sync adds the key and the index
            line = self._encoded(record, index)
            text = line[:-1]
        else:  # the key already in the record, an empty one, a mapping that is not a dict: kept as its whole line
            if self._fd is None:
                raise RehydrateError("the pipeline is closed")
            text = (self._checked({**record, self.key: index}, index).encode(),)
            self._whole = True
        buffer = self._buffer
        buffer.append(text)
        self.cursor = index + 1
        if len(buffer) >= self.batch or (
            self.batch_ms is not None and (time.monotonic() - self._last_sync) * 1000 >= self.batch_ms
        ):
            self.sync()
        return index

    def _encoded(self, record: dict[str, Any], index: int) -> bytes:
        """The record's JSON in UTF-8: orjson's, or json's for what orjson refuses or writes otherwise (see _orjson).
        Whatever cannot be written (a lone surrogate, a cycle, a record nested too deeply, an object json does not
        write) raises here, as the commit of this record, never at the batch's sync."""
        dumps = self._dumps
        if dumps is not None:
            try:
                data = dumps(record)
            except TypeError:  # orjson.JSONEncodeError: json says what it is, or writes it
                pass
            else:
                if b"null" not in data:  # NaN or an infinity would be null here: json writes those
                    return data
        try:
            line = "".join(self._fast(record, 0))
        except RecursionError:
            line = self._checked(record, index)
        return line.encode()  # a lone surrogate: UnicodeEncodeError

    def _checked(self, obj: Any, index: int) -> str:
        """The encoding with json.dumps's check for circular references (ValueError), TooDeep for a record nested too
        deeply; the markers are left empty for the next, whatever the encoder raised."""
        try:
            return "".join(self._checking(obj, 0))
        except RecursionError:
            raise safejson.TooDeep(f"record {index} is nested too deeply to write as JSON") from None
        finally:
            self._markers.clear()

    def _lines(self) -> bytes:
        """The buffer's records as the output's lines: each its text, the key and its index, with one format."""
        buffer, n = self._buffer, len(self._buffer)
        first, field = self.cursor - n, self._field
        if n == 1 and not self._whole:  # durable mode
            return b"%s%s%d}\n" % (buffer[0], field, first)
        if self._whole:  # rare: a record with the key in it, an empty one, or a mapping that is not a dict
            return b"".join(
                x[0] + b"\n" if type(x) is tuple else b"%s%s%d}\n" % (x, field, i) for i, x in enumerate(buffer, first)
            )
        args: list[object] = [None] * (2 * n)
        args[::2] = buffer
        args[1::2] = range(first, first + n)
        return (b"%s" + field.replace(b"%", b"%%") + b"%d}\n") * n % tuple(args)

    def sync(self) -> None:
        """Make every written record durable, then advance the progress file to match.

        If the lock file was removed or replaced (another process may be writing the same output), or a write fails,
        nothing more is written: the pipeline closes itself and raises; the next open redoes what was lost."""
        fd, buffer, lock = self._fd, self._buffer, self._lock
        if fd is None or not buffer:
            return
        if lock is not None and not lock.still_held():
            self._release()
            raise RehydrateError(
                f"the lock file of the pipeline {self.output} was removed or replaced while this process held it; "
                "it stopped before writing, since another process may be writing the same output",
                f"make sure only one process runs it, then run `rehydrate cursor verify {self.output} {self.progress}`",
            )
        calls, path = fsio.calls, self.output
        try:  # fsio.write_synced and overwrite_at, inline: in durable mode this runs once per record
            data = self._lines()
            done = calls.write(fd, data)
            while done < len(data):  # one write in practice; a short one is finished, never left torn
                done += calls.write(fd, data[done:])
            calls.fsync(fd, "cursor.output")
            buffer.clear()
            self._whole = False
            if self.batch_ms is not None:
                self._last_sync = time.monotonic()
            progress_fd = self._progress_fd
            if progress_fd is not None:
                path, cursor = self.progress, _progress_data(self.cursor)
                if calls.pwrite(progress_fd, cursor, 0) < len(cursor):  # a short one is written again in full
                    fsio.overwrite_at(progress_fd, path, cursor, WORDS)
        except OSError as e:
            self._release()  # a half-written batch is cut or redone by the next open, never appended to
            raise fsio.error(path, "write", e, WORDS) from None
        except BaseException:
            self._release()
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
