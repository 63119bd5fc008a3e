"""JSON Lines as a transcript holds them: files opened without blocking, lines read forwards in blocks or backwards
from the end, each record parsed on its own.

A transcript is other people's input: files are opened without blocking and only when regular (a FIFO, a device or a
folder is refused with an OSError), a line longer than MAX_LINE is skipped without being held, and a record nested too
deeply for the parser is a bad line, never a RecursionError. Standard library only at import (the hook path reads
transcripts through here); orjson, when installed, parses.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, BinaryIO

    from rehydrate.transcripts.model import Session

_loads: Callable[[str | bytes], Any] | None = None


def json_parser() -> Callable[[str | bytes], Any]:
    """orjson's loads, which parses several times faster (optional: pip install 'rehydrate[audit]'), else json's;
    imported when a record is first parsed, so that the hook path can read a format's names (EDIT_TOOLS) without."""
    global _loads
    if _loads is None:
        try:
            from orjson import loads as fast
        except ImportError:  # pragma: no cover - depends on the environment
            from json import loads as fast  # type: ignore[assignment]
        _loads = fast
    return _loads


MAX_LINE = 64 << 20  # a longer line is skipped as unreadable, without being held in memory
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
TOO_DEEP = "<nested too deeply>"


def open_regular(path: str) -> BinaryIO:
    """A regular file open for reading. Never blocks: a FIFO, a device or a folder (also behind a symlink) is refused
    with an OSError whose strerror is "not a regular file"."""
    fd = os.open(path, _READ_FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def loads(raw: str | bytes) -> Any:
    """One record, with the fast parser; ValueError for anything but JSON, also for JSON nested too deeply."""
    try:
        return json_parser()(raw)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_encode: Callable[[Any], str] | None = None


def canonical(value: Any) -> str:
    """value as canonical JSON (sorted keys): identical inputs give identical text; one too deep gives TOO_DEEP.
    The text of json.dumps(value, sort_keys=True), from one encoder made once (dumps makes one per call)."""
    global _encode
    if _encode is None:
        import json  # here only: the package is on the hook path (transcripts.recent), where json is not

        _encode = json.JSONEncoder(sort_keys=True).encode
    try:
        return _encode(value)
    except (RecursionError, ValueError):
        return TOO_DEEP


def label(value: Any) -> str:
    """A field's value as text: strings and scalars as themselves, anything else by its type (never its repr, which
    recurses into a value nested too deeply)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    return f"<{type(value).__name__}>"


def obj(value: Any) -> dict[str, Any]:
    """value if it is a JSON object, else an empty one: records from other tools have any shape."""
    return value if isinstance(value, dict) else {}


BLOCK = 64 << 10  # what a block read takes: 64 KiB stays in the CPU's caches while split copies it (1 MiB: +40%)


def read_blocks(path: str, size: int = BLOCK) -> Iterator[list[bytes | None]]:
    """The lines of a file without their newlines, a list for each block read; None for a line longer than MAX_LINE
    (skipped, never held: a block is at most MAX_LINE bytes, and the part of a line carried over is dropped once it
    passes MAX_LINE). A line longer than a block is gathered in a list and joined once (never copied block by
    block)."""
    size = min(size, MAX_LINE)
    with open_regular(path) as f:
        carry: list[bytes] = []  # the start of a line whose newline is not read yet, in pieces
        carried = 0  # their length
        skipping = False  # the line being read is longer than MAX_LINE
        while True:
            block = f.read(size)
            if not block:
                break
            parts: list[bytes | None] = block.split(b"\n")  # type: ignore[assignment]
            rest: bytes = parts.pop()  # type: ignore[assignment]
            if parts:
                if skipping:
                    parts[0] = None
                elif carry:
                    first: bytes = parts[0]  # type: ignore[assignment]
                    parts[0] = b"".join((*carry, first)) if carried + len(first) <= MAX_LINE else None
                carry, carried, skipping = [rest] if rest else [], len(rest), False
                yield parts
            elif not skipping:
                carry.append(rest)
                carried += len(rest)
            if carried > MAX_LINE:
                carry, carried, skipping = [], 0, True
        if skipping or carry:
            yield [None if skipping else b"".join(carry)]


def lines(path: str, block: int = BLOCK) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes without the newline) of each line, read `block` bytes at a time; None for a line longer
    than MAX_LINE (skipped, never held)."""
    number = 0
    for part in read_blocks(path, block):
        for raw in part:
            number += 1
            yield number, raw


def records(
    path: str, session: Session, wanted: Callable[[bytes], bool] | None = None, kinds: tuple[str, ...] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object of a JSONL file with its line number; bad lines are counted on the session and skipped.

    wanted, if given, sees each line's bytes first: a line it refuses is not parsed (nor counted as a bad line). It
    must refuse only lines that cannot be a record the caller uses (claude.read.audited). kinds, if given: only the
    records whose "type" is one of these are yielded."""
    parse = json_parser()
    number = 0
    for block in read_blocks(path):
        for raw in block:
            number += 1
            if raw is None:
                session.bad_lines += 1
                continue
            if wanted is not None and not wanted(raw):
                continue
            if raw[:1] != b"{" and not raw.strip():
                continue
            try:
                rec = parse(raw)
            except (ValueError, RecursionError):  # a torn last line, invalid UTF-8, not JSON, nested too deeply
                session.bad_lines += 1
                continue
            if not isinstance(rec, dict):
                session.bad_lines += 1
            elif kinds is None or rec.get("type") in kinds:
                session.lines = number
                yield number, rec
    session.lines = number


def newer_than(path: str, since: str) -> Iterator[dict[str, Any]]:
    """The records stamped after `since` (ISO 8601, UTC), newest first, read backwards until an older one: the cost
    depends on what came after `since`, not on the file's size. Unparsable or unstamped lines are skipped."""
    for raw in lines_backwards(path):
        try:
            rec = loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("timestamp"), str):
            continue
        if rec["timestamp"] <= since:
            return
        yield rec


def lines_backwards(path: str, chunk: int = 1 << 16) -> Iterator[bytes]:
    """The lines of a file, last first, read in chunks from its end.

    Linear in the bytes read: each chunk is read and split once, and a line is joined once, when its start is found
    (never re-scanned as it grows). A line longer than MAX_LINE is skipped whole: never held, never yielded in part.
    """
    with open_regular(path) as f:
        end = f.seek(0, os.SEEK_END)
        pieces: list[bytes] = []  # the line being read, last piece first
        held = 0  # bytes in pieces
        skipping = False  # the line being read is longer than MAX_LINE
        while end > 0:
            step = min(chunk, end)
            end -= step
            f.seek(end)
            parts = f.read(step).split(b"\n")
            for part in reversed(parts[1:]):  # each one ends at a newline: its line is complete
                if not skipping and held + len(part) <= MAX_LINE:
                    pieces.append(part)
                    line = part if len(pieces) == 1 else b"".join(reversed(pieces))
                    if line.strip():
                        yield line
                pieces, held, skipping = [], 0, False
            if not skipping:
                pieces.append(parts[0])
                held += len(parts[0])
                if held > MAX_LINE:  # a line too long to be a record: drop what is held, skip to its start
                    pieces, held, skipping = [], 0, True
        if not skipping and pieces:
            line = b"".join(reversed(pieces))
            if line.strip():
                yield line
