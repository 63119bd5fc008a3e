"""The files on disk, how each view is rendered from WAL records, and how the replaceable views (99, 20) are checked
against the WAL and redone from it: one place for each of these facts. (The latches, 00 and 10, are latches.py's.)
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, UnsafeFile
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, records
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.state import Outcome, Snapshot, State
    from rehydrate.store.wal.record import Record

GOAL = "00_goal.md"
KEYS_DIR = "keys"  # committed public keys, one per actor (store/keys/)
KEY_PINS = "keys.json"  # this clone's pins of them, in its own git folder (State.local), never committed
INVARIANTS = "10_invariants.md"
HANDOFF = "20_handoff.md"
TASKS = "30_tasks.md"  # the harness's task list as its hooks last saw it (store/tasks.py)
TASKS_DIR = "tasks"  # an actor that joined: tasks/<actor>.md
NEXT = "99_next.md"
WAL_DIR = "wal"
ARCHIVE_DIR = "archive"
MAIL_DIR = "mail"  # the actors' messages (store/mail/), a folder per recipient
PIPELINES = "pipelines.json"  # the registered pipelines: {name: {"output", "progress", "key", "total"}}
GITIGNORE = ".gitignore"
VIEWS = (GOAL, INVARIANTS, HANDOFF, TASKS, NEXT)
# Patterns are compiled on first use (re caches them): each compile costs the hook path ~70 us.
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def is_extra_view(name: str) -> bool:
    """Another view of the state folder: `NN_name.md` (two digits, `_`, then letters, digits, `.`, `_` or `-`).
    (Plain string tests, not a regular expression: compiling one costs the hook path's start-up.)"""
    return (
        len(name) > 6
        and name[:2].isascii()
        and name[:2].isdigit()
        and name[2] == "_"
        and name.endswith(".md")
        and set(name[3:-3]) <= _NAME_CHARS
    )


def is_actor(name: str) -> bool:
    """An actor's name, the name of its log in wal/: 1 to 64 letters, digits, `.`, `_` or `-`, the first a letter or
    a digit."""
    return 0 < len(name) <= 64 and name[0].isascii() and name[0].isalnum() and set(name) <= _NAME_CHARS


OP = r"^[a-z][a-z0-9_-]{0,31}$"
GITATTRIBUTES = ".gitattributes"
GITATTRIBUTES_TEXT = (
    "# written by rehydrate: logs and the append-only views merge line by line, keeping both sides' lines (the\n"
    "# next command reconciles them), so that branches merge with no conflict in state/; and every state file is\n"
    "# hash-bound byte for byte, so git must not convert line endings\n"
    "wal/*.jsonl merge=union\n"
    "10_invariants.md merge=union\n"
    "20_handoff.md merge=union\n"
    "99_next.md merge=union\n"
    "next/*.md merge=union\n"
    "handoff/*.md merge=union\n"
    "* -text\n"
)
# the text of states made before union merges: upgraded by the next write
GITATTRIBUTES_V1 = (
    "# written by rehydrate: state files are hash-bound byte for byte; git must not convert them\n* -text\n"
)

INVARIANTS_HEADER = (
    "# Decisions and rejected approaches\n"
    "\n"
    "Append-only, one line per entry, written by `rehydrate invariant` and `rehydrate reject`.\n"
    "A rejected approach stays rejected. Edit nothing above the last line: each line is bound by state/wal/.\n"
    "\n"
)
GITIGNORE_TEXT = (
    "# written by rehydrate: the lock, temporary files, cut torn lines, kept hand edits and caches are not state\n"
    ".lock\n*.tmp\n*.broken\n*.broken.*\n*.edited\n*.edited.*\n*.seen\n.local/\n"
)
# What rehydrate writes in the state folder and shares through git: these top-level files, the extra views
# (is_extra_view) and everything under these folders, less what GITIGNORE_TEXT keeps out (sync/run.py commits
# them whatever other ignore rules say). "next" and "handoff" are store/actors.py's, per actor.
OWN_FILES = frozenset((*VIEWS, GITIGNORE, GITATTRIBUTES, PIPELINES))
OWN_DIRS = frozenset((WAL_DIR, ARCHIVE_DIR, KEYS_DIR, MAIL_DIR, TASKS_DIR, "next", "handoff"))


def is_own(name: str) -> bool:
    """A top-level entry of the state folder that rehydrate writes and shares (OWN_FILES, OWN_DIRS, extra views)."""
    return name in OWN_FILES or name in OWN_DIRS or is_extra_view(name)


# Limits on what a user can put in one record, so that every record stays far below wal.MAX_LINE.
MAX_FIELD = 16 * 1024
MAX_GOAL = 64 * 1024
MAX_HANDOFF = 1024 * 1024

# the ops that write each replaceable view, and the word for the command that writes it next
PRODUCERS = {NEXT: ("checkpoint", "init"), HANDOFF: ("handoff",), TASKS: ("tasks",)}
WRITERS = {NEXT: "checkpoint", HANDOFF: "handoff", TASKS: "change of the harness's task list"}
MAX_VIEW = 4 << 20  # a view file larger than this is not read into a brief
MAX_EDITED = 64 << 20  # a replaceable view (a hand edit: the WAL writes far less) is compared and kept up to this


_ID = r"^- ([DR]-[0-9a-f]{6}) "


def render_goal(goal: str, done_when: str | None) -> str:
    text = f"# Goal\n\n{goal}\n"
    if done_when:
        text += f"\n## Done when\n\n{done_when}\n"
    return text


# The labels that end a rejected approach's line: the hooks read its guard back from the line, so no field before
# them may hold one (State refuses such text rather than make the line ambiguous).
GUARD_LABEL = " guard: "
CONTAINS_LABEL = " contains: "


def entry_line(
    kind: str, ident: str, day: str, text: str, because: str, guard: str | None, contains: str | None = None
) -> str:
    word = "decision" if kind == "D" else "rejected"
    line = f"- {ident} {day} {word}: {text} because: {because}"
    if guard:
        line += f"{GUARD_LABEL}{guard}"
    if contains:
        line += f"{CONTAINS_LABEL}{contains}"
    return line


def entry_guard(line: str) -> tuple[str | None, str | None]:
    """(path or command pattern, text the written content must contain) of a rejected approach's line."""
    contains = guard = None
    if CONTAINS_LABEL in line:
        line, contains = line.rsplit(CONTAINS_LABEL, 1)
    if GUARD_LABEL in line:
        guard = line.rsplit(GUARD_LABEL, 1)[1]
    return (guard.strip() or None) if guard else None, (contains.strip() or None) if contains else None


def entry_id(line: str) -> str | None:
    ident = line[2:10]  # _ID with str methods: no re on the hook path
    if (
        line[:2] == "- "
        and line[10:11] == " "
        and ident[:2] in ("D-", "R-")
        and not ident[2:].strip("0123456789abcdef")
    ):
        return ident
    return None


def _field(label: str, value: str) -> str:
    first, *rest = value.split("\n")
    return "\n".join([f"{label}: {first}"] + ["  " + r for r in rest])


def render_next(seq: int | None, ts: str, head: str | None, goal: str, done: str, next_: str) -> str:
    where = f"HEAD {head[:7]}" if head else "no git HEAD"
    title = f"checkpoint {seq}" if seq is not None else "no checkpoint yet"
    return (
        f"# Next ({title}, {ts[:16]}Z, {where})\n"
        + _field("current goal", goal)
        + "\n"
        + _field("last completed", done)
        + "\n"
        + _field("next allowed action", next_)
        + "\n"
    )


_NEXT_FIELDS = {"current goal": "goal", "last completed": "done", "next allowed action": "next"}


def parse_next(text: str) -> dict[str, str]:
    """The fields of a rendered 99_next.md (the inverse of render_next)."""
    out: dict[str, list[str]] = {}
    key = None
    for line in text.split("\n")[1:]:
        if line.startswith("  ") and key:
            out[key].append(line[2:])
            continue
        label, sep, value = line.partition(": ")
        key = _NEXT_FIELDS.get(label) if sep else None
        if key:
            out[key] = [value]
    return {k: "\n".join(v) for k, v in out.items()}


def render_handoff(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def render_next_record(rec: Record) -> str:
    """99_next.md as a checkpoint (or the init) record renders it."""
    data = rec["data"]
    git = rec.get("git") or {}
    head = git.get("head") if isinstance(git, dict) else None
    if rec["op"] == "init":
        return render_next(
            None,
            rec["ts"],
            head,
            data["goal"].split("\n")[0],
            "nothing yet (state initialized)",
            "start on the goal; record decisions and rejected approaches as they happen; checkpoint after each step",
        )
    text = render_next(rec["seq"], rec["ts"], head, data["goal"], data["done"], data["next"])
    claims = data.get("claims")
    return text + render_claims(claims) if isinstance(claims, list) and claims else text


def render_claims(claims: list[Any]) -> str:
    """A checkpoint's claims as 99_next.md lists them, each with its receipt (its status is the ledger's: it
    changes with the tree, the view does not)."""
    lines = []
    for claim in claims:
        if not isinstance(claim, dict):
            continue
        receipt = claim.get("receipt")
        if isinstance(receipt, dict):
            code = receipt.get("exit")
            how = clean(f"receipt {receipt.get('id')}, exit {code}", one_line=True)
        else:
            how = "no receipt: unverified"
        lines.append(f"claim: {clean(str(claim.get('text')), one_line=True)} ({how})\n")
    return "".join(lines)


def summary(rec: Record) -> str:
    """The WAL's last record as one readable line: what, when, where, and its data (hashes left out). A capture of the
    transcript (a compaction record's data.capture) is shown as its counts (records.capture_counts), not its text."""
    git = rec.get("git") if isinstance(rec.get("git"), dict) else {}
    where = ""
    if git and git.get("head"):
        branch = git.get("branch") or "a detached HEAD"
        dirty = git.get("dirty")  # the WAL is untrusted: a dirty list of another type counts as none
        where = f" · HEAD {str(git['head'])[:7]} on {branch}, {len(dirty) if isinstance(dirty, list) else 0} dirty"
    value = rec.get("data")
    if isinstance(value, dict) and "capture" in value:
        capture = value["capture"]
        value = {**value, "capture": records.capture_counts(capture) if isinstance(capture, dict) else "not a capture"}
    if rec.get("op") == "tasks" and isinstance(value, dict):  # the list is in its view: here, its counts
        from rehydrate.store import tasks

        active, waiting, done = tasks.counts(value)
        value = {k: v for k, v in value.items() if k != "items"}
        value["items"] = {"open": active + waiting, "in_progress": active, "done": done}
    data = wal.canonical(value).decode()
    return f"#{rec.get('seq')} {rec.get('op')} by {rec.get('actor')} at {rec.get('ts')}{where} · data {data}"


# --- the views against the WAL ----------------------------------------------------------------------------------


def conflict_lines(data: bytes | None, *, paired: bool = True) -> list[int]:
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


def conflict_message(rel: str, first: int) -> str:
    return (
        f"an unresolved git merge conflict (markers from line {first}); rehydrate changes nothing in this file "
        f"until the merge is finished: `rehydrate resolve` keeps both sides' lines (the next write renders the file "
        f"whole); or take the side that matches the WAL (`git checkout --ours -- {rel}` or "
        f"`--theirs`), or delete the file and run `rehydrate verify --repair` to redo it from the WAL; then "
        f"`git add {rel}`. Or `git merge --abort`"
    )


def sha(data: bytes | None) -> str | None:
    return None if data is None else wal.sha256(data)


def read_view(
    state: State,
    name: str,
    problems: list[Problem],
    seen: dict[str, bytes | None] | None = None,
    limit: int = MAX_VIEW,
) -> bytes | None:
    """A view's bytes (None if absent); b"" and a problem if it cannot be read (compared as empty, it never matches)."""
    return read_view_stat(state, name, problems, seen, limit)[0]


def read_view_stat(
    state: State,
    name: str,
    problems: list[Problem],
    seen: dict[str, bytes | None] | None = None,
    limit: int = MAX_VIEW,
) -> tuple[bytes | None, os.stat_result | None]:
    """read_view's bytes, with the file's fstat as it was before they were read (None if absent or unreadable)."""
    try:
        data, st = fsio.read_stat_bytes(state.path(name), limit, WORDS)
        if seen is not None:
            seen[name] = data
        return data, st
    except UnsafeFile as e:
        problems.append(Problem("not-regular-file", state.rel(name), None, e.message))
    except RehydrateError as e:
        problems.append(Problem("unreadable", state.rel(name), None, e.message))
    return b"", None


def differs(state: State, snap: Snapshot, name: str) -> tuple[bool, bytes | None]:
    """(whether the view differs from what the WAL's last record binds, its bytes). A view holding a merge's
    conflict markers, or one already named as unsafe or unreadable, is reported here and does not differ further.
    A view the cache (seen.py) says is unchanged since it was found or written as bound is not read: (False, None)."""
    bound = snap.last["views"].get(name)
    if snap.trust_cache and snap.cache.fresh(name, state.path(name), bound):
        snap.fresh[name] = snap.cache.views[name][0]  # the fingerprint the file was found with, under the lock
        return False, None
    if bound is not None and snap.trust_cache and snap.cache.fresh(name, state.path(name), MERGED + bound):
        snap.problems.append(_merged(state, name))  # found merge-shaped, and unchanged since: the log is not read
        return False, None
    data, st = read_view_stat(state, name, snap.problems, snap.seen, MAX_EDITED)
    snap.view_stats[name] = st
    if sha(data) == bound:
        snap.cache.verified(name, st, bound)
        return False, data
    snap.cache.forget(name)
    marked = conflict_lines(data)
    if marked:  # an unfinished merge: named, never redone nor replaced
        snap.problems.append(
            Problem("merge-conflict", state.rel(name), marked[0], conflict_message(state.rel(name), marked[0]))
        )
        return False, data
    if data == b"" and any(p.file == state.rel(name) for p in snap.problems):
        return False, data  # already named as unsafe or unreadable
    return True, data


def reconcile_views(state: State, snap: Snapshot, repair: bool) -> None:
    """99 and 20 against the WAL's last record: a view that lags it (a crash) or is missing is redone from the WAL;
    one that differs otherwise was edited by hand and is reported, never overwritten."""
    last = snap.last
    names = state._pc(last)  # 99 and 20, or an actor's own next/<actor>.md and handoff/<actor>.md
    tasks = tasks_view(names[0])
    for name in (*names, tasks) if tasks in last["views"] else names:  # and the task list, once there is one
        changed, data = differs(state, snap, name)
        if not changed:
            continue
        expected = last["views"].get(name)
        producers = PRODUCERS[_kind(name)]
        prev = snap.prev if last["op"] in producers else None  # read only when needed (a tail read)
        lags = last["op"] in producers and (data is None or (prev is not None and sha(data) == prev["views"].get(name)))
        if lags or (data is None and expected is not None):
            why = "it lagged the last record" if lags else "it was missing"
            if repair and redo_view(state, name, expected, last if lags else None):
                snap.repaired.append(f"redid {state.rel(name)} from the WAL ({why})")
                continue
            code, message = ("view-lags", "lags the WAL's last record (a crash?)")
            if not lags:
                code, message = ("view-missing", "is missing; it can be redone from the WAL")
            snap.problems.append(Problem(code, state.rel(name), None, message, True))
        elif data is not None and is_merge_shaped(data, head_renderings(snap, name)):
            snap.problems.append(_merged(state, name))
            if expected is not None:  # the verdict kept while the file and the binding hold (no whole read again)
                snap.cache.verified(name, snap.view_stats.get(name), MERGED + expected)
        else:
            snap.problems.append(_hand_edit(state, name, expected))


MERGED = "merged:"  # the seen cache's mark for a view found merge-shaped against the binding that follows it


def is_merge_shaped(data: bytes, renderings: list[bytes]) -> bool:
    """Whether a view is what git's union merge makes of these renderings: every line of it (blank lines aside) is
    a line of one of them, and it has one. (Union interleaves the sides and keeps a line they share once, so this
    is line membership, not blocks; a line deleted by hand from such a file is not seen: the view is derived, and
    the next write renders it whole again.)"""
    known = {line for r in renderings for line in r.split(b"\n")}
    lines = [line for line in data.split(b"\n") if line.strip()]
    return bool(lines) and bool(renderings) and all(line in known for line in lines)


def head_renderings(snap: Snapshot, name: str) -> list[bytes]:
    """The renderings of a view by each head's last record that produced it (snap.head_views: filled when the log
    has several heads, after a union merge; none otherwise). A record that cannot be rendered is left out."""
    heads = getattr(snap, "head_views", None)
    recs = heads.get(name) if isinstance(heads, dict) else None
    out: list[bytes] = []
    for rec in recs if isinstance(recs, list) else ():
        try:
            out.append(render_view(name, rec).encode())
        except (KeyError, TypeError, AttributeError, ValueError, ImportError):  # untrusted, or no graph.py yet
            continue
    return out


def render_view(name: str, rec: Record) -> str:
    """A replaceable view as a record renders it: 99_next.md by a checkpoint, an init or a merge record (its lines of
    work: store/wal/graph.py), 20_handoff.md by a handoff, 30_tasks.md by a tasks record (store/tasks.py). A rotate's
    carried record stands for the archived one."""
    kind = _kind(name)
    if rec.get("op") == "rotate":
        carried = rec["data"][_CARRIED[kind]]
        return render_view(name, carried)
    if kind == TASKS:
        from rehydrate.store.tasks import render

        return render(rec["data"])
    if kind != NEXT:
        return render_handoff(rec["data"]["text"])
    if rec.get("op") == "merge":
        from rehydrate.store.wal import graph  # type: ignore[attr-defined,unused-ignore]

        return str(graph.render_merged(rec))
    return render_next_record(rec)


def _merged(state: State, name: str) -> Problem:
    rel = state.rel(name)
    writer = WRITERS[_kind(name)]
    why = (
        "holds the lines of work that a git merge joined (each side's version, merged line by line); the next "
        f"{writer} writes it whole (nothing is lost: the records hold every side's)"
    )
    return Problem("view-merged", rel, None, why)


def _hand_edit(state: State, name: str, expected: str | None) -> Problem:
    rel = state.rel(name)
    if expected is None:
        why = f"was not written through rehydrate; record it with `rehydrate handoff --file {rel}`"
        return Problem("view-unrecorded", rel, None, why)
    writer = WRITERS[_kind(name)]
    why = (
        "differs from what the WAL says was written (edited by hand?); "
        f"the next {writer} keeps your version beside it as {rel}.edited"
    )
    return Problem("view-edited", rel, None, why)


def _kind(name: str) -> str:
    """99_next.md for next/<actor>.md, 20_handoff.md for handoff/<actor>.md, 30_tasks.md for tasks/<actor>.md (an
    actor's own views)."""
    if name.startswith("next/"):
        return NEXT
    if name.startswith("handoff/"):
        return HANDOFF
    return TASKS if name.startswith(TASKS_DIR + "/") else name


def tasks_view(next_name: str) -> str:
    """The task-list view of the actor whose program counter is next_name: 30_tasks.md beside 99_next.md,
    tasks/<actor>.md beside next/<actor>.md."""
    return TASKS if next_name == NEXT else f"{TASKS_DIR}/{next_name.split('/', 1)[1]}"


_CARRIED = {NEXT: "checkpoint", HANDOFF: "handoff", TASKS: "tasks"}  # what a rotate record carries of each


def last_producer(state: State, name: str) -> Record | None:
    """The last record that wrote a replaceable view, as a record of its own op (full read: error paths only).

    A rotate record carries the last checkpoint and handoff of the archived log, so it stands in for them.
    """
    found: Record | None = None
    name = _kind(name)
    for rec in wallines.records(state.wal_path):
        if rec["op"] in PRODUCERS[name]:
            found = rec
        elif rec["op"] == "rotate":
            carried = rec["data"].get(_CARRIED[name])
            found = carried if isinstance(carried, dict) else None
    return found


def redo_view(state: State, name: str, expected: str | None, producer: Record | None) -> bool:
    """Re-render a replaceable view from the last record that produced it, if that gives the expected bytes.

    After a crash the producer is the WAL's last record; a view deleted by hand needs a scan for it.
    """
    found = producer if producer is not None else last_producer(state, name)
    if found is None:
        return False
    text = render_view(name, found).encode()
    if wal.sha256(text) != expected:
        return False
    if name != _kind(name):  # next/<actor>.md or handoff/<actor>.md: its folder may be gone too
        from rehydrate.store import actors

        actors.ensure_folder(state, name)
    fsio.replace(state.path(name), text, "view.replace", words=WORDS)
    return True


def keep_edit(state: State, name: str, snap: Snapshot, out: Outcome) -> None:
    """Before replacing a view that was edited by hand, keep the edit beside it (never overwrite silently)."""

    def edited(p: Problem) -> bool:
        return p.code in ("view-edited", "view-unrecorded") and p.file == state.rel(name)

    if any(edited(p) for p in snap.problems):
        data = fsio.read_bytes(state.path(name), MAX_EDITED, WORDS)
        if data is not None:
            kept = fsio.free_name(state.path(name + ".edited"))
            fsio.replace(kept, data, "keep.edited", words=WORDS)
            out.repaired.append(f"kept the hand-edited {state.rel(name)} as {state.rel(os.path.basename(kept))}")
        snap.problems = [p for p in snap.problems if not edited(p)]


def extra_views(root: str) -> list[str]:
    """Other NN_*.md files in the state folder, in lexical (boot) order."""
    return [name for name in sorted(os.listdir(root)) if is_extra_view(name) and name not in VIEWS]
