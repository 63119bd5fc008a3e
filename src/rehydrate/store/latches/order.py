"""10_invariants.md's lines against the records that bind them (latches.py's line check): which lines a record
binds, each actor's recorded lines as a graph of records (a union merge of two lines of work keeps both sides'
records, parents before children, and each side's lines are unordered against the other's), and the binding of
those lines to the file's, line by line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator

from rehydrate.store import records
from rehydrate.store.layout import SUPERSEDING, WITHDRAWN, entry_id
from rehydrate.store.wal import record as wal
from rehydrate.text import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time
    from typing import Any

    from rehydrate.store.wal.record import Record

Bound = tuple[str, bool]  # a recorded line of 10_invariants.md, and whether its place in its actor's order is bound
DUPLICATE = "duplicate-line"  # an information, not a violation: removed by the next write (latches.dedupe)


class Line(tuple[str, bool]):
    """A recorded line whose place in its actor's order is not simply after the line before it in the list: the
    first line of a record on another line of work (after a union merge, `after` names the items it must follow:
    the newest of its own ancestors'), or a line of an `init` header (`shared`: a second actor's legacy `init` binds
    the same header lines, not a copy of them). Compares and unpacks as the plain (text, ordered) pair."""

    after: tuple[int, ...] | None = (
        None  # the indexes (in its actor's list) of the items it follows; None: the one before
    )
    shared = False


def _line(text: str, ordered: bool, after: tuple[int, ...] | None = None, shared: bool = False) -> Line:
    item = Line((text, ordered))
    item.after, item.shared = after, shared
    return item


def bound_lines(rec: Record) -> list[Bound]:
    """The lines of 10_invariants.md that a record binds. A line adopted from a hand edit is bound where it stands.
    An `init` binds its header's lines, shared with any other actor's legacy `init`; a `join` (a new actor's first
    record) and a `merge` (the join of two lines of work) bind none."""
    op, data = records.op_of(rec), rec.get("data")
    if not isinstance(data, dict):  # (a record of the wrong shape binds nothing)
        return []
    if op is records.INIT:
        return [_line(ln, True, shared=True) for ln in str(data.get("header", "")).split("\n") if ln.strip()]
    if op.appends and isinstance(data.get("line"), str):
        return [(data["line"], not data.get("adopted"))]
    if op is records.ROTATE and isinstance(data.get("lines"), list):
        # the header lines it carries (not entries: "- ID ...") are an init's, shared as the init's are: a union
        # with a branch that did not rotate brings the init record back beside the rotate
        adopted: list[Any] = data["adopted"] if isinstance(data.get("adopted"), list) else []
        return [_line(ln, True, shared=not ln.startswith("- ")) for ln in data["lines"] if isinstance(ln, str)] + [
            (ln, False) for ln in adopted if isinstance(ln, str)
        ]
    return []


def _after(items: list[Bound], i: int) -> tuple[int, ...]:
    """The indexes of the items that item i follows."""
    item = items[i]
    if type(item) is Line and item.after is not None:
        return item.after
    return (i - 1,) if i else ()


class Collector:
    """One actor's recorded lines, records fed in file order (parents before children, as a union merge keeps them):
    each record's first line follows the newest lines of its own ancestors (via prev and a merge's parents), and is
    unordered against another line of work's. A record seen before (the same h: a cherry-pick merged back) is
    skipped. A rotate carries every line recorded before it: its ancestors' lines give way to its own.

    linear_only: memory that does not grow with the log (a whole pass's): the lines are collected while every record
    follows the one before it (then the list is the answer); the first that does not sets `broken`, and the lines
    are left to a collector fed by the chain check's read-back (rollback.ScanInfo.load)."""

    def __init__(self, linear_only: bool = False) -> None:
        self.items: list[Bound] = []
        self.front: dict[str, tuple[int, ...]] = {}  # per record h: the newest items among it and its ancestors
        self.last: tuple[int, ...] = ()  # the front of the record before, in file order
        self.dead: set[int] = set()
        self.carried: set[str] = set()  # the lines rotates carry whose last record is not in this log (archived)
        self.linear_only = linear_only
        self.broken = False
        self._last_h: str | None = None

    def add(self, rec: Record) -> None:
        h = rec.get("h")
        if self.linear_only:
            self._linear(rec, h)
            return
        if not isinstance(h, str) or h in self.front:
            return
        op = records.op_of(rec)
        prev = rec.get("prev")
        if not op.binds and "parents" not in rec and isinstance(prev, str) and self.front.get(prev) == self.last:
            self.front[h] = self.last  # the usual record (a checkpoint following the one before): no line, no join
            return
        names = [rec.get("prev")]
        parents = rec.get("parents")
        if isinstance(parents, list):
            names += parents
        known = [self.front[n] for n in names if isinstance(n, str) and n in self.front]
        if not known and isinstance(rec.get("prev"), str):
            known = [self.last]  # a parent not in this log (a broken chain, or a rotate's archived last record)
        if op is records.ROTATE:
            self._rotate(rec, known)
            known = []
        base = tuple(sorted({i for f in known for i in f}))
        new = bound_lines(rec)
        if self.carried and op is not records.ROTATE:  # already recorded by a rotate that archived them
            new = [item for item in new if item[0] not in self.carried]
        for k, item in enumerate(new):
            i = len(self.items)
            plain = k or base == ((i - 1,) if i else ())
            self.items.append(item if plain else _line(item[0], item[1], base, type(item) is Line and item.shared))
        self.front[h] = self.last = (len(self.items) - 1,) if new else base

    def _linear(self, rec: Record, h: object) -> None:
        if self.broken or not isinstance(h, str):
            return
        prev = rec.get("prev")
        if self._last_h is not None and (prev != self._last_h or "parents" in rec):
            self.broken, self.items = True, []  # not one line: ScanInfo.load's collector has them
            return
        self._last_h = h
        op = records.op_of(rec)
        if not op.binds:  # (bound_lines: none)
            return
        if op is records.ROTATE:  # it carries every line before it
            self.items = []
        self.items.extend(bound_lines(rec))

    def _rotate(self, rec: Record, known: list[tuple[int, ...]]) -> None:
        """The rotate's ancestors' lines are carried by the rotate itself: dropped. When its parent is not in this
        log (archived: a union put another line of work's records before it), the lines it carries are dropped:
        another line's records that it does not carry stay; a record that comes after it and binds a line it
        carries (the base's, brought back by the union) binds nothing more."""
        if rec.get("prev") not in self.front:
            carried = {item[0] for item in bound_lines(rec)}
            self.dead.update(i for i, item in enumerate(self.items) if item[0] in carried)
            self.carried |= carried  # a union may also bring the archived records back after it
            return
        todo = [i for f in known for i in f]
        while todo:
            i = todo.pop()
            if i >= 0 and i not in self.dead:
                self.dead.add(i)
                todo.extend(_after(self.items, i))

    def lines(self) -> list[Bound]:
        """The recorded lines, in order, the dropped ones left out (the others' places in the order kept)."""
        if not self.dead:
            return self.items
        new: dict[int, int] = {}
        out: list[Bound] = []
        for i, item in enumerate(self.items):
            if i in self.dead:
                continue
            after = tuple(sorted(new[j] for j in _after(self.items, i) if j in new))
            new[i] = len(out)
            plain = after == ((len(out) - 1,) if out else ())
            shared = type(item) is Line and item.shared
            out.append((item[0], item[1]) if plain and not shared else _line(item[0], item[1], after, shared))
        return out


def actor_lines(records: Iterator[Record]) -> list[Bound]:
    """One actor's recorded lines in order (Collector: a graph of records, in file order)."""
    collect = Collector()
    for rec in records:
        collect.add(rec)
    return collect.lines()


class _Binding:
    """Binding every actor's recorded lines to the file's lines, in order: linear in the file and the records (each
    text's places in the file are looked up, never the whole file scanned for one line)."""

    def __init__(self, file_lines: list[str]) -> None:
        self.file_lines = file_lines
        self.where: dict[str, list[int]] = {}
        for n, text in enumerate(file_lines, 1):
            self.where.setdefault(text, []).append(n)
        self.first: dict[str, int] = {}  # per text: the index in where[text] before which every place is used
        self.ids: dict[str, list[int]] | None = None  # the places of each entry id, built when a line is not found
        self.used: set[int] = set()
        self.shared: set[int] = set()  # places bound by an init header's line: another init's may share them
        self.missing: list[tuple[str, int]] = []  # recorded lines not found verbatim, and where they were expected
        self.out: list[tuple[str, int, str]] = []

    def _free(self, text: str, cursor: int) -> tuple[int | None, int | None]:
        """(the first unused place of text after cursor, the first unused place of text)."""
        spots = self.where.get(text)
        if not spots:
            return None, None
        i = self.first.get(text, 0)
        while i < len(spots) and spots[i] in self.used:
            i += 1
        self.first[text] = i
        j = max(i, bisect_right(spots, cursor))
        while j < len(spots) and spots[j] in self.used:
            j += 1
        return (spots[j] if j < len(spots) else None), (spots[i] if i < len(spots) else None)

    def _changed(self, text: str) -> int | None:
        """The first unused line that carries the recorded line's entry id (the line was edited)."""
        ident = entry_id(text)
        if not ident:
            return None
        return next((n for n in self.id_places().get(ident, ()) if n not in self.used), None)

    def id_places(self) -> dict[str, list[int]]:
        if self.ids is None:
            self.ids = {}
            for n, t in enumerate(self.file_lines, 1):
                found = entry_id(t) if t.startswith("- ") else None
                if found:
                    self.ids.setdefault(found, []).append(n)
        return self.ids

    def bind(self, text: str, ordered: bool, cursor: int, shared: bool = False) -> int:
        """Bind one recorded line; returns the cursor (the line its actor's next line must follow)."""
        after, free = self._free(text, cursor)
        if shared and after is None:  # another actor's init header holds it
            after = next((n for n in self.where.get(text, ()) if n > cursor and n in self.shared), None)
        if after is not None and ordered:
            self.used.add(after)
            if shared:
                self.shared.add(after)
            return after
        if free is not None:
            self.used.add(free)
            if ordered:
                why = f"latch violation: a recorded line was moved out of its order: {quoted(text, 120)}"
                self.out.append(("latch-reordered", free, why))
            # else: adopted from a hand edit, bound where it stands
            return cursor
        self.missing.append((text, cursor))
        return cursor

    def settle(self) -> None:
        """The recorded lines not found verbatim, once every actor's lines are bound (so that an edited line is
        never matched with a line another record binds): edited (a line with its entry id) or missing."""
        for text, cursor in self.missing:
            changed = self._changed(text)
            if changed is not None:
                self.used.add(changed)
                why = f"latch violation: a recorded line was changed; it was: {quoted(text, 160)}"
                self.out.append(("latch-changed", changed, why))
            else:
                why = f"latch violation: a recorded line is missing (expected here): {quoted(text, 160)}"
                self.out.append(("latch-missing", cursor + 1, why))


def _cursor(item: object, i: int, cursors: list[int]) -> int:
    """The line item i of an actor's list must follow: its ancestors' newest (cursors: each earlier item's place)."""
    after = item.after if isinstance(item, Line) else None
    if after is None:
        return cursors[-1] if cursors else 0
    return max((cursors[j] for j in after if 0 <= j < i), default=0)


def _shared(item: object) -> bool:
    return isinstance(item, Line) and item.shared


def check_lines(
    file_lines: list[str],
    recorded: dict[str, list[Bound]] | dict[str, list[str]],
    minted: Callable[[str, str], bool] | None = None,
) -> tuple[list[tuple[str, int, str]], list[int]]:
    """Bind 10_invariants.md line by line: every recorded line present verbatim, after its own ancestors' lines
    (records form a graph: two lines of work merged are unordered against each other), each actor's in turn.

    Returns (problems as (code, line number, message), line numbers that no record carries). Besides the latch
    violations, an unbound line that is exactly a recorded line is `duplicate-line` (an information: a union merge
    kept both sides' copy; the next write removes it); one that carries a recorded entry's id with other text is
    `latch-changed`, even when the recorded line is present too (a union merge keeps the original beside the edit:
    never "unrecorded", so never adopted), unless minted(id, line) says the line was minted under that id itself
    (a 24-bit id collision, not an edit). Neither is in the second list.
    """
    binding = _Binding(file_lines)
    texts: dict[str, str] = {}  # per recorded entry id: its recorded line
    for actor in sorted(recorded):
        items = recorded[actor]
        cursors: list[int] = []
        for i, item in enumerate(items):
            text = item if isinstance(item, str) else str(item[0])  # (a Line is a tuple subclass: mypy loses types)
            cursors.append(
                binding.bind(text, item is text or item[1] is True, _cursor(item, i, cursors), _shared(item))
            )
            ident = entry_id(text) if text.startswith("- ") else None
            if ident:
                texts.setdefault(ident, text)
    binding.settle()
    recorded_texts = binding.where.keys() & {t for t in _texts(recorded)}
    unrecorded: list[int] = []
    for n, t in enumerate(file_lines, 1):
        if n in binding.used or not t.strip():
            continue
        ident = entry_id(t) if t.startswith("- ") else None
        if t in recorded_texts:
            why = "an exact copy of a recorded line (a merge kept both sides' copy); the next write removes it"
            binding.out.append((DUPLICATE, n, why))
        elif ident in texts and (minted is None or not minted(ident, t)):
            was = quoted(texts[ident], 160)
            why = f"latch violation: a recorded line was changed (its entry id is {ident}); it was: {was}"
            binding.out.append(("latch-changed", n, why))
        else:
            unrecorded.append(n)
    return binding.out, unrecorded


def _texts(recorded: dict[str, list[Bound]] | dict[str, list[str]]) -> Iterator[str]:
    for items in recorded.values():
        for item in items:
            yield item if isinstance(item, str) else item[0]


def minted_as(actor: str, ts: str, ident: str, line: str, recorded: str | None = None) -> bool:
    """Whether an entry line's text gives its id under this actor and time (the id is 6 hex of
    sha256(actor NUL ts NUL text)): a line minted by that formula, not an edit of the recorded one. The text is read
    between the line's "decision: ", "rejected: ", "withdrawn: " or the id it supersedes and a " because: " (each
    place tried: either may hold it); the recorded entry's own text (`recorded`) does not count: a line with that
    text and other words is its edit."""
    for word in (" decision: ", " rejected: ", " " + WITHDRAWN, SUPERSEDING):
        at = line.find(word)
        if at < 0:
            continue
        rest = line[at + len(word) + (10 if word == SUPERSEDING else 0) :]  # past the id it names and ": "
        cut = rest.find(" because: ")
        while cut >= 0:
            text = rest[:cut]
            if text != recorded and wal.sha256(f"{actor}\0{ts}\0{text}".encode())[:6] == ident[2:]:
                return True
            cut = rest.find(" because: ", cut + 1)
    return False


def line_authors(file_lines: list[str], recorded: dict[str, list[Bound]]) -> list[str | None]:
    """Per line of the file, the actor whose record binds it (None: no record does), as check_lines binds them."""
    binding = _Binding(file_lines)
    out: list[str | None] = [None] * len(file_lines)
    for actor in sorted(recorded):
        before = set(binding.used)
        items = recorded[actor]
        cursors: list[int] = []
        for i, item in enumerate(items):
            cursors.append(binding.bind(str(item[0]), item[1] is True, _cursor(item, i, cursors), _shared(item)))
        for n in binding.used - before:
            out[n - 1] = actor
    return out
