"""Reading the views for the brief, bounded by what it can show, whatever their size (store/latches/index.py: the
scan of 10_invariants.md and its cached summary; the start and end of a view too long to show whole), and what the
views do not say: the lines of work merged, the entries' authors.
"""

from __future__ import annotations

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, layout
from rehydrate.store.latches import index, summary
from rehydrate.store.latches.binding import MAX_INVARIANTS

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State


def read_views(
    state: State,
    snap: Snapshot | None,
    budget: int,
    sizes: dict[str, int] | None = None,
    parts: dict[str, object] | None = None,
) -> dict[str, str | None]:
    """The views' text for the brief, into sizes each file's size on disk, and into parts what was read of 10 and 20
    besides their text (the scan of 10, index.Invariants; the handoff's end).

    00 and 99 are read whole (reconciliation reads them anyway). 10 and 20 are read only as far as a brief of this
    budget could show them, whatever their size (store/latches/index.py): of 10, one scan of its bytes for the
    rejected approaches (each one noted, never dropped) and its end for the newest decisions (its text here: that
    end); of 20, its start and its end. Of the other NN_*.md files, only what a brief of this budget could show is
    read: none shows more than `budget` characters of them in all, and a character is at most 4 bytes, so a file
    bigger than 4 * budget bytes is not read at all (its text is empty, its size says what was left out), and once
    the files read hold more than `budget` characters, the rest are not read either. A view reconciliation read into
    snap is taken from there. The cost follows what can be shown, not what is stored."""
    shown: dict[str, str | None] = {}
    sizes = sizes if sizes is not None else {}
    room = 4 * budget
    total = 0
    seen = snap.seen if snap is not None and not snap.repaired else None
    parts = parts if parts is not None else {}
    pc = state.pc(snap.last) if snap is not None else (layout.NEXT, layout.HANDOFF)
    # an actor that joined: its own files in the slots of 99, 20 and 30
    own = {layout.NEXT: pc[0], layout.HANDOFF: pc[1], layout.TASKS: layout.tasks_view(pc[0])}
    if pc[0] != layout.NEXT:
        parts["pc"], seen = pc, None
    for name in (layout.GOAL, layout.INVARIANTS, layout.HANDOFF, layout.TASKS, *state.extra_views(), layout.NEXT):
        try:
            if name in (layout.INVARIANTS, layout.HANDOFF):
                shown[name] = _bounded(state.path(own.get(name, name)), seen, name, budget, sizes, parts, snap)
                continue
            if name == layout.TASKS:  # bounded like the other files: at most what a brief can show
                data, size = fsio.read_head(state.path(own[name]), room)
            elif name in layout.VIEWS:
                data = state.view_bytes(own.get(name, name), snap)
                size = None if data is None else len(data)
            else:
                data, size = fsio.read_small(state.path(name), room if total <= room // 4 else 0)
            shown[name] = None if data is None else data.decode("utf-8", "replace")
            if size is not None:
                sizes[name] = size
            if name not in layout.VIEWS and shown[name]:
                total += len(shown[name] or "")
        except RehydrateError:
            shown[name] = None
    return shown


def _bounded(
    path: str,
    seen: dict[str, bytes | None] | None,
    name: str,
    budget: int,
    sizes: dict[str, int],
    parts: dict[str, object],
    snap: Snapshot | None = None,
) -> str | None:
    """10 or 20 read as far as a brief of this budget could show them (see read_views); its text, or None if absent.
    10 as the cache's summary of its last scan says, checked (store/latches/summary.py), when the summary is for 10's
    binding as reconciliation found it; else scanned whole, and the summary kept for the next time."""
    src = index.open_view(path, seen, name)
    if src is None:
        return None
    try:
        sizes[name] = src.size
        if name == layout.INVARIANTS:
            keep, room = budget // 12, 4 * budget
            known = snap is not None and not snap.repaired and snap.inv_ok and snap.inv is not None
            lines = snap.inv if known and snap is not None else None
            inv = None
            if snap is not None and lines is not None and lines.size == src.size:
                bound = lines.text()
                if snap.cache.scan:
                    inv = summary.from_summary(src, snap.cache.scan, bound, lines.n, keep, room)
                if inv is None:
                    inv = index.scan_invariants(src, keep, room)
                    snap.cache.remember_scan(summary.summary(inv, bound, keep))
            else:
                inv = index.scan_invariants(src, keep, room)
            parts[name] = inv
            return inv.tail.decode("utf-8", "replace")
        head, tail = index.head_tail(src, 4 * budget)
        if tail is not None:
            parts[name] = tail.decode("utf-8", "replace")
        return head.decode("utf-8", "replace")
    finally:
        src.close()


# --- lines of work merged, and the entries' authors ------------------------------------------------------------------
#
# The entries' authors are cached as a 7th part of the scan summary (the binding it names is the first part): the
# newest AUTHORS_MOST entries of 10 (those a brief could show) grouped by the actor whose record binds each,
# "actor=ID,ID;actor=ID", found once by binding every actor's recorded lines (which reads every log), then used while
# 10 is as bound. Untrusted: an actor's name and an id are used only if well formed.

AUTHORS_MOST = 1024


def annotate(inp: object, state: State, snap: Snapshot) -> None:
    """The brief's input given what the views do not say: the lines of work merged and not yet chosen between
    (snap.merged, WP1's), and, when the state has more than one actor, the author of each entry of 10 it may show."""
    merged = getattr(snap, "merged", None)
    setattr(inp, "merged", merged if isinstance(merged, list) else None)  # noqa: B010 (plan.BriefInput's)
    if len(state.actor_names()) > 1:
        setattr(inp, "authors", entry_authors(state, snap))  # noqa: B010


def entry_authors(state: State, snap: Snapshot) -> dict[str, str]:
    """Entry id -> actor for the newest entries of 10 (from the cache while 10 is as bound; else found and kept)."""
    bound = snap.inv.text() if snap.inv is not None and snap.inv_ok and not snap.repaired else None
    parts = snap.cache.scan.split(" ") if bound is not None else []
    if len(parts) == 7 and parts[0] == bound:
        return parse_authors(parts[6])
    # latch and order are not on the hook path (order loads collections): only a state of several actors needs them
    from rehydrate.store.latches.latch import lines, recorded_lines
    from rehydrate.store.latches.order import line_authors

    data = fsio.read_bytes(state.path(layout.INVARIANTS), MAX_INVARIANTS, WORDS) or b""
    file_lines = lines(data)
    who = line_authors(file_lines, recorded_lines(state))
    by: dict[str, list[str]] = {}
    n = 0
    for text, actor in zip(reversed(file_lines), reversed(who), strict=True):
        ident = layout.entry_id(text) if text.startswith("- ") else None
        if ident is None:
            continue
        n += 1
        if n > AUTHORS_MOST:
            break
        if actor is not None and layout.is_actor(actor):
            by.setdefault(actor, []).append(ident)
    field = ";".join(f"{a}={','.join(ids)}" for a, ids in sorted(by.items())) or "-"
    if len(parts) >= 6 and parts[0] == bound:
        snap.cache.remember_scan(" ".join(parts[:6]) + " " + field)
    return parse_authors(field)


def parse_authors(field: str) -> dict[str, str]:
    """annotate's cache part back (untrusted: a malformed name or id is left out)."""
    out: dict[str, str] = {}
    for group in field.split(";") if field != "-" else ():
        actor, _, ids = group.partition("=")
        if not layout.is_actor(actor):
            continue
        for ident in ids.split(","):
            if layout.entry_id(f"- {ident} ") == ident:
                out[ident] = actor
    return out
