"""What a pipeline's output and progress file say, and how they disagree: check() reads the output whole, quick_check()
only its end. Nothing here writes."""

from __future__ import annotations

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

QUICK_TAIL_BYTES = 4 << 20  # the brief's quick check reads at most this much of each output's end

WORDS = fsio.Words(
    "a pipeline only reads and writes regular files",
    "point the pipeline at a regular file, or move this one away",
    "check the disk (space, permissions, a read-only mount), then open the pipeline again: its start-up check cuts "
    "a torn last line and redoes the records that did not reach the disk",
)


class Discrepancy:
    """One thing the output and the progress file disagree on, or that is wrong in one of them."""

    def __init__(self, code: str, message: str, line: int | None = None) -> None:
        self.code = code
        self.message = message
        self.line = line

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line}


class CursorReport:
    """What the output and the progress file say, and how they disagree."""

    def __init__(self) -> None:
        self.cursor: int | None = None  # what the progress file says (None: missing or unreadable)
        self.last_index: int | None = None  # the last complete output record's index
        self.records = 0
        self.torn = b""
        self.torn_offset = 0
        self.problems: list[Discrepancy] = []
        self.unchecked: str | None = None  # why the cursor could not be compared (the quick check only)

    @property
    def expected(self) -> int:
        """The cursor the output calls for."""
        return 0 if self.last_index is None else self.last_index + 1


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

    def __init__(self, key: str, c: CursorReport) -> None:
        self.key = key
        self.c = c
        self.previous: int | None = None

    def line(self, raw: bytes, number: int | None) -> None:
        index = _parse_index(raw, self.key)
        if index is None:
            self.c.problems.append(Discrepancy("bad-record", f"not a JSON object with an integer {self.key!r}", number))
            return
        previous = self.previous
        expected = 0 if previous is None else previous + 1
        if index != expected and (previous is not None or number is not None):  # the quick check has no line 1
            if previous is not None and index <= previous:
                code = "index-repeats" if index == previous else "index-backwards"
            else:
                code = "index-skips"
            self.c.problems.append(Discrepancy(code, f"index {index} where {expected} was expected", number))
        self.previous = index if previous is None else max(previous, index)
        self.c.records += 1


def check(output: str, progress: str, key: str = "index") -> CursorReport:
    """Read both files (the output whole, line by line) and name every discrepancy. Writes nothing."""
    c = CursorReport()
    _read_output(output, key, c)
    _read_progress(progress, c)
    _compare(c)
    return c


def quick_check(output: str, progress: str, key: str = "index") -> CursorReport:
    """check() from the output's last lines only: the cursor against the last complete record, and a torn tail.

    Its cost does not grow with the output (the brief runs it); the full content check is check()'s. When the last
    record does not fit in QUICK_TAIL_BYTES, it does not guess: `unchecked` says why the cursor was not compared.
    """
    c = CursorReport()
    try:
        fsio.check_regular(output, WORDS)
        _, buf, at_start = fsio.read_tail(output, 2, QUICK_TAIL_BYTES)
    except FileNotFoundError:
        buf, at_start = b"", True
    except RehydrateError as e:
        c.problems.append(Discrepancy("output-unreadable", e.message))
        return c
    except OSError as e:
        c.problems.append(Discrepancy("output-unreadable", fsio.error(output, "read", e, WORDS).message))
        return c
    pieces = buf.split(b"\n")
    complete = pieces[:-1] if at_start else pieces[1:-1]  # without at_start, the first piece is a line's end
    if pieces[-1]:
        c.torn = pieces[-1]
        size = f"{len(c.torn):,} bytes" if at_start or len(pieces) > 1 else f"more than {len(c.torn):,} bytes"
        c.problems.append(Discrepancy("torn-tail", f"the last line ({size}) has no newline"))
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


def _compare(c: CursorReport) -> None:
    if c.cursor is not None and c.cursor != c.expected:
        way = "ahead of" if c.cursor > c.expected else "behind"
        c.problems.append(
            Discrepancy(
                "cursor-ahead" if c.cursor > c.expected else "cursor-behind",
                f"cursor {c.cursor} is {abs(c.cursor - c.expected)} {way} the output "
                f"(its last index is {c.last_index}): the output calls for {c.expected}",
            )
        )


def _read_output(output: str, key: str, c: CursorReport) -> None:
    fsio.check_regular(output, WORDS)
    fd = fsio.open_read(output, WORDS)  # no-follow, non-blocking, regular files only
    if fd is None:
        return
    seq = _Sequence(key, c)
    offset = 0
    with (
        fsio.failing(output, "read", WORDS),
        open(fd, "rb", closefd=True) as f,
    ):  # the descriptor just checked, never a reopen
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                c.torn, c.torn_offset = raw, offset
                c.problems.append(
                    Discrepancy("torn-tail", f"the last line ({len(raw):,} bytes) has no newline", number)
                )
                break
            offset += len(raw)
            seq.line(raw, number)
    c.last_index = seq.previous


def _read_progress(progress: str, c: CursorReport) -> None:
    try:
        fsio.check_regular(progress, WORDS)
        data = fsio.read_bytes(progress, 1 << 20, WORDS)
    except RehydrateError as e:
        c.problems.append(Discrepancy("progress-unreadable", e.message))
        return
    except OSError as e:
        c.problems.append(Discrepancy("progress-unreadable", fsio.error(progress, "read", e, WORDS).message))
        return
    if data is None:
        if c.records or c.torn or c.last_index is not None or c.unchecked is not None:  # it has started
            c.problems.append(
                Discrepancy("progress-missing", "the progress file is missing; the cursor comes from the output")
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
            Discrepancy("progress-unreadable", f"the progress file is {what}; the cursor comes from the output")
        )
        return
    c.cursor = cursor


CONTENT = ("bad-record", "index-repeats", "index-backwards", "index-skips")
