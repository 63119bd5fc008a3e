"""The whole log checked in one pass, as a graph.

git's union merge keeps both sides' new lines of a log: base, then ours, then theirs. So a record's parents (its
`prev`, and a merge record's `parents`) are earlier records of the file, not the line before it; `seq` is one more
than the highest of its parents' (a generation number, no longer unique); a line repeating an earlier record's `h` (a
cherry-pick merged again) is information (`duplicate-record`), skipped; the records that no later record names as a
parent are the log's heads.
"""

from __future__ import annotations

from rehydrate.errors import RehydrateError
from rehydrate.store import INFO, Problem, records
from rehydrate.store.wal import digest
from rehydrate.store.wal.lines import Line, conflicted, parsed, scan, unrepairable
from rehydrate.store.wal.record import is_conflict_marker, other_parents, parents_of
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable

    from rehydrate.store.wal.record import Record


def check_chain(
    path: str,
    wal_rel: str,
    end: int | None,
    visit: Callable[[Record], None],
    heads: Heads | None = None,
    on_load: Callable[[Record], None] | None = None,
) -> list[Problem]:
    """The whole log, once: every record's hash and place in the graph (visit sees each valid record once; heads
    collects the heads). Bytes from `end` on (a torn tail) are left to the repair. Raises RehydrateError for any
    damage that cannot be repaired; returns the problems that are only information (duplicate-record)."""
    problems = scan_log(path, wal_rel, end, visit, heads, on_load)
    error = chain_error(path, wal_rel, problems)
    if error is not None:
        raise error
    return [p for p in problems if p.code in INFO]


def chain_error(path: str, wal_rel: str, problems: list[Problem]) -> RehydrateError | None:
    """What check_chain raises for a log's problems (scan_log's), or None: only a torn tail can be repaired."""
    for p in problems:
        if p.code == "merge-conflict":
            return conflicted(path, wal_rel)
        if p.code not in ("torn-tail", "empty-wal", "missing-newline") and p.code not in INFO:
            return RehydrateError(f"{wal_rel} line {p.line}: {p.message} [{p.code}]", unrepairable(wal_rel))
    return None


# An archive named by a rotate record: a plain file name in state/archive/, nothing else (the record is untrusted).
ARCHIVE_NAME = r"^archive/[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.jsonl\Z"


def archive_error(rec: Record) -> str | None:
    """Why a rotate record's archive path is not a plain file name in archive/, or None."""
    import re  # here: the hook path, which never checks an archive's name, does not load re

    name = records.data_of(rec).get("archive")
    if isinstance(name, str) and re.match(ARCHIVE_NAME, name):
        return None
    shown = clean(str(name)[:160], one_line=True)[:120]
    return f"its archive path {shown!r} is not archive/<file name>.jsonl inside the state folder"


class Heads:
    """The records that no later record of the same file names as its prev or among its parents, in file order, each
    with its byte offset: one when the log is a line, several after git merged two lines of work (union). `index`:
    every record's place, set by scan_log when the pass had to hold them (the log is not one line: _Known)."""

    def __init__(self) -> None:
        self.found: dict[str, tuple[int, Record]] = {}
        self.index: dict[str, Node] | None = None

    def add(self, offset: int, rec: Record, parents: list[str] | None = None) -> None:
        found = self.found
        for parent in parents if parents is not None else parents_of(rec):
            found.pop(parent, None)
        found[rec["h"]] = (offset, rec)

    def records(self) -> list[tuple[int, Record]]:
        return list(self.found.values())


class Node:
    """A record's place in its log: byte offset, seq, op and parents (graph.Graph's index)."""

    __slots__ = ("offset", "op", "parents", "seq")

    def __init__(self, offset: int, seq: int, op: str, parents: list[str]) -> None:
        self.offset = offset
        self.seq = seq
        self.op = op
        self.parents = parents


class _Known:
    """Every valid record of the log so far (its place: Node), as a pass needs it: while each record follows the one
    before (a log that is one line), only the last is held, so that memory does not grow with the log; the first
    question about another record reads the file's bytes before the current line once (parsed, not hashed: the
    pass checked them; the lines it found damaged left out; on_load sees each of those records, in order) and from
    then on holds them all (the index graph.Graph uses)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.all: dict[str, Node] | None = None
        self.last: tuple[str, int] | None = None
        self.count = 0
        self.upto = 0  # the byte offset of the line being looked at: every record before it is known
        self.bad: set[int] = set()  # the offsets of lines the pass found not to be records
        self.on_load: Callable[[Record], None] | None = None

    def __bool__(self) -> bool:
        return self.count > 0

    def __contains__(self, h: str) -> bool:
        return self.get(h) is not None

    def get(self, h: str) -> int | None:
        """The seq of record h, None if it is not an earlier record."""
        if self.all is None:
            if self.last is not None and h == self.last[0]:
                return self.last[1]
            if not self.count:
                return None
            self._load()
        node = self.all.get(h) if self.all is not None else None
        return node.seq if node is not None else None

    def repeats(self, h: str, parents: list[str]) -> bool:
        """Whether a record (h, its parents) repeats an earlier one (same h). One that follows the last record can
        only repeat that one: asked without reading back."""
        if self.all is None and self.last is not None and len(parents) == 1 and parents[0] == self.last[0]:
            return h == self.last[0]
        return h in self

    def add(self, h: str, rec: Record, offset: int, parents: list[str]) -> None:
        self.count += 1
        self.last = (h, rec["seq"])
        if self.all is not None:
            self.all[h] = Node(offset, rec["seq"], rec["op"], parents)

    def _load(self) -> None:
        found: dict[str, Node] = {}
        for offset, rec in parsed(self.path, self.upto, self.bad):
            h = rec["h"]
            if h in found:
                continue
            found[h] = Node(offset, rec["seq"], rec["op"], parents_of(rec))
            if self.on_load is not None:
                self.on_load(rec)
        self.all = found


class _Scan:
    """One pass over a log as a graph: each record's prev and parents must be records earlier in the file."""

    def __init__(
        self, rel: str, visit: Callable[[Record], None] | None, heads: Heads | None = None, path: str = ""
    ) -> None:
        self.rel = rel
        self.visit = visit
        self.heads = heads
        self.problems: list[Problem] = []
        self.conflicts: list[Problem] = []
        self.known = _Known(path)  # h: seq of every valid record so far
        self.damaged = False  # the line before was not a record: a record following it is not checked against it
        self.count = 0
        self.duplicates = 0

    def add(self, code: str, number: int | None, message: str, repairable: bool = False) -> None:
        self.problems.append(Problem(code, self.rel, number, message, repairable))

    def line(self, line: Line, rec: Record | None, why: str | None, is_last: bool) -> None:
        self.count += 1
        rel, number = self.rel, line.number
        self.known.upto = line.offset
        if line.raw is not None and is_conflict_marker(line.raw):
            self.conflicts.append(
                Problem(
                    "merge-conflict",
                    rel,
                    number,
                    "an unresolved git merge conflict marker: `rehydrate resolve` keeps both sides' records and "
                    "says what finishes the merge; or keep one side's records "
                    f"(`git checkout --ours -- {rel}` or `--theirs`, then `git add {rel}`); or `git merge --abort`",
                )
            )
        elif line.raw is None:
            self.add("oversized-line", number, str(why))
            self.damaged = True
            self.known.bad.add(line.offset)
        elif not line.newline:
            if rec is not None and self.follows(rec):  # a whole, valid record: only its newline was lost
                self.add("missing-newline", number, "the last record lost its final newline", True)
            else:
                self.add("torn-tail", number, "the last line has no newline (a torn write)", True)
        elif rec is None:
            self.add("torn-tail" if is_last else "damaged-record", number, str(why), is_last)
            self.damaged = True
            self.known.bad.add(line.offset)
        else:
            self.record(rec, number, line.offset)

    def follows(self, rec: Record) -> bool:
        """Whether a record's parents are all earlier records of the file (or it may start the log)."""
        parents = parents_of(rec)
        if not self.known:
            return not parents or records.op_of(rec) is records.ROTATE
        return bool(parents) and all(p in self.known for p in parents)

    def record(self, rec: Record, number: int, offset: int) -> None:
        h = rec["h"]
        parents = parents_of(rec)  # (once: every step below needs them)
        if self.known.repeats(h, parents):  # the same record twice (a cherry-pick, then a merge): the repeat is skipped
            self.duplicates += 1
            self.add("duplicate-record", number, f"record {rec['seq']}·{h[:6]} repeats an earlier line (skipped)")
            return
        if self.visit is not None:
            self.visit(rec)
        if self.heads is not None:
            self.heads.add(offset, rec, parents)
        if records.op_of(rec) is records.ROTATE:
            why = archive_error(rec)
            if why is not None:
                self.add("unsafe-path", number, f"refusing record {rec['seq']} (rotate): {why}")
        damaged, self.damaged = self.damaged, False
        if not self.known:
            self.first(rec, number, damaged)
        else:
            self.chained(rec, number, damaged, parents)
        self.known.add(h, rec, offset, parents)

    def first(self, rec: Record, number: int, damaged: bool) -> None:
        if damaged:
            return
        op = records.op_of(rec)
        if op.starts and rec["prev"] is not None:
            self.add("chain-broken", number, f"the {rec['op']} record has a prev hash")
        elif not op.starts and op is not records.ROTATE:
            self.add("chain-broken", number, "the log does not start with init or rotate")

    def chained(self, rec: Record, number: int, damaged: bool, parents: list[str]) -> None:
        if not parents and records.op_of(rec).starts:
            return  # a root: a union puts the base's records after the other side's rotate, which replaced them
        known = self.known
        last = known.last if known.all is None else None
        if last is not None and len(parents) == 1 and parents[0] == last[0]:  # the usual record: the one before
            seqs: list[int | None] = [last[1]]
        else:
            seqs = [known.get(p) for p in parents]
        if not parents or None in seqs:  # (a rotate's prev may be in the archive: a union can put it before it)
            if not damaged and not (records.op_of(rec) is records.ROTATE and not other_parents(rec)):
                self.add(
                    "chain-broken",
                    number,
                    "does not follow an earlier record of the log (line deleted, moved or edited?)",
                )
            return
        want = 1 + max(s for s in seqs if s is not None)
        if rec["seq"] != want:
            self.add("seq-gap", number, f"seq {rec['seq']} follows {want - 1}")


def scan_log(
    path: str,
    rel: str,
    end: int | None = None,
    visit: Callable[[Record], None] | None = None,
    heads: Heads | None = None,
    on_load: Callable[[Record], None] | None = None,
) -> list[Problem]:
    """Every line of one log (up to byte `end`): parse, canonical form, hash, graph, sequence, archive paths.
    visit is called with each valid record, in order, a repeated one (same h) skipped; heads collects the log's heads.
    A log holding git's conflict markers is named by them alone: its chain means nothing until the merge is
    finished."""
    digest.long_pass()
    pass_ = _Scan(rel, visit, heads, path)
    pass_.known.on_load = on_load  # the records read back once, if the log is not one line (_Known)
    held: tuple[Line, Record | None, str | None] | None = None
    for item in scan(path, end):  # each line with whether it is the last, holding one line at a time
        if held is not None:
            pass_.line(*held, False)
        held = item
    if held is not None:
        pass_.line(*held, True)
    if heads is not None:
        heads.index = pass_.known.all
    if pass_.conflicts:
        return pass_.conflicts
    if not pass_.count:
        pass_.add("empty-wal", None, "the WAL is empty")
    return pass_.problems
