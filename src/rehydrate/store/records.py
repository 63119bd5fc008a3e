"""The operations a record can name, one definition each: what its data holds, which view it moves, how it shows.

A record is `{"op": NAME, "data": {...}, ...}` (store/wal/record.py states the line format). Every op the code
writes is defined once here, in OPS, and every reader asks the table instead of comparing names by hand: which view
an op moves (`OPS[op].moves`), whether it appends a line to 10_invariants.md, whether it is a recovery point, whether
it carries the evidence in force, whether it goes to this worktree's journal rather than to the WAL, and how it
renders as a one-line summary (`rehydrate log`).

A record arrived with `git pull`: its data is untrusted. `data_of(rec)` is the one guard on its shape (a dict, else
{}), `field(data, name, type)` reads one field (a field of the wrong type counts as absent), and nothing here raises
on a record's shape. An op the table does not know is kept and shown (its data as text), never refused:
`op_of(rec)` gives it an Op of its own that moves nothing.

It imports layout.py alone (which imports nothing): the hook path reads records (tests/cli/test_cli_imports.py).
"""

from __future__ import annotations

from rehydrate.store.layout import HANDOFF, INVARIANTS, NEXT, TASKS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hook path's imports
    from collections.abc import Callable
    from typing import Any


class Op:
    """One operation: its name, its data's fields ((name, type) pairs: what it may hold, for documentation and for
    `field`), the fields a view is redone from (a record of a known op without them is refused by the WAL's
    decode), the view it moves (layout's 99_next.md, 20_handoff.md, 30_tasks.md or 10_invariants.md, the actor's
    own for an actor that joined; None), whether it appends a line to 10_invariants.md (`appends`) or binds lines of
    it otherwise (`binds`: the init's header, a rotate's carried lines), whether a reader may start from it (a
    recovery point: it is or carries the last next step), whether it starts an actor's log (no prev), what it does
    with the evidence in force (`evidence`: "set" changes and carries it, "carried" carries it, "receipt" is a run a
    claim can cite), whether it names the harness's transcript, whether it tells what its actor knows of its mail,
    whether it is written to the journal (never to the WAL), whether only State's method of its name writes it
    (never State.record), and how its data reads in one line."""

    __slots__ = (
        *("appends", "binds", "evidence", "fields", "journal", "known", "moves", "name", "needs", "recovery"),
        *("render", "starts", "transcript", "verb", "_shape"),
    )

    def __init__(
        self,
        name: str,
        fields: tuple[tuple[str, type], ...] = (),
        *,
        needs: tuple[str, ...] = (),
        moves: str | None = None,
        appends: bool = False,
        binds: bool = False,
        recovery: bool = False,
        starts: bool = False,
        evidence: str | None = None,
        transcript: bool = False,
        known: bool = False,
        journal: bool = False,
        verb: bool = False,
        render: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.name = name
        self.fields = fields
        self.needs = needs
        self._shape = tuple((key, kind) for key in needs for name, kind in fields if name == key)
        self.moves = moves
        self.appends = appends
        self.binds = binds or appends
        self.recovery = recovery
        self.starts = starts
        self.evidence = evidence
        self.transcript = transcript
        self.known = known
        self.journal = journal
        self.verb = verb
        self.render = render

    def __repr__(self) -> str:
        return f"Op({self.name!r})"

    def type_of(self, name: str) -> type | None:
        """The type a field of this op's data holds, None for a field it does not define."""
        return next((kind for key, kind in self.fields if key == name), None)

    def lacks(self, data: dict[str, Any]) -> str | None:
        """The first field a view is redone from that data lacks (or holds with the wrong type), None if none."""
        for key, kind in self._shape:
            if not isinstance(data.get(key), kind):
                return key
        return None

    def summary(self, data: dict[str, Any]) -> str:
        """What a person wants to see of a record first, on one line (not yet cleaned or cut: wal/history.py does
        both); for an op the table does not know, the data itself."""
        return self.render(data) if self.render is not None else text(data)


def data_of(rec: object) -> dict[str, Any]:
    """A record's data as a dict: {} when the record or its data is not one (untrusted input)."""
    data = rec.get("data") if isinstance(rec, dict) else None
    return data if isinstance(data, dict) else {}


def field(data: object, name: str, kind: type) -> Any:
    """data[name] when it is of kind, else None: a field of the wrong type counts as absent (a bool is no int)."""
    value = data.get(name) if isinstance(data, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        return None
    return value


def of(name: object) -> Op:
    """The Op of that name: the table's, or one of its own for a name the table does not know (kept, shown, never
    refused: it moves no view and renders its data as text)."""
    found = OPS.get(name) if isinstance(name, str) else None
    return found if found is not None else Op(name if isinstance(name, str) else repr(name))


def op_of(rec: object) -> Op:
    """The Op a record names (see `of`)."""
    return of(rec.get("op") if isinstance(rec, dict) else None)


def text(value: object) -> str:
    """A field as a summary shows it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    import json  # only `rehydrate log` and its like show a record's data as JSON: the hook path never loads json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def capture_counts(capture: dict[str, Any]) -> str:
    """A capture as counts, for `rehydrate log` and the brief's last-record line: "3 todos, 2 files edited, 1
    failed command" ("nothing captured" when all are empty, "not captured: <error>" on an error). The capture is
    untrusted (it arrived with the WAL): a field of the wrong type counts as empty, the error is cut to one line."""
    error = capture.get("error")
    if isinstance(error, str) and error:
        return "not captured: " + " ".join(error.split())[:200]
    failed = capture.get("failed")
    parts = []
    for n, one, many in (
        (_count(capture.get("todos"), "items"), "todo", "todos"),
        (_count(capture.get("edited"), "files"), "file edited", "files edited"),
        (len(failed) if isinstance(failed, list) else 0, "failed command", "failed commands"),
    ):
        if n:
            parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts) or "nothing captured"


def _count(part: object, key: str) -> int:
    """len(part[key]) plus part["more"] (what the bound left out), 0 for anything of the wrong shape."""
    if not isinstance(part, dict) or not isinstance(part.get(key), list):
        return 0
    more = part.get("more")
    return len(part[key]) + (more if isinstance(more, int) and not isinstance(more, bool) and more > 0 else 0)


# ------------------------------------------------------------------------------------------------ summaries


def _goal(data: dict[str, Any]) -> str:
    return f"goal: {text(data.get('goal', ''))}"


def _entry(data: dict[str, Any]) -> str:
    line = text(data.get("line", ""))
    return line[2:] if line.startswith("- ") else line


def _checkpoint(data: dict[str, Any]) -> str:
    return f"done: {text(data.get('done', ''))}; next: {text(data.get('next', ''))}"


def _handoff(data: dict[str, Any]) -> str:
    note = text(data.get("text", ""))
    return f"{len(note):,} characters: {note}"


def _rotate(data: dict[str, Any]) -> str:
    return f"archived {text(data.get('records', '?'))} record(s) to {text(data.get('archive', ''))}"


def _compaction(data: dict[str, Any]) -> str:
    get = data.get
    parts = [f"{k} {text(get(k))}" for k in ("phase", "trigger") if get(k) not in (None, "")]
    if get("summary_chars") is not None:
        parts.append(f"summary of {text(get('summary_chars'))} characters")
    captured = get("capture")
    if isinstance(captured, dict):  # counts, never the captured text
        parts.append(f"captured: {capture_counts(captured)}")
    return ", ".join(parts) or text(data)


def _resume(data: dict[str, Any]) -> str:
    return f"confidence {text(data.get('confidence', '?'))}, {text(data.get('chars', '?'))} characters"


# ------------------------------------------------------------------------------------------------ the table

_ENTRY = (
    *(("text", str), ("because", str), ("guard", str), ("contains", str), ("id", str), ("line", str)),
    ("supersedes", str),  # the id of the earlier entry this one takes out of force (layout.entry_lifts)
)
_EVIDENCE = ("evidence", dict)  # {"stamps": {path: sha256}, "approvals": {path: {...}}}: store/evidence/
_EVENT = (("session_id", str), ("transcript_path", str), ("transcript_size", int), ("harness", str))

INIT = Op(
    "init",
    (("goal", str), ("done_when", str), ("header", str)),
    needs=("goal", "header"),
    moves=NEXT,
    recovery=True,
    render=_goal,
    verb=True,
    binds=True,
    starts=True,
)
# an actor's first record in a log of its own: the goal's hash as init bound it
JOIN = Op("join", (("goal", str),), recovery=True, starts=True)
INVARIANT = Op(
    "invariant",
    (*_ENTRY, ("adopted", bool)),
    needs=("line",),
    moves=INVARIANTS,
    appends=True,
    render=_entry,
    verb=True,
)
REJECT = Op(
    "reject", (*_ENTRY, ("adopted", bool)), needs=("line",), moves=INVARIANTS, appends=True, render=_entry, verb=True
)
# an entry recorded by mistake taken out of force (its `text` is the entry's id): a line of its own in 10
WITHDRAW = Op(
    "withdraw",
    (("text", str), ("because", str), ("id", str), ("line", str)),
    needs=("line",),
    moves=INVARIANTS,
    appends=True,
    render=_entry,
    verb=True,
)
CHECKPOINT = Op(
    "checkpoint",
    (("goal", str), ("done", str), ("next", str), ("claims", list), ("reads", dict), ("rolled_back", dict), _EVIDENCE),
    needs=("goal", "done", "next"),
    moves=NEXT,
    recovery=True,
    evidence="carried",
    render=_checkpoint,
    verb=True,
)
HANDOFF_OP = Op("handoff", (("text", str), ("sha256", str)), needs=("text",), moves=HANDOFF, render=_handoff, verb=True)
TASKS_OP = Op("tasks", (("source", str), ("items", list)), moves=TASKS, verb=True)
MERGE = Op("merge", (("lines", list),), moves=NEXT)  # joins lines of work: renders 99 from the graph of heads
ROTATE = Op(
    "rotate",
    (
        ("archive", str),
        ("records", int),
        ("goal", dict),
        ("lines", list),
        ("adopted", list),
        ("checkpoint", dict),  # the archived log's last records, as their records (op, data, ...)
        ("handoff", dict),
        ("tasks", dict),
        ("mail", dict),
        _EVIDENCE,
    ),
    needs=("archive", "goal", "lines"),
    recovery=True,
    render=_rotate,
    verb=True,
    binds=True,
)
RECEIPT = Op(
    "receipt",
    (("argv", list), ("exit", int), ("tree", str), ("tree_after", str), ("claim", str)),
    verb=True,
    evidence="receipt",
)
STAMP = Op("stamp", (("files", dict), ("dropped", list), _EVIDENCE), verb=True, evidence="set")
# and the approval's fields (store/evidence/paths.py)
ACCEPT = Op("accept", (("file", str), _EVIDENCE), verb=True, evidence="set")
KEY = Op(
    "key", (("alg", str), ("public", str), ("id", str), ("replaces", str), ("state", str), ("endorsed", str)), verb=True
)
_COMPACTION = (("phase", str), ("trigger", str), ("summary_chars", int), ("summary_sha256", str), ("capture", dict))
COMPACTION = Op("compaction", (*_COMPACTION, *_EVENT), render=_compaction, transcript=True)
COMPACTED = Op("compacted", (*_COMPACTION, *_EVENT))
CANARY = Op("canary", (("event", str), ("token", str), ("rule", str), ("entry", str), ("passed", bool)))
MAIL = Op("mail", (("id", str), ("to", str), ("kind", str), ("path", str), ("sha256", str)))
READ = Op("read", (("mail", list),), known=True)  # the ids of the messages shown
PROMISE = Op("promise", (("id", str), ("text", str), ("done", bool)), known=True)
RESUME = Op(
    "resume",
    (("budget", int), ("chars", int), ("read", list), ("checks", str), ("confidence", str), ("brief", dict), *_EVENT),
    journal=True,
    render=_resume,
    transcript=True,
)
DELIVERY = Op("delivery", (("of", str), ("verdict", str), ("detail", str), ("ts", str)), journal=True)
ACK = Op("ack", (("next", str), ("rejected", list), ("covered", float), ("line", str), ("via", str)), journal=True)
PRECOMPRESS = Op("precompress", _EVENT, journal=True, transcript=True)

OPS: dict[str, Op] = {
    op.name: op
    for op in (
        INIT,
        JOIN,
        INVARIANT,
        REJECT,
        WITHDRAW,
        CHECKPOINT,
        HANDOFF_OP,
        TASKS_OP,
        MERGE,
        ROTATE,
        RECEIPT,
        STAMP,
        ACCEPT,
        KEY,
        COMPACTION,
        COMPACTED,
        CANARY,
        MAIL,
        READ,
        PROMISE,
        RESUME,
        DELIVERY,
        ACK,
        PRECOMPRESS,
    )
}

NAME = r"^[a-z][a-z0-9_-]{0,31}$"  # what an op's name may be (State.record refuses another)
# the ops only State's method of the same name writes (it checks and binds what they carry): State.record refuses them
OWN = frozenset(op.name for op in OPS.values() if op.verb)
RECOVERY_POINTS = frozenset(op.name for op in OPS.values() if op.recovery)
ENTRIES = frozenset(op.name for op in OPS.values() if op.appends)  # a decision or a rejected approach: a line of 10
# The ops a replaceable view is redone from by its record alone: a merge record moves 99 too, but it renders from the
# graph of heads (store/wal/graph.py), so reconciliation never redoes a lagging 99 from one.
PRODUCERS = {
    v: tuple(op.name for op in OPS.values() if op.moves == v and op is not MERGE) for v in (NEXT, HANDOFF, TASKS)
}
