"""How each view is rendered from WAL records, and how the replaceable views (99, 20, 30) are checked against the
WAL and redone from it. (The files' names and limits are layout.py's; the latches, 00 and 10, are latches/'s.)
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError, UnsafeFile
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, Problem, actors, records
from rehydrate.store.layout import (
    HANDOFF,
    MAX_EDITED,
    MAX_VIEW,
    NEXT,
    TASKS,
    VIEWS,
    WRITERS,
    is_extra_view,
    tasks_view,
    view_kind,
)
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.session import Outcome, Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record


def render_goal(goal: str, done_when: str | None) -> str:
    text = f"# Goal\n\n{goal}\n"
    if done_when:
        text += f"\n## Done when\n\n{done_when}\n"
    return text


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
    if records.op_of(rec) is records.INIT:
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
    if records.op_of(rec) is records.TASKS_OP and isinstance(value, dict):  # the list is in its view: here, its counts
        from rehydrate.store import tasks  # loaded where a task list is: see render_view

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
    names = state.pc(last)  # 99 and 20, or an actor's own next/<actor>.md and handoff/<actor>.md
    tasks = tasks_view(names[0])
    for name in (*names, tasks) if tasks in last["views"] else names:  # and the task list, once there is one
        changed, data = differs(state, snap, name)
        if not changed:
            continue
        expected = last["views"].get(name)
        producers = records.PRODUCERS[view_kind(name)]
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
    kind = view_kind(name)
    if records.op_of(rec) is records.ROTATE:
        carried = rec["data"][_CARRIED[kind]]
        return render_view(name, carried)
    if kind == TASKS:
        from rehydrate.store import tasks  # a project without a task list never loads it (test_cli_imports.py)

        return tasks.render(rec["data"])
    if kind != NEXT:
        return render_handoff(rec["data"]["text"])
    if records.op_of(rec) is records.MERGE:
        from rehydrate.store.wal import graph  # see render_record

        return str(graph.render_merged(rec))
    return render_next_record(rec)


def _merged(state: State, name: str) -> Problem:
    rel = state.rel(name)
    writer = WRITERS[view_kind(name)]
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
    writer = WRITERS[view_kind(name)]
    why = (
        "differs from what the WAL says was written (edited by hand?); "
        f"the next {writer} keeps your version beside it as {rel}.edited"
    )
    return Problem("view-edited", rel, None, why)


_CARRIED = {NEXT: "checkpoint", HANDOFF: "handoff", TASKS: "tasks"}  # what a rotate record carries of each


def last_producer(state: State, name: str) -> Record | None:
    """The last record that wrote a replaceable view, as a record of its own op (full read: error paths only).

    A rotate record carries the last checkpoint and handoff of the archived log, so it stands in for them.
    """
    found: Record | None = None
    name = view_kind(name)
    for rec in wallines.records(state.wal_path):
        if rec["op"] in records.PRODUCERS[name]:
            found = rec
        elif records.op_of(rec) is records.ROTATE:
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
    if name != view_kind(name):  # next/<actor>.md or handoff/<actor>.md: its folder may be gone too
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


def render_record(rec: Record) -> str:
    """A replaceable view as a record renders it: 99_next.md for a checkpoint or init (views.py) or a merge record
    (graph.py), 20_handoff.md for a handoff, 30_tasks.md for a tasks record (tasks.py)."""
    op = records.op_of(rec)
    if op is records.TASKS_OP:
        from rehydrate.store import tasks  # see render_view

        return tasks.render(rec["data"])
    if op is records.MERGE:
        from rehydrate.store.wal import graph  # a log without a merge never loads it (tests/cli/test_cli_imports.py)

        return str(graph.render_merged(rec))
    if op is records.HANDOFF_OP:
        return render_handoff(rec["data"]["text"])
    return render_next_record(rec)
