"""The state store: latches, checkpoints, the handoff, reconciliation and verification.

Every write follows the redo-log rule: under one lock, (1) reconcile the views with the WAL, (2) append a WAL record
that carries everything needed to redo the view update, (3) update the view. A crash between (2) and (3) leaves a view
that lags the WAL's last record; the next command redoes it from that record and says so. A view that differs in any
other way was edited by hand: it is reported, never overwritten silently.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator

from rehydrate import safejson
from rehydrate.errors import RehydrateError, StateMissing, UnsafeFile, UsageError
from rehydrate.store import fsio, wal
from rehydrate.store import views as layout
from rehydrate.store.locate import init_location, locate, resolve_actor
from rehydrate.store.views import GOAL, HANDOFF, INVARIANTS, NEXT

PRODUCERS = {NEXT: ("checkpoint", "init"), HANDOFF: ("handoff",)}  # the ops that write each replaceable view
MAX_VIEW = 4 << 20  # a view file larger than this is not read into a brief
# An archive named by a rotate record: a plain file name in state/archive/, nothing else (the record is untrusted).
ARCHIVE_NAME = r"^archive/[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.jsonl\Z"

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable
    from typing import Any

    from rehydrate.store.wal import Record


class Problem:
    """One discrepancy, named with its file and (where it has one) its line."""

    def __init__(self, code: str, file: str, line: int | None, message: str, repairable: bool = False) -> None:
        self.code = code
        self.file = file
        self.line = line
        self.message = message
        self.repairable = repairable

    def __repr__(self) -> str:
        return f"Problem({self.code!r}, {self.file!r}, {self.line!r}, {self.message!r})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "repairable": self.repairable,
        }


class Outcome:
    """What a command did: the record it wrote (if any), what reconciliation repaired, what is still wrong."""

    def __init__(
        self,
        record: Record | None = None,
        repaired: list[str] | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        self.record = record
        self.repaired: list[str] = repaired if repaired is not None else []
        self.problems: list[Problem] = problems if problems is not None else []
        self.extra: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Outcome(repaired={self.repaired!r}, problems={self.problems!r})"

    @property
    def ok(self) -> bool:
        return not self.problems


class _Recon:
    """What reconciliation found, carried through one command."""

    def __init__(self, last: Record, prev: Record | None, problems: list[Problem], repaired: list[str]) -> None:
        self.last = last
        self.prev = prev
        self.seen: dict[
            str, bytes | None
        ] = {}  # view bytes as reconciliation read them (valid while nothing was repaired)
        self.problems = problems
        self.repaired = repaired
        self.inv_bytes: bytes | None = None
        self.inv_ok = True  # 10_invariants.md holds every recorded line, in order
        self.unrecorded: list[tuple[int, str]] = []
        self.cache = _Seen()  # what this clone has seen of the log, kept up to date by every append
        self.lost: dict[str, Any] | None = None  # a rollback the next checkpoint acknowledges


def _sha(data: bytes | None) -> str | None:
    return None if data is None else wal.sha256(data)


def _lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


_OWN_TEMP = r"^\..+\.[0-9]+\.[0-9a-f]{8}\.tmp$"  # fsio.replace's temporary files, and nothing else


def _conflict_lines(data: bytes | None, *, paired: bool = True) -> list[int]:
    """The line numbers of git's conflict markers in a file. With paired, only if an opening `<<<<<<<` line is
    followed by a closing `>>>>>>>` line (a lone `=======` is a Markdown heading's underline, not a conflict)."""
    if not data or not any(m in data for m in (wal.MARKERS[:1] if paired else wal.MARKERS)):
        return []
    lines = data.split(b"\n")
    found = [n for n, line in enumerate(lines, 1) if wal.is_conflict_marker(line)]
    if paired:
        opened = [n for n in found if lines[n - 1].startswith(b"<")]
        if not opened or not any(n > opened[0] and lines[n - 1].startswith(b">") for n in found):
            return []
    return found


def _conflict_message(rel: str, first: int) -> str:
    return (
        f"an unresolved git merge conflict (markers from line {first}); rehydrate changes nothing in this file "
        f"until the merge is finished: take the side that matches the WAL (`git checkout --ours -- {rel}` or "
        f"`--theirs`), or delete the file and run `rehydrate verify --repair` to redo it from the WAL; then "
        f"`git add {rel}`. Or `git merge --abort`"
    )


def _complete_lines(data: bytes) -> list[bytes]:
    """The lines that end with a newline (a torn last line is not one of them)."""
    return data.split(b"\n")[:-1]


def _quoted(text: str, limit: int) -> str:
    """A recorded text quoted in a message: one line, no control or invisible characters (records are untrusted)."""
    return layout.clean(text[: 4 * limit], one_line=True)[:limit]


def _first_difference(a: list[str], b: list[str]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i + 1
    return min(len(a), len(b)) + 1


Bound = tuple[str, bool]  # a recorded line of 10_invariants.md, and whether its place in its actor's order is bound


def _recorded_lines(rec: Record) -> list[Bound]:
    """The lines of 10_invariants.md that a record binds. A line adopted from a hand edit is bound where it stands."""
    op, data = rec.get("op"), rec.get("data")
    if not isinstance(data, dict):
        return []
    if op == "init":
        return [(ln, True) for ln in str(data.get("header", "")).split("\n") if ln.strip()]
    if op in ("invariant", "reject") and isinstance(data.get("line"), str):
        return [(data["line"], not data.get("adopted"))]
    if op == "rotate" and isinstance(data.get("lines"), list):
        adopted: list[Any] = data["adopted"] if isinstance(data.get("adopted"), list) else []
        return [(ln, True) for ln in data["lines"] if isinstance(ln, str)] + [
            (ln, False) for ln in adopted if isinstance(ln, str)
        ]
    return []


def _actor_lines(records: Iterator[Record]) -> list[Bound]:
    """One actor's recorded lines in order. A rotate record carries all lines recorded before it, so it resets."""
    lines: list[Bound] = []
    for rec in records:
        if rec.get("op") == "rotate":
            lines = []
        lines.extend(_recorded_lines(rec))
    return lines


def check_lines(
    file_lines: list[str], recorded: dict[str, list[Bound]] | dict[str, list[str]]
) -> tuple[list[tuple[str, int, str]], list[int]]:
    """Bind 10_invariants.md line by line: every recorded line present verbatim, in its actor's order.

    Returns (violations as (code, line number, message), line numbers that no record carries).
    """
    where: dict[str, list[int]] = {}
    for n, text in enumerate(file_lines, 1):
        where.setdefault(text, []).append(n)
    used: set[int] = set()
    out: list[tuple[str, int, str]] = []
    for actor in sorted(recorded):
        cursor = 0
        for item in recorded[actor]:
            text, ordered = (item, True) if isinstance(item, str) else item
            free = [n for n in where.get(text, []) if n not in used]
            after = [n for n in free if n > cursor]
            if after and ordered:
                used.add(after[0])
                cursor = after[0]
                continue
            if free and not ordered:  # adopted from a hand edit: bound where it stands
                used.add(free[0])
                continue
            if free:
                used.add(free[0])
                out.append(
                    (
                        "latch-reordered",
                        free[0],
                        f"latch violation: a recorded line was moved out of its order: {_quoted(text, 120)}",
                    )
                )
                continue
            ident = layout.entry_id(text)
            changed = [
                n for n, t in enumerate(file_lines, 1) if ident and n not in used and layout.entry_id(t) == ident
            ]
            if changed:
                used.add(changed[0])
                out.append(
                    (
                        "latch-changed",
                        changed[0],
                        f"latch violation: a recorded line was changed; it was: {_quoted(text, 160)}",
                    )
                )
            else:
                out.append(
                    (
                        "latch-missing",
                        cursor + 1,
                        f"latch violation: a recorded line is missing (expected here): {_quoted(text, 160)}",
                    )
                )
    unrecorded = [n for n, t in enumerate(file_lines, 1) if t.strip() and n not in used]
    return out, unrecorded


_SEEN_MAX = 16 << 10  # the cache is small; a bigger file is not ours
_RING = 64  # how many of the last records the cache remembers (seq and hash prefix)
_NEXT_CAP = 300  # the most characters of a checkpoint's next action the cache keeps


class _Seen:
    """wal/.<actor>.seen: what this clone last saw of its actor's log. A cache, not state: it is git-ignored, never
    synced, and untrusted (missing, garbage, huge, a link or a FIFO all read as "nothing known").

    - fp: the log's identity (inode, size, mtime) after this clone last wrote or checked it: while it holds, nothing
      outside rehydrate touched the log and its tail is enough; otherwise the whole chain is checked once;
    - ring: (seq, first 16 hex digits of h) of the last records seen, oldest first; the last is the log's end;
    - cp: the last checkpoint seen: its seq and its next action;
    - lost: a rollback found and not yet acknowledged (see `State._follow`).
    """

    def __init__(self) -> None:
        self.fp = ""
        self.ring: list[tuple[int, str]] = []
        self.cp: tuple[int, str] | None = None
        self.lost: dict[str, Any] | None = None

    @classmethod
    def load(cls, path: str) -> _Seen | None:
        try:
            data = fsio.read_bytes(path, _SEEN_MAX)
            obj: Any = safejson.loads(data) if data else None
        except (RehydrateError, ValueError):
            return None
        if not isinstance(obj, dict):
            return None
        seen = cls()
        try:
            _need(isinstance(obj, dict) and obj.get("v") == 1)
            seen.fp = obj["fp"]
            seen.ring = [(int(x[0]), x[1]) for x in obj["ring"]]
            cp = obj.get("cp")
            seen.cp = (int(cp[0]), cp[1]) if cp is not None else None
            lost = obj.get("lost")
            _need(isinstance(seen.fp, str) and len(seen.fp) <= 100 and 0 < len(seen.ring) <= _RING)
            for _, h in [*seen.ring, *([seen.cp] if seen.cp else [])]:
                _need(isinstance(h, str) and len(h) <= _NEXT_CAP)
            _need(all(a[0] < b[0] for a, b in zip(seen.ring, seen.ring[1:], strict=False)))
            if lost is not None:
                _need(isinstance(lost, dict) and _lost_ok(lost))
                seen.lost = lost
        except (KeyError, TypeError, ValueError, IndexError, OverflowError):
            return None
        return seen

    def dump(self) -> bytes:
        return wal.canonical(
            {
                "v": 1,
                "fp": self.fp,
                "ring": [list(x) for x in self.ring[-_RING:]],
                "cp": [self.cp[0], layout.clean(self.cp[1], one_line=True)[:_NEXT_CAP]] if self.cp else None,
                "lost": self.lost,
            }
        )

    @property
    def end(self) -> tuple[int, str] | None:
        return self.ring[-1] if self.ring else None

    def saw(self, rec: Record) -> None:
        """A record of the log, in order."""
        seq = rec["seq"]
        while self.ring and self.ring[-1][0] >= seq:
            self.ring.pop()
        self.ring.append((seq, str(rec["h"])[:16]))
        if len(self.ring) > 4 * _RING:
            del self.ring[:-_RING]
        data = rec["data"]
        if rec["op"] == "rotate" and isinstance(data.get("checkpoint"), dict):
            data, seq = data["checkpoint"].get("data"), data["checkpoint"].get("seq")
        elif rec["op"] != "checkpoint":
            return
        if isinstance(data, dict) and isinstance(seq, int) and isinstance(data.get("next"), str):
            self.cp = (seq, data["next"][: 4 * _NEXT_CAP])  # cleaned once, when written (a full pass sees many)


def _need(condition: bool) -> None:
    if not condition:
        raise ValueError("not a cache this version wrote")


def _lost_ok(lost: dict[str, Any]) -> bool:
    ints = all(isinstance(lost.get(k), int) and not isinstance(lost.get(k), bool) for k in ("count", "to", "end"))
    nxt = lost.get("next")
    return (
        ints
        and isinstance(lost.get("exact"), bool)
        and isinstance(lost.get("h"), str)
        and len(lost["h"]) <= 64
        and (nxt is None or (isinstance(nxt, str) and len(nxt) <= _NEXT_CAP))
    )


def _lost_message(lost: dict[str, Any]) -> str:
    n = lost["count"]
    first = lost["to"] - n + 1
    span = f"record {lost['to']}" if n == 1 else f"records {first}-{lost['to']}"
    count = f"{'' if lost['exact'] else 'at least '}{n} record{'s' if n != 1 else ''} this clone saw"
    nxt = lost.get("next")
    after = f"their last checkpoint's next action: {nxt[:160]}" if nxt else "none of them was a checkpoint"
    return (
        f"rolled back: {count} are gone ({span}; the log ends at record {lost['end']}); {after}. "
        "A branch switch or a restore of state/ from git does this; otherwise records were deleted. "
        "Reported until the next checkpoint, which records it"
    )


class _ScanInfo:
    """What one pass over the whole log learned for the rollback check."""

    def __init__(self, want: set[int]) -> None:
        self.want = want  # the seqs whose hashes the cache remembers
        self.present: dict[int, str] = {}
        self.first: int | None = None
        self.seen = _Seen()  # the log as it is now, in the cache's terms

    def add(self, rec: Record) -> None:
        if self.first is None:
            self.first = rec["seq"]
        if rec["seq"] in self.want:
            self.present[rec["seq"]] = str(rec["h"])[:16]
        self.seen.saw(rec)


def _rolled_back(seen: _Seen, info: _ScanInfo, last: Record) -> dict[str, Any] | None:
    """The records the cache saw that the log no longer holds, or None. The newest remembered record still in the
    log is where the histories part; records before the log's first (archived by a rotate) are not lost."""
    end = seen.end
    if end is None:
        return None
    first = info.first if info.first is not None else last["seq"]
    fork: int | None = None
    for seq, h in reversed(seen.ring):
        if seq < first or info.present.get(seq) == h:
            fork = seq
            break
    if fork == end[0]:
        return None
    exact = fork is not None
    if fork is None:  # the histories part before what the cache remembers
        fork = min(int(last["seq"]), seen.ring[0][0] - 1)
    nxt = seen.cp[1] if seen.cp and seen.cp[0] > fork else None
    return {"count": end[0] - fork, "exact": exact, "to": end[0], "h": end[1], "end": int(last["seq"]), "next": nxt}


class State:
    """One state folder, written by one actor. Open it with State.open or create it with State.init."""

    def __init__(self, root: str, actor: str) -> None:
        self.root = root
        self.actor = actor
        self.wal_dir = os.path.join(root, layout.WAL_DIR)
        self.wal_path = os.path.join(self.wal_dir, actor + ".jsonl")
        # A cache of the log's identity after this actor's last write: if it still matches, nothing outside rehydrate
        # touched the log, and reading its tail is enough; if not, the whole chain is checked once.
        self.seen_path = os.path.join(self.wal_dir, f".{actor}.seen")

    # ----------------------------------------------------------------------------------------------- opening

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, actor: str | None = None) -> State:
        root = locate(path)
        state = cls(root, resolve_actor(actor))
        if not fsio.check_dir(root):
            raise StateMissing(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
        if not fsio.check_dir(state.wal_dir) or not fsio.check_regular(state.wal_path):
            others = state._actors()
            if others:
                raise StateMissing(
                    f"actor {state.actor!r} has no log in {state.rel(layout.WAL_DIR)}/ (found: {', '.join(others)})",
                    f"set REHYDRATE_ACTOR or --actor to {others[0]!r}; one folder serves one actor until team mode",
                )
            raise StateMissing(f"no WAL in {root}", "run `rehydrate init --goal TEXT` to create the state")
        return state

    @classmethod
    def init(
        cls,
        path: str | os.PathLike[str] | None,
        goal: str,
        done_when: str | None = None,
        actor: str | None = None,
    ) -> tuple[State, Outcome]:
        """Create the state folder, its WAL and views. The goal is write-once: an existing one is never replaced."""
        goal = layout.clean(goal)
        done_when = layout.clean(done_when) if done_when else None
        if not goal:
            raise UsageError("the goal is empty", "say what the task is: rehydrate init --goal 'Ship X'")
        _cap("goal", goal, layout.MAX_GOAL)
        _cap("done-when", done_when or "", layout.MAX_GOAL)
        root = init_location(path)
        state = cls(root, resolve_actor(actor))
        parent = os.path.dirname(root)
        if not os.path.isdir(parent):
            raise RehydrateError(f"cannot create {root}: {parent} is not a folder")
        fsio.ensure_dir(root, "mkdir.state")
        # No sync here: init syncs the state folder when it writes its first view, before it returns
        # (tests/test_crash_points.py shows a sync here would be redundant).
        fsio.ensure_dir(state.wal_dir, None)
        out = Outcome()
        with fsio.locked(root):
            if fsio.check_regular(os.path.join(root, GOAL)):
                raise RehydrateError(
                    f"{state.rel(GOAL)} exists: the goal is write-once",
                    "keep working on it (`rehydrate resume`), or archive the folder and init a new one",
                )
            if fsio.check_regular(state.wal_path) and os.path.getsize(state.wal_path) > 0:
                wal_rel = state.rel(layout.WAL_DIR, state.actor + ".jsonl")
                try:
                    tail = wal.read_tail(state.wal_path, 1)
                except wal.Conflicted:
                    raise state._conflicted(wal_rel) from None
                except wal.BadRecord as e:
                    raise RehydrateError(
                        f"{wal_rel} already holds records, damaged ({e})", "`rehydrate verify` lists every problem"
                    ) from None
                if tail.records:
                    raise RehydrateError(
                        f"{state.rel(layout.WAL_DIR, state.actor + '.jsonl')} already holds a state",
                        "run `rehydrate verify --repair` to finish a crashed init",
                    )
                state._cut_torn(tail, out)
            for name in (INVARIANTS, NEXT, HANDOFF):
                if fsio.check_regular(os.path.join(root, name)):
                    raise RehydrateError(
                        f"{state.rel(name)} exists but no WAL does", "move it out of the state folder, then init again"
                    )
            from rehydrate.store import gitinfo

            git = gitinfo.snapshot(root)
            rec: Record = {
                "v": wal.VERSION,
                "seq": 1,
                "ts": wal.now(),
                "actor": state.actor,
                "op": "init",
                "data": {"goal": goal, "done_when": done_when, "header": layout.INVARIANTS_HEADER},
                "git": git,
                "prev": None,
            }
            rec["views"] = {
                GOAL: wal.sha256(layout.render_goal(goal, done_when).encode()),
                INVARIANTS: wal.sha256(layout.INVARIANTS_HEADER.encode()),
                NEXT: wal.sha256(state._render_next(rec).encode()),
            }
            rec = wal.seal(rec)
            fsio.append(state.wal_path, wal.encode(rec), "wal.append", create=True)
            seen = _Seen()
            seen.saw(rec)
            state._save_cache(seen)
            state._apply(rec)
            out.record = rec
        return state, out

    def _actors(self) -> list[str]:
        try:
            names = os.listdir(self.wal_dir)
        except OSError:
            return []
        return sorted(n[:-6] for n in names if n.endswith(".jsonl") and re.match(layout.ACTOR, n[:-6]))

    def rel(self, *parts: str) -> str:
        """A path as shown to users: from the state folder's parent (state/wal/agent.jsonl)."""
        return os.path.join(os.path.basename(self.root), *parts)

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    # ----------------------------------------------------------------------------------------------- rendering

    def _render_next(self, rec: Record) -> str:
        data = rec["data"]
        git = rec.get("git") or {}
        head = git.get("head") if isinstance(git, dict) else None
        if rec["op"] == "init":
            return layout.render_next(
                None,
                rec["ts"],
                head,
                data["goal"].split("\n")[0],
                "nothing yet (state initialized)",
                "start on the goal; record decisions and rejected approaches as they happen; "
                "checkpoint after each step",
            )
        return layout.render_next(rec["seq"], rec["ts"], head, data["goal"], data["done"], data["next"])

    # ----------------------------------------------------------------------------------------------- redo

    def _apply(self, rec: Record) -> list[str]:
        """Bring the views up to a record. Idempotent: used both to write and to redo after a crash."""
        try:
            return self._apply_record(rec)
        except (KeyError, TypeError, AttributeError) as e:  # a record with a valid hash but not our shape
            raise RehydrateError(
                f"record {rec.get('seq')} ({rec.get('op')}) of {self.rel(layout.WAL_DIR)}/ "
                f"lacks what its op needs ({e})",
                "it was not written by this version of rehydrate; restore the WAL from git or move it away",
            ) from None

    def _apply_record(self, rec: Record) -> list[str]:
        done: list[str] = []
        op = rec["op"]
        data = rec["data"]
        if op == "init":
            for name, text in (
                (INVARIANTS, data["header"]),
                (NEXT, self._render_next(rec)),
                (GOAL, layout.render_goal(data["goal"], data.get("done_when"))),
                (layout.GITIGNORE, layout.GITIGNORE_TEXT),
                (layout.GITATTRIBUTES, layout.GITATTRIBUTES_TEXT),
            ):
                if not fsio.check_regular(self.path(name)):
                    fsio.replace(self.path(name), text.encode(), "view.replace")
                    done.append(name)
        elif op in ("invariant", "reject"):
            if self._append_line(data["line"], redo=False):
                done.append(INVARIANTS)
        elif op == "checkpoint":
            fsio.replace(self.path(NEXT), self._render_next(rec).encode(), "view.replace")
            done.append(NEXT)
        elif op == "handoff":
            fsio.replace(self.path(HANDOFF), layout.render_handoff(data["text"]).encode(), "view.replace")
            done.append(HANDOFF)
        elif op == "rotate":
            self._check_archive(rec, None)
            fsio.ensure_dir(self.path(layout.ARCHIVE_DIR), "mkdir.archive")
            self._check_archive(rec, None)  # the folder as it is now that it exists
            fsio.link(self.wal_path, self.path(data["archive"]), "rotate.link")
            fsio.replace(self.wal_path, wal.encode(rec), "rotate.replace")
            done.append(data["archive"])
        return done

    def _check_archive(self, rec: Record, line: int | None) -> None:
        """A rotate record's archive must be a plain file in this state folder's archive/, a real folder: the
        record may have come with a `git pull`, and finishing it writes there. Raises, naming the record."""
        why = _archive_error(rec)
        folder = self.path(layout.ARCHIVE_DIR)
        st = fsio.lstat(folder)
        if why is None and st is not None:
            inside = os.path.join(os.path.realpath(self.root), layout.ARCHIVE_DIR)
            if not stat.S_ISDIR(st.st_mode) or os.path.realpath(folder) != inside:
                why = f"{self.rel(layout.ARCHIVE_DIR)} is not a real folder inside the state folder"
        if why is not None:
            wal_rel = self.rel(layout.WAL_DIR, os.path.basename(self.wal_path))
            where = f"{wal_rel} line {line}" if line else wal_rel
            raise RehydrateError(
                f"{where}: refusing record {rec.get('seq')} (rotate): {why} [unsafe-path]; nothing was written",
                "a rotate record names its archive as archive/<file>.jsonl; this one was not written by rehydrate "
                "(or archive/ was replaced): restore the WAL from git or move it away, and check who committed it",
            )

    @staticmethod
    def _inv_lags(data: bytes, line: str) -> bool:
        """10_invariants.md lags its last record (a crash between the two writes), as opposed to a hand edit of it:
        the line is not there, no line carries its id, and what ends the file is at most a torn prefix of it."""
        encoded = line.encode()
        complete = _complete_lines(data)
        if encoded in complete:
            return False
        ident = layout.entry_id(line)
        if ident and any(layout.entry_id(t.decode("utf-8", "replace")) == ident for t in complete):
            return False
        partial = data[data.rfind(b"\n") + 1 :]
        return not partial or encoded.startswith(partial)

    def _append_line(self, line: str, *, redo: bool) -> bool:
        """Append a recorded line to 10_invariants.md; on redo, unless it is there. A torn prefix of it is cut."""
        path = self.path(INVARIANTS)
        current = fsio.read_bytes(path, MAX_VIEW) or b""
        encoded = line.encode()
        if redo and encoded in _complete_lines(current):
            return False
        cut = current.rfind(b"\n") + 1
        partial = current[cut:]
        if partial and encoded.startswith(partial):  # our own torn append
            fsio.truncate(path, cut, "view.truncate")
            partial = b""
        sep = b"\n" if partial else b""
        fsio.append(path, sep + encoded + b"\n", "view.append", create=True)
        return True

    def _cut_torn(self, tail: wal.Tail, out: Outcome) -> None:
        """Cut a torn last line off the WAL, keeping the cut bytes in a .broken file beside it."""
        n = wal.line_number(self.wal_path, tail.torn_offset)
        broken = _free_name(self.wal_path + ".broken")
        fsio.replace(broken, tail.torn, "repair.broken")
        fsio.truncate(self.wal_path, tail.torn_offset, "repair.truncate")
        out.repaired.append(
            f"cut a torn last line off {self.rel(layout.WAL_DIR, os.path.basename(self.wal_path))} "
            f"(line {n}, {len(tail.torn)} bytes: {tail.torn_reason}); "
            f"kept in {self.rel(layout.WAL_DIR, os.path.basename(broken))}"
        )

    # ----------------------------------------------------------------------------------------------- reconcile

    def _read_view(
        self, name: str, problems: list[Problem], seen: dict[str, bytes | None] | None = None
    ) -> bytes | None:
        try:
            data = fsio.read_bytes(self.path(name), MAX_VIEW)
            if seen is not None:
                seen[name] = data
            return data
        except UnsafeFile as e:
            problems.append(Problem("not-regular-file", self.rel(name), None, e.message))
        except RehydrateError as e:
            problems.append(Problem("unreadable", self.rel(name), None, e.message))
        return b""  # unreadable: compared as empty, so it never matches

    def _reconcile(self, repair: bool) -> _Recon:
        """The recognize step, cheap path: the WAL's tail against the views. Lock held by the caller."""
        problems: list[Problem] = []
        repaired: list[str] = []
        if not fsio.check_dir(self.root):
            raise StateMissing(f"no state folder at {self.root}")
        if not fsio.check_dir(self.wal_dir):
            raise StateMissing(f"no WAL folder at {self.rel(layout.WAL_DIR)}", "run `rehydrate init --goal TEXT`")
        for folder in (self.root, self.wal_dir):
            for name in os.listdir(folder):
                if re.match(_OWN_TEMP, name):
                    where = os.path.relpath(os.path.join(folder, name), os.path.dirname(self.root))
                    if repair:
                        fsio.unlink(os.path.join(folder, name))
                        repaired.append(f"removed a temporary file left by a crash: {where}")
                    else:
                        problems.append(Problem("stale-temp", where, None, "temporary file left by a crash", True))
        wal_rel = self.rel(layout.WAL_DIR, os.path.basename(self.wal_path))
        tail = self._tail(wal_rel)  # a conflicted log or damage before the tail raises here, before any change
        seen = _Seen.load(self.seen_path)
        end = tail.torn_offset if tail.torn else None
        info: _ScanInfo | None = None
        if seen is None or seen.fp != self._fingerprint() or not self._ends_as_seen(seen, tail):
            info = self._check_chain(wal_rel, end, seen)  # changed outside rehydrate: the whole chain, once
        if tail.torn and self._only_newline_lost(tail):
            n = wal.line_number(self.wal_path, tail.torn_offset)
            if repair:
                fsio.append(self.wal_path, b"\n", "repair.newline")
                repaired.append(f"put back the final newline of {wal_rel} (line {n} is a whole, valid record)")
                tail = self._tail(wal_rel)
            else:
                problems.append(Problem("missing-newline", wal_rel, n, "the last record lost its final newline", True))
                tail.records.append((tail.torn_offset, wal.decode(tail.torn)))
                tail.torn = b""
        if tail.torn:
            if repair:
                scratch = Outcome()
                self._cut_torn(tail, scratch)
                repaired += scratch.repaired
                tail = self._tail(wal_rel)
            else:
                n = wal.line_number(self.wal_path, tail.torn_offset)
                problems.append(Problem("torn-tail", wal_rel, n, tail.torn_reason, True))
        if not tail.records:
            if fsio.lstat(self.path(GOAL)) is not None:
                raise RehydrateError(
                    f"{wal_rel} holds no record, but {self.rel(GOAL)} exists: the log was emptied or lost",
                    f"restore it from git (`git checkout -- {self.rel(layout.WAL_DIR)}`); to start over instead, "
                    "move the state folder away and run `rehydrate init --goal TEXT`",
                )
            raise StateMissing(
                f"{wal_rel} holds no record (a crash during init?)", "run `rehydrate init --goal TEXT` again"
            )
        last_offset, last = tail.records[-1]
        prev = tail.records[-2][1] if len(tail.records) > 1 else None
        if prev is not None and last["prev"] != prev["h"]:
            n = wal.line_number(self.wal_path, last_offset)
            problems.append(Problem("chain-broken", wal_rel, n, "the last record does not follow the one before it"))
        recon = _Recon(last, prev, problems, repaired)
        if info is not None and end is not None:
            for off, rec in tail.records:  # a record whose newline was put back lay past the pass's end
                if off >= end:
                    info.add(rec)
        if last["op"] == "rotate" and last_offset > 0:
            self._check_archive(last, wal.line_number(self.wal_path, last_offset))
            if repair:
                self._apply(last)
                repaired.append(f"finished an interrupted rotate ({last['data'].get('archive')})")
                recon.prev = None
            else:
                problems.append(Problem("interrupted-rotate", wal_rel, None, "a rotate was interrupted", True))
        self._follow(recon, seen, info, repair)
        if recon.lost is not None:
            problems.append(Problem("rolled-back", wal_rel, None, _lost_message(recon.lost)))
        self._reconcile_views(recon, repair)
        return recon

    @staticmethod
    def _ends_as_seen(seen: _Seen, tail: wal.Tail) -> bool:
        last = tail.records[-1][1] if tail.records else None
        return last is not None and seen.end == (last["seq"], str(last["h"])[:16])

    def _follow(self, recon: _Recon, seen: _Seen | None, info: _ScanInfo | None, repair: bool) -> None:
        """Compare the log with what this clone saw of it (the cache), and keep the cache up to date.

        A log that no longer holds records this clone saw was rolled back: `git checkout` or `git stash` of
        state/, a branch switch, a deleted line. The records' hashes still chain, so nothing else would notice.
        It is reported by every command (code rolled-back: how many records, their last checkpoint's next action)
        until the next checkpoint, whose record carries what was lost (data.rolled_back) and so ends the report;
        other records (resume, compaction, ...) keep it pending. If the lost records come back (the branch is
        checked out again) before that, the report ends too. Without a cache (a fresh clone, a deleted or
        garbled cache file) nothing is known and nothing is reported."""
        last = recon.last
        if info is None:  # the log is as this clone left it
            recon.cache = seen if seen is not None else _Seen()
            recon.lost = recon.cache.lost
        else:
            pending = seen.lost if seen is not None else None
            if pending is not None and info.present.get(pending["to"]) == pending["h"]:
                pending = None  # the records are back
            found = _rolled_back(seen, info, last) if seen is not None else None
            if found is not None and pending is not None:
                found["count"] += pending["count"]
                found["exact"] = found["exact"] and pending["exact"]
                found["next"] = found["next"] or pending["next"]
            recon.cache = info.seen
            recon.lost = recon.cache.lost = found or pending
        fp = self._fingerprint()
        if repair and (info is not None or recon.cache.fp != fp):
            recon.cache.fp = fp
            self._save_cache(recon.cache)

    def _save_cache(self, seen: _Seen) -> None:
        if not seen.fp:
            seen.fp = self._fingerprint()
        fsio.write_hint(self.seen_path, seen.dump())

    def _tail(self, wal_rel: str) -> wal.Tail:
        try:
            return wal.read_tail(self.wal_path, 2)
        except FileNotFoundError:
            raise StateMissing(f"no WAL at {wal_rel}", "run `rehydrate init --goal TEXT`") from None
        except wal.Conflicted:
            raise self._conflicted(wal_rel) from None
        except wal.BadRecord as e:
            bad = self._first_bad_line()
            if bad is not None and bad[3]:  # the bad line is the last one (an oversized torn write): a torn tail
                _, offset, reason, _ = bad
                fd = fsio.open_read(self.wal_path)
                assert fd is not None
                try:
                    size = os.fstat(fd).st_size
                    torn = os.pread(fd, size - offset, offset)
                finally:
                    os.close(fd)
                before = wal.read_tail(self.wal_path, 2, end=offset)
                return wal.Tail(before.records, torn, offset, reason)
            raise self._damage(wal_rel, bad, str(e)) from None

    @staticmethod
    def _only_newline_lost(tail: wal.Tail) -> bool:
        """The torn piece is a whole, valid record that follows the one before it: only its newline is missing
        (an editor or a merge tool stripped it). It is kept, not cut."""
        if tail.torn.endswith(b"\n"):
            return False
        try:
            rec = wal.decode(tail.torn)
        except wal.BadRecord:
            return False
        before = tail.records[-1][1] if tail.records else None
        return bool(rec["prev"] == (before["h"] if before else None))

    def _damage(self, wal_rel: str, bad: tuple[int, int, str, bool] | None, fallback: str) -> RehydrateError:
        where = f"line {bad[0]}: {bad[2]}" if bad else fallback
        return RehydrateError(
            f"{wal_rel} is damaged before its last line ({where})",
            f"the WAL cannot be repaired safely: restore it from git (`git checkout -- {wal_rel}`) "
            "or move it away; `rehydrate verify` lists every problem",
        )

    def _first_bad_line(self) -> tuple[int, int, str, bool] | None:
        """(line number, byte offset, reason, whether it is the last line) of the first bad line of the log."""
        found: tuple[int, int, str] | None = None
        for line in wal.iter_lines(self.wal_path):
            if found is not None:
                return (*found, False)
            if line.raw is None:
                found = (line.number, line.offset, f"a line longer than {wal.MAX_LINE:,} bytes")
                continue
            try:
                wal.decode(line.raw)
            except wal.BadRecord as e:
                found = (line.number, line.offset, str(e))
        return (*found, True) if found is not None else None

    def _conflicted(self, wal_rel: str) -> RehydrateError:
        """The log holds git's conflict markers (an unfinished merge): say where, and how to finish the merge."""
        lines = [line.number for line in wal.iter_lines(self.wal_path) if line.raw and wal.is_conflict_marker(line.raw)]
        where = f"line {lines[0]}" if lines else "its tail"
        return RehydrateError(
            f"{wal_rel} {where}: an unresolved git merge conflict ({len(lines)} marker line(s)) [merge-conflict]; "
            "rehydrate changes nothing in it until the merge is finished",
            f"this actor's log was written on both branches, and a log cannot be merged line by line (both sides' "
            f"records follow the same one): keep one side (`git checkout --ours -- {wal_rel}` or `--theirs`), then "
            f"`git add {wal_rel}` and `rehydrate verify --repair` (the clone that wrote the other side reports its "
            "records as rolled back); or `git merge --abort`. Give each clone its own actor (REHYDRATE_ACTOR) so "
            "that logs never conflict",
        )

    def _fingerprint(self) -> str:
        st = os.stat(self.wal_path)
        return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"

    def _check_chain(self, wal_rel: str, end: int | None, seen: _Seen | None) -> _ScanInfo:
        """The whole log, once, when it changed outside rehydrate (or nothing is known of it): every record's hash
        and chain, and what the rollback check needs. Bytes from `end` on (a torn tail) are left to the repair."""
        want = {seq for seq, _ in seen.ring} if seen is not None else set()
        if seen is not None and seen.lost is not None:
            want.add(seen.lost["to"])
        info = _ScanInfo(want)
        for p in _scan_log(self.wal_path, wal_rel, end, info.add):
            if p.code == "merge-conflict":
                raise self._conflicted(wal_rel)
            if p.code not in ("torn-tail", "empty-wal", "missing-newline"):
                raise RehydrateError(
                    f"{wal_rel} line {p.line}: {p.message} [{p.code}]",
                    f"the WAL cannot be repaired safely: restore it from git (`git checkout -- {wal_rel}`) "
                    "or move it away; `rehydrate verify` lists every problem",
                )
        return info

    def _reconcile_views(self, recon: _Recon, repair: bool) -> None:
        last, prev = recon.last, recon.prev
        if last["op"] == "init" and repair:  # a crash during init: write the views that are missing
            for name in self._apply(last):
                recon.repaired.append(f"redid {self.rel(name)} from the WAL (init was interrupted)")
        views: dict[str, Any] = last["views"]
        problems = recon.problems
        for name in (GOAL, NEXT, HANDOFF):
            expected = views.get(name)
            data = self._read_view(name, problems, recon.seen)
            if _sha(data) == expected:
                continue
            marked = _conflict_lines(data)
            if marked:  # an unfinished merge: named, never redone nor replaced
                problems.append(
                    Problem("merge-conflict", self.rel(name), marked[0], _conflict_message(self.rel(name), marked[0]))
                )
                continue
            if data == b"" and any(p.file == self.rel(name) for p in problems):
                continue  # already named as unsafe or unreadable
            if name == GOAL:
                self._goal_mismatch(data, repair, recon)
                continue
            lags = last["op"] in PRODUCERS[name] and (
                data is None or (prev is not None and _sha(data) == prev["views"].get(name))
            )
            if lags or (data is None and expected is not None):
                why = "it lagged the last record" if lags else "it was missing"
                if repair and self._redo_view(name, expected, last if lags else None):
                    recon.repaired.append(f"redid {self.rel(name)} from the WAL ({why})")
                    continue
                code, message = ("view-lags", "lags the WAL's last record (a crash?)")
                if not lags:
                    code, message = ("view-missing", "is missing; it can be redone from the WAL")
                problems.append(Problem(code, self.rel(name), None, message, True))
                continue
            if expected is None:
                problems.append(
                    Problem(
                        "view-unrecorded",
                        self.rel(name),
                        None,
                        "was not written through rehydrate; record it with "
                        f"`rehydrate handoff --file {self.rel(name)}`",
                    )
                )
            else:
                writer = "checkpoint" if name == NEXT else "handoff"
                problems.append(
                    Problem(
                        "view-edited",
                        self.rel(name),
                        None,
                        "differs from what the WAL says was written (edited by hand?); "
                        f"the next {writer} keeps your version beside it as {self.rel(name)}.edited",
                    )
                )
        self._reconcile_invariants(recon, repair)

    def _goal_mismatch(self, data: bytes | None, repair: bool, recon: _Recon) -> None:
        goal = self._goal_data()
        text = layout.render_goal(goal["goal"], goal.get("done_when")).encode()
        if data is None:
            if repair:
                fsio.replace(self.path(GOAL), text, "view.replace")
                recon.repaired.append(f"redid {self.rel(GOAL)} from the WAL (it was missing)")
            else:
                recon.problems.append(Problem("view-lags", self.rel(GOAL), None, "missing; redo it from the WAL", True))
            return
        n = _first_difference(_lines(data), _lines(text))
        recon.problems.append(
            Problem(
                "latch-violation",
                self.rel(GOAL),
                n,
                f"latch violation: the goal is write-once but line {n} differs from the goal recorded in the WAL",
            )
        )

    def _goal_data(self) -> dict[str, Any]:
        """The goal as bound by the first record of this actor's log (init, or rotate after an archive)."""
        first = self._first_record()
        data = first["data"]
        if first["op"] == "rotate":
            data = data["goal"]
        return {"goal": data["goal"], "done_when": data.get("done_when")}

    def _first_record(self) -> Record:
        for line in wal.iter_lines(self.wal_path):
            try:
                if line.raw is not None:
                    return wal.decode(line.raw)
            except wal.BadRecord:
                pass
            break
        raise RehydrateError(
            f"the first line of {self.rel(layout.WAL_DIR, os.path.basename(self.wal_path))} is damaged"
        )

    def _last_producer(self, name: str) -> Record | None:
        """The last record that wrote a replaceable view, as a record of its own op (full read: error paths only).

        A rotate record carries the last checkpoint and handoff of the archived log, so it stands in for them.
        """
        found: Record | None = None
        for rec in self._records():
            if rec["op"] in PRODUCERS[name]:
                found = rec
            elif rec["op"] == "rotate":
                carried = rec["data"].get("checkpoint" if name == NEXT else "handoff")
                found = carried if isinstance(carried, dict) else None
        return found

    def _redo_view(self, name: str, expected: str | None, producer: Record | None) -> bool:
        """Re-render a replaceable view from the last record that produced it, if that gives the expected bytes.

        After a crash the producer is the WAL's last record; a view deleted by hand needs a scan for it.
        """
        found = producer if producer is not None else self._last_producer(name)
        if found is None:
            return False
        text = (self._render_next(found) if name == NEXT else layout.render_handoff(found["data"]["text"])).encode()
        if wal.sha256(text) != expected:
            return False
        fsio.replace(self.path(name), text, "view.replace")
        return True

    def _records(self, path: str | None = None) -> Iterator[Record]:
        """Every valid record of a log, oldest first (full scan: verify and error paths only)."""
        for line in wal.iter_lines(path or self.wal_path):
            if line.raw is not None and line.newline:
                try:
                    yield wal.decode(line.raw)
                except wal.BadRecord:
                    continue

    def _reconcile_invariants(self, recon: _Recon, repair: bool, full: bool = False) -> None:
        last = recon.last
        rel = self.rel(INVARIANTS)
        data = self._read_view(INVARIANTS, recon.problems, recon.seen)
        if data == b"" and any(p.file == rel for p in recon.problems):
            recon.inv_ok = False
            return
        expected = last["views"].get(INVARIANTS)
        if _sha(data) == expected and not full:
            recon.inv_bytes = data
            return
        conflicts = set(_conflict_lines(data, paired=False))  # an unfinished merge: nothing is redone in the file
        if (
            not conflicts
            and last["op"] in ("invariant", "reject")
            and data is not None
            and self._inv_lags(data, last["data"]["line"])
        ):
            if not repair:
                recon.problems.append(Problem("view-lags", rel, None, "lags the WAL's last record", True))
                recon.inv_ok = False
                return
            self._append_line(last["data"]["line"], redo=True)
            recon.repaired.append(f"redid {rel} from the WAL (its last line was missing)")
            data = fsio.read_bytes(self.path(INVARIANTS), MAX_VIEW)
            if _sha(data) == expected and not full:
                recon.inv_bytes = data
                return
        recorded = self.recorded_lines()
        if data is None:
            if repair:
                first = self._first_record()
                header = first["data"]["header"] if first["op"] == "init" else ""
                skip = len(_recorded_lines(first)) if header else 0
                text = header + "".join(
                    ln + "\n" for a in sorted(recorded) for ln, _ in recorded[a][skip if a == self.actor else 0 :]
                )
                fsio.replace(self.path(INVARIANTS), text.encode(), "view.replace")
                recon.repaired.append(f"rebuilt the missing {rel} from the WAL")
                data = text.encode()
            else:
                recon.problems.append(Problem("view-lags", rel, None, "missing; rebuild it from the WAL", True))
                recon.inv_ok = False
                return
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            n = data[: e.start].count(b"\n") + 1
            recon.problems.append(Problem("invalid-utf8", rel, n, "invalid UTF-8"))
        file_lines = _lines(data)
        blocked = False  # while the file is in a state no write should build on, nothing is adopted from it
        if b"\r\n" in data:
            n = data[: data.index(b"\r\n")].count(b"\n") + 1
            recon.problems.append(
                Problem(
                    "line-endings",
                    rel,
                    n,
                    "CRLF line endings (a git autocrlf conversion?); rehydrate writes LF: restore the file "
                    "with LF endings (state/.gitattributes holds `* -text`)",
                )
            )
            file_lines = [ln.removesuffix("\r") for ln in file_lines]
            blocked = True
        for n in sorted(conflicts):
            if n <= len(file_lines):
                recon.problems.append(
                    Problem(
                        "merge-conflict",
                        rel,
                        n,
                        "an unresolved git merge conflict: keep both sides' lines (delete only the marker lines), "
                        f"then `git add {rel}`; or `git merge --abort`. Nothing is written to the file until then",
                    )
                )
                blocked = True
        violations, unrecorded = check_lines(file_lines, recorded)
        for code, n, message in violations:
            recon.problems.append(Problem(code, rel, n, message))
        recon.inv_ok = not violations and not blocked
        recon.inv_bytes = data
        hand = [(n, file_lines[n - 1]) for n in unrecorded if n not in conflicts]
        adoptable = repair and recon.inv_ok
        recon.unrecorded = hand if adoptable else []
        if hand and not adoptable:
            why = "the next write records it" if recon.inv_ok else "recorded once the violations above are fixed"
            for n, _ in hand:
                recon.problems.append(
                    Problem("unrecorded-line", rel, n, f"added by hand, not through the WAL; {why}", recon.inv_ok)
                )

    def recorded_lines(self) -> dict[str, list[Bound]]:
        """Every actor's recorded lines of 10_invariants.md, each in its actor's order (reads every log)."""
        out: dict[str, list[Bound]] = {}
        for actor in self._actors():
            out[actor] = _actor_lines(self._records(os.path.join(self.wal_dir, actor + ".jsonl")))
        return out

    # ----------------------------------------------------------------------------------------------- writing

    def _begin(self, repair: bool = True) -> _Recon:
        recon = self._reconcile(repair)
        if repair and recon.unrecorded:
            self._adopt(recon)
        return recon

    def _adopt(self, recon: _Recon) -> None:
        for n, text in recon.unrecorded:
            self._append(recon, "invariant", {"line": text, "line_sha256": wal.sha256(text.encode()), "adopted": True})
            recon.repaired.append(f"recorded line {n} of {self.rel(INVARIANTS)}, added by hand: {text[:80]}")
        recon.unrecorded = []

    def _append(
        self, recon: _Recon, op: str, data: dict[str, Any], *, views: dict[str, str] | None = None, git: Any = None
    ) -> Record:
        """Append one record to this actor's WAL (the commit point) and return it.

        A checkpoint acknowledges a rollback found by reconciliation: its record carries what was lost."""
        last = recon.last
        acknowledged = recon.lost if op == "checkpoint" else None
        if acknowledged is not None:
            data = {**data, "rolled_back": acknowledged}
        new_views = dict(last["views"])
        if recon.inv_ok and recon.inv_bytes is not None:
            new_views[INVARIANTS] = wal.sha256(recon.inv_bytes)
        new_views.update(views or {})
        rec: Record = {
            "v": wal.VERSION,
            "seq": int(last["seq"]) + 1,
            "ts": wal.now(),
            "actor": self.actor,
            "op": op,
            "data": data,
            "views": new_views,
            "prev": last["h"],
        }
        if git is not None:
            rec["git"] = git
        if op == "checkpoint":
            rec["views"][NEXT] = wal.sha256(self._render_next(rec).encode())
        rec = wal.seal(rec)
        line = wal.encode(rec)
        if len(line) > wal.MAX_LINE:
            raise UsageError(f"the record would be {len(line):,} bytes, more than the {wal.MAX_LINE:,} allowed")
        fsio.append(self.wal_path, line, "wal.append")
        recon.cache.saw(rec)
        if acknowledged is not None:
            recon.lost = recon.cache.lost = None
            recon.repaired.append(
                f"recorded in checkpoint {rec['seq']} that {self.rel(layout.WAL_DIR, os.path.basename(self.wal_path))} "
                f"was rolled back ({acknowledged['count']} record(s) this clone had seen); no longer reported"
            )
        recon.cache.fp = self._fingerprint()
        self._save_cache(recon.cache)
        recon.prev, recon.last = last, rec
        return rec

    def _keep_edit(self, name: str, recon: _Recon, out: Outcome) -> None:
        """Before replacing a view that was edited by hand, keep the edit beside it (never overwrite silently)."""

        def edited(p: Problem) -> bool:
            return p.code in ("view-edited", "view-unrecorded") and p.file == self.rel(name)

        if any(edited(p) for p in recon.problems):
            data = fsio.read_bytes(self.path(name), MAX_VIEW)
            if data is not None:
                kept = _free_name(self.path(name + ".edited"))
                fsio.replace(kept, data, "keep.edited")
                out.repaired.append(f"kept the hand-edited {self.rel(name)} as {self.rel(os.path.basename(kept))}")
            recon.problems = [p for p in recon.problems if not edited(p)]

    def _write(self, op: str, data: dict[str, Any], *, with_git: bool = False) -> Outcome:
        from rehydrate.store import gitinfo

        touches = {"invariant": (INVARIANTS,), "reject": (INVARIANTS,), "checkpoint": (NEXT,), "handoff": (HANDOFF,)}
        with fsio.locked(self.root):
            # git runs while the state is reconciled; started inside the lock, so that a lock that cannot be taken
            # leaves no git child behind
            pending = gitinfo.start(self.root) if with_git else None
            try:
                recon = self._begin()
                self._refuse_unsafe(recon, touches.get(op, ()))
            finally:
                git = gitinfo.finish(pending) if pending is not None else None
            out = Outcome(repaired=recon.repaired)
            views: dict[str, str] = {}
            if op in ("invariant", "reject"):
                inv = recon.inv_bytes or b""
                sep = b"\n" if inv and not inv.endswith(b"\n") else b""
                recon.inv_bytes = inv + sep + data["line"].encode() + b"\n"
            elif op == "handoff":
                views[HANDOFF] = wal.sha256(layout.render_handoff(data["text"]).encode())
                self._keep_edit(HANDOFF, recon, out)
            elif op == "checkpoint":
                self._keep_edit(NEXT, recon, out)
                if data.get("goal") is None:
                    data["goal"] = self._current_goal(recon)
            rec = self._append(recon, op, data, views=views, git=git)
            self._apply(rec)
            out.record = rec
            out.problems = recon.problems
            return out

    def _refuse_unsafe(self, recon: _Recon, touches: tuple[str, ...] = ()) -> None:
        """A state file that is a symlink, FIFO or folder means the folder cannot be trusted: write nothing.
        A view the write would change that holds git's conflict markers is never changed: finish the merge first."""
        for p in recon.problems:
            if p.code in ("not-regular-file", "unreadable"):
                raise RehydrateError(f"refusing to write: {p.message}", "move it away, then run the command again")
        for p in recon.problems:
            if p.code == "merge-conflict" and p.file in [self.rel(name) for name in touches]:
                raise RehydrateError(
                    f"refusing to write: {p.file} line {p.line} holds an unresolved git merge conflict "
                    "[merge-conflict]; this command would change it",
                    p.message if p.file != self.rel(INVARIANTS) else f"finish the merge first: {p.message}",
                )

    def _view_bytes(self, name: str, recon: _Recon | None) -> bytes | None:
        """A view's bytes: as reconciliation read them when it repaired nothing since, else from disk."""
        if recon is not None and not recon.repaired and name in recon.seen:
            return recon.seen[name]
        return fsio.read_bytes(self.path(name), MAX_VIEW)

    def _current_goal(self, recon: _Recon) -> str:
        current = self._view_bytes(NEXT, recon)
        if current is not None and _sha(current) == recon.last["views"].get(NEXT):
            goal = layout.parse_next(current.decode("utf-8", "replace")).get("goal")
            if goal:
                return goal
        producer = self._last_producer(NEXT)  # 99 was edited or deleted: ask the WAL (a full read, on this path only)
        if producer is not None and producer["op"] == "checkpoint":
            return str(producer["data"]["goal"])
        return str(self._goal_data()["goal"]).split("\n")[0]

    # ----------------------------------------------------------------------------------------------- commands

    def _entry(self, kind: str, text: str, because: str, guard: str | None, contains: str | None = None) -> Outcome:
        text = layout.clean(text, one_line=True)
        because = layout.clean(because, one_line=True)
        guard = layout.clean(guard, one_line=True) if guard else None
        contains = layout.clean(contains, one_line=True) if contains else None
        word = "decision" if kind == "D" else "approach"
        if not text:
            raise UsageError(f"the {word} is empty")
        if not because:
            raise UsageError("--because is empty: say why, so that a later session does not undo it")
        fields = (("text", text), ("because", because), ("guard", guard or ""), ("contains", contains or ""))
        for name, value in fields:
            _cap(name, value, layout.MAX_FIELD)
        labels = (layout.GUARD_LABEL, layout.CONTAINS_LABEL)
        for name, value in fields[:3]:  # the line's guard is read back from its end: nothing before may fake one
            label = next((lb.strip() for lb in labels if lb in f" {value} "), None)
            if label:
                raise UsageError(
                    f"the {name} holds {label!r}, which marks a guard in {layout.INVARIANTS}",
                    f"write it another way (for example {label[:-1]!r} without the colon)",
                )
        ts = wal.now()
        ident = f"{kind}-" + wal.sha256(f"{self.actor}\0{ts}\0{text}".encode())[:6]
        line = layout.entry_line(kind, ident, ts[:10], text, because, guard, contains)
        data: dict[str, Any] = {"id": ident, "text": text, "because": because, "line": line}
        if guard:
            data["guard"] = guard
        if contains:
            data["contains"] = contains
        data["line_sha256"] = wal.sha256(line.encode())
        return self._write("invariant" if kind == "D" else "reject", data)

    def invariant(self, text: str, because: str) -> Outcome:
        """Record a decision in 10_invariants.md (append-only)."""
        return self._entry("D", text, because, None)

    def reject(self, approach: str, because: str, guard: str | None = None, contains: str | None = None) -> Outcome:
        """Record a rejected approach. A hook watches for it: guard is a path glob or command pattern, contains a
        text that the content being written (or the command) must hold; with both, both must match."""
        return self._entry("R", approach, because, guard, contains)

    def checkpoint(self, done: str, next: str, goal: str | None = None) -> Outcome:
        """Write a checkpoint: WAL record first (binding git HEAD, branch, dirty files), then 99_next.md."""
        done, next = layout.clean(done), layout.clean(next)
        if not done or not next:
            raise UsageError("both --done and --next are needed: what was finished, and the next allowed action")
        data: dict[str, Any] = {"done": done, "next": next, "goal": layout.clean(goal) if goal else None}
        for name, value in data.items():
            _cap(name, value or "", layout.MAX_FIELD)
        return self._write("checkpoint", data, with_git=True)

    def handoff(self, text: str) -> Outcome:
        """Replace 20_handoff.md, the note the next session reads in full."""
        text = layout.clean(text)
        if not text:
            raise UsageError("the handoff note is empty")
        _cap("handoff", text, layout.MAX_HANDOFF)
        return self._write("handoff", {"text": text, "sha256": wal.sha256(text.encode())})

    def record(self, op: str, data: dict[str, Any]) -> Outcome:
        """Append a record that changes no view (compaction, receipt, ...)."""
        if op in ("init", "invariant", "reject", "checkpoint", "handoff", "rotate") or not re.match(layout.OP, op):
            raise UsageError(f"{op!r} cannot be recorded this way", "use the method of the same name")
        return self._write(op, data)

    def rotate(self) -> Outcome:
        """Archive the WAL (end of a task) and start a new one whose first record is anchored to the old last hash."""
        with fsio.locked(self.root):
            recon = self._begin()
            self._refuse_unsafe(recon)
            first = self._first_record()
            bound = _actor_lines(self._records())
            last = recon.last
            archive = f"{layout.ARCHIVE_DIR}/{self.actor}-{first['seq']}-{last['seq'] + 1}-{last['h'][:8]}.jsonl"
            checkpoint = self._last_producer(NEXT)
            handoff = self._last_producer(HANDOFF)
            data = {
                "archive": archive,
                "records": last["seq"] - first["seq"] + 2,
                "goal": self._goal_data(),
                "lines": [ln for ln, ordered in bound if ordered],
                "adopted": [ln for ln, ordered in bound if not ordered],
                # what the views were last written from, so that they can still be redone after the archive
                "checkpoint": {k: checkpoint[k] for k in ("op", "seq", "ts", "git", "data") if k in checkpoint}
                if checkpoint
                else None,
                "handoff": {"op": "handoff", "data": handoff["data"]} if handoff else None,
            }
            self._check_archive({"seq": last["seq"] + 1, "data": data}, None)  # before anything is written
            rec = self._append(recon, "rotate", data)
            self._apply(rec)
            recon.cache.fp = self._fingerprint()  # the log was replaced by one holding the rotate record
            self._save_cache(recon.cache)
            return Outcome(record=rec, repaired=recon.repaired, problems=recon.problems)

    def reconcile(self, repair: bool = True) -> Outcome:
        """The cheap recognize step every command starts with: WAL tail against views, safe repairs applied."""
        with fsio.locked(self.root, shared=not repair):
            recon = self._begin(repair)
            return Outcome(record=recon.last, repaired=recon.repaired, problems=recon.problems)

    def verify(self, repair: bool = False) -> Outcome:
        """The full recognize step: every log's chain, the latches line by line, the views against the WAL."""
        with fsio.locked(self.root, shared=not repair):
            out = Outcome()
            try:
                recon = self._reconcile(repair)
            except StateMissing:
                raise
            except RehydrateError as e:  # the log cannot be trusted: name what is wrong with it, nothing built on it
                out.problems += self._scan_logs()
                if not out.problems:
                    out.problems.append(Problem("unreadable", self.rel(layout.WAL_DIR), None, e.message))
                return out
            # the full pass over 10, whatever its hash says
            recon.problems = [p for p in recon.problems if p.file != self.rel(INVARIANTS)]
            self._reconcile_invariants(recon, repair, full=True)
            if repair and recon.unrecorded:
                self._adopt(recon)
                recon.problems = [p for p in recon.problems if p.file != self.rel(INVARIANTS)]
                self._reconcile_invariants(recon, repair, full=True)  # what the adoption left
            out.repaired, out.problems, out.record = recon.repaired, recon.problems, recon.last
            seen = {(p.code, p.file, p.line) for p in out.problems}
            for p in self._scan_logs():
                if (p.code, p.file, p.line) not in seen and not (p.code in ("torn-tail", "missing-newline") and repair):
                    out.problems.append(p)
            if repair:
                out.problems = [p for p in out.problems if p.code != "unrecorded-line"]
            return out

    def _scan_logs(self) -> list[Problem]:
        problems: list[Problem] = []
        for actor in self._actors():
            path = os.path.join(self.wal_dir, actor + ".jsonl")
            rel = self.rel(layout.WAL_DIR, actor + ".jsonl")
            try:
                problems += _scan_log(path, rel)
            except RehydrateError as e:
                problems.append(Problem("unreadable", rel, None, e.message))
        return problems

    def status(self) -> Outcome:
        """One screen: the goal, the last checkpoint, the next action, and what is wrong (safe repairs applied)."""
        out = self.reconcile(repair=True)
        nxt = self.view_text(NEXT) or ""
        goal = (self.view_text(GOAL) or "").split("\n")
        # the files may hold anything (escape sequences, NUL, CR, a right-to-left override): cleaned for a terminal
        out.extra = {
            "goal": layout.clean(next((ln for ln in goal if ln.strip() and not ln.startswith("#")), ""), one_line=True),
            "checkpoint": layout.clean(nxt.split("\n", 1)[0].removeprefix("# Next (").removesuffix(")"), one_line=True),
            "next": {k: layout.clean(v) for k, v in layout.parse_next(nxt).items()},
            "records": out.record["seq"] if out.record else None,
        }
        return out

    def view_text(self, name: str) -> str | None:
        data = fsio.read_bytes(self.path(name), MAX_VIEW)
        return None if data is None else data.decode("utf-8", "replace")

    def extra_views(self) -> list[str]:
        """Other NN_*.md files in the state folder, in lexical (boot) order."""
        names = []
        for name in sorted(os.listdir(self.root)):
            if re.match(layout.EXTRA_VIEW, name) and name not in layout.VIEWS:
                names.append(name)
        return names


def _scan_log(
    path: str, rel: str, end: int | None = None, visit: Callable[[Record], None] | None = None
) -> list[Problem]:
    """Every line of one log (up to byte `end`): parse, canonical form, hash, chain, sequence, archive paths.
    visit is called with each valid record, in order. A log holding git's conflict markers is named by them alone:
    its chain means nothing until the merge is finished."""
    problems: list[Problem] = []
    conflicts: list[Problem] = []
    prev: Record | None = None
    count = 0
    for i, (number, raw, newline, is_last) in enumerate(_with_last(wal.iter_lines(path, end))):
        count += 1
        if raw is None:
            problems.append(Problem("oversized-line", rel, number, f"a line longer than {wal.MAX_LINE:,} bytes"))
            prev = None
            continue
        if wal.is_conflict_marker(raw):
            conflicts.append(
                Problem(
                    "merge-conflict",
                    rel,
                    number,
                    "an unresolved git merge conflict marker: finish the merge (keep one side's records: "
                    f"`git checkout --ours -- {rel}` or `--theirs`, then `git add {rel}`), or `git merge --abort`",
                )
            )
            continue
        if not newline:
            try:
                whole = wal.decode(raw)
            except wal.BadRecord:
                whole = None
            if whole is not None and whole["prev"] == (prev["h"] if prev else None):
                problems.append(Problem("missing-newline", rel, number, "the last record lost its final newline", True))
            else:
                problems.append(Problem("torn-tail", rel, number, "the last line has no newline (a torn write)", True))
            continue
        try:
            rec = wal.decode(raw)
        except wal.BadRecord as e:
            code = "torn-tail" if is_last else "damaged-record"
            problems.append(Problem(code, rel, number, str(e), is_last))
            prev = None
            continue
        if visit is not None:
            visit(rec)
        if rec["op"] == "rotate":
            why = _archive_error(rec)
            if why is not None:
                problems.append(Problem("unsafe-path", rel, number, f"refusing record {rec['seq']} (rotate): {why}"))
        if prev is None and i == 0:
            if rec["op"] == "init" and rec["prev"] is not None:
                problems.append(Problem("chain-broken", rel, number, "the init record has a prev hash"))
            elif rec["op"] not in ("init", "rotate"):
                problems.append(Problem("chain-broken", rel, number, "the log does not start with init or rotate"))
        elif prev is not None:
            if rec["prev"] != prev["h"]:
                problems.append(
                    Problem(
                        "chain-broken",
                        rel,
                        number,
                        "does not follow the record before it (line deleted, moved or edited?)",
                    )
                )
            elif rec["seq"] != prev["seq"] + 1:
                problems.append(Problem("seq-gap", rel, number, f"seq {rec['seq']} follows {prev['seq']}"))
        prev = rec
    if conflicts:
        return conflicts
    if not count:
        problems.append(Problem("empty-wal", rel, None, "the WAL is empty"))
    return problems


def _with_last(lines: Iterator[wal.Line]) -> Iterator[tuple[int, bytes | None, bool, bool]]:
    """Each line with a flag telling whether it is the last, holding one line at a time."""
    held: wal.Line | None = None
    for line in lines:
        if held is not None:
            yield held.number, held.raw, held.newline, False
        held = line
    if held is not None:
        yield held.number, held.raw, held.newline, True


def _archive_error(rec: Record) -> str | None:
    """Why a rotate record's archive path is not a plain file name in archive/, or None."""
    data = rec.get("data")
    name = data.get("archive") if isinstance(data, dict) else None
    if isinstance(name, str) and re.match(ARCHIVE_NAME, name):
        return None
    shown = layout.clean(str(name)[:160], one_line=True)[:120]
    return f"its archive path {shown!r} is not archive/<file name>.jsonl inside the state folder"


def _read_small(path: str, limit: int) -> tuple[bytes | None, int | None]:
    """A file's bytes if it holds at most `limit` (else none: b"") and its size, never following a link, never
    blocking; (None, None) if it is absent."""
    fd = fsio.open_read(path)
    if fd is None:
        return None, None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return b"", size
        chunks: list[bytes] = []
        got = 0
        while got < size:
            chunk = os.pread(fd, min(1 << 20, size - got), got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks), size
    finally:
        os.close(fd)


def _summary(rec: Record) -> str:
    """The WAL's last record as one readable line: what, when, where, and its data (hashes left out)."""
    git = rec.get("git") if isinstance(rec.get("git"), dict) else {}
    where = ""
    if git and git.get("head"):
        branch = git.get("branch") or "a detached HEAD"
        where = f" · HEAD {str(git['head'])[:7]} on {branch}, {len(git.get('dirty', []))} dirty"
    data = wal.canonical(rec.get("data")).decode()
    return f"#{rec.get('seq')} {rec.get('op')} by {rec.get('actor')} at {rec.get('ts')}{where} · data {data}"


def _free_name(path: str) -> str:
    """path, or path.2, path.3, ...: the first that does not exist (a kept copy never replaces another)."""
    candidate, i = path, 1
    while fsio.lstat(candidate) is not None:
        i += 1
        candidate = f"{path}.{i}"
    return candidate


def _cap(name: str, value: str, limit: int) -> None:
    if len(value.encode()) > limit:
        raise UsageError(f"{name} is {len(value.encode()):,} bytes; the limit is {limit:,}")
