"""The harness's task list in the state: what a `tasks` record carries, how it is bounded, and how 30_tasks.md
(tasks/<actor>.md for an actor that joined) renders it.

A hook after each task-tool call (harness/tasks.py) hands over the list as the harness holds it then. The record
carries the whole list, never a change to fold: any one record renders the view, a crash or a rotate redoes it from
that record alone, and a write costs what the list holds (bounded here), never what the log holds. Everything in it
came from the model's tool calls: it is cleaned to one line a field and bounded, and the brief quotes it in a fence.
On the hook path: standard library only.
"""

from __future__ import annotations

from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_ITEMS = 100  # items kept in one record; beyond it the done ones go first, and the view counts what went
MAX_TEXT = 300  # characters of an item's subject
MAX_DETAIL = 240  # characters of an item's description
MAX_WORD = 80  # characters of an id, a status, the source or the session
MAX_BLOCKERS = 10
DONE = frozenset(("completed", "complete", "done", "cancelled", "canceled", "deleted"))
ACTIVE = frozenset(("in_progress", "in-progress", "active", "doing"))


def _word(value: object) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = clean(str(value), one_line=True)[:MAX_WORD]
    return text or None


def rank(status: object) -> int:
    """Open items first: in progress (0), then any other open status (1), then done (2)."""
    word = str(status).lower()
    return 0 if word in ACTIVE else 2 if word in DONE else 1


def item(
    text: object, status: object, ident: object = None, detail: object = None, blocked_by: object = None
) -> dict[str, Any]:
    """One item as a record keeps it: its subject cleaned and cut, an id, a status and a description if given."""
    out: dict[str, Any] = {
        "text": clean(str(text or ""), one_line=True)[:MAX_TEXT],
        "status": _word(status) or "pending",
    }
    if _word(ident) is not None:
        out["id"] = _word(ident)
    said = clean(str(detail), one_line=True)[:MAX_DETAIL] if isinstance(detail, str) else ""
    if said and said != out["text"]:
        out["detail"] = said
    if isinstance(blocked_by, list):
        blockers = [w for w in (_word(b) for b in blocked_by[:MAX_BLOCKERS]) if w]
        if blockers:
            out["blocked_by"] = blockers
    return out


def make(source: str, items: list[dict[str, Any]], session: object = None) -> dict[str, Any]:
    """A tasks record's data: the items (as item() made them) in the harness's order, bounded to MAX_ITEMS (the
    done ones dropped first, then the last open ones), with what was dropped counted."""
    kept = items
    dropped = {"open": 0, "done": 0}
    if len(items) > MAX_ITEMS:
        order = sorted(range(len(items)), key=lambda i: rank(items[i]["status"]))
        keep = set(order[:MAX_ITEMS])
        for i in order[MAX_ITEMS:]:
            dropped["done" if rank(items[i]["status"]) == 2 else "open"] += 1
        kept = [it for i, it in enumerate(items) if i in keep]
    data: dict[str, Any] = {"source": _word(source) or "the harness", "items": kept}
    if _word(session) is not None:
        data["session"] = _word(session)
    if dropped["open"] or dropped["done"]:
        data["dropped"] = dropped
    return data


def counts(data: dict[str, Any]) -> tuple[int, int, int]:
    """(in progress, other open, done) of a record's items."""
    found = [0, 0, 0]
    for it in _items(data):
        found[rank(it.get("status"))] += 1
    return found[0], found[1], found[2]


def _items(data: dict[str, Any]) -> list[dict[str, Any]]:
    items = data.get("items")
    return [it for it in items if isinstance(it, dict)] if isinstance(items, list) else []


def render(data: dict[str, Any]) -> str:
    """The view: a title with the counts, then one line per item, open ones first (in progress, then the others),
    each group in the harness's order, a description indented under its item. Untrusted data renders too: every
    field is cleaned again, so that a record from a pull cannot put a line of its own in the file."""
    active, waiting, done = counts(data)
    session = _word(data.get("session"))
    title = f"# Tasks ({_word(data.get('source')) or 'the harness'}"
    title += f", session {session}" if session else ""
    title += f": {active + waiting} open, {active} of them in progress; {done} done)\n"
    lines = [title, "Mirrored from the harness's task list after each change; rehydrate rewrites this file.\n", "\n"]
    items = sorted(_items(data), key=lambda it: rank(it.get("status")))
    for it in items:
        ident = _word(it.get("id"))
        text = clean(str(it.get("text", "")), one_line=True)[:MAX_TEXT] or "(no subject)"
        line = f"- [{_word(it.get('status')) or 'pending'}] " + (f"#{ident} " if ident else "") + text
        blockers = it.get("blocked_by")
        if isinstance(blockers, list) and blockers:
            line += " (blocked by " + ", ".join(f"#{w}" for w in map(_word, blockers[:MAX_BLOCKERS]) if w) + ")"
        lines.append(line + "\n")
        detail = it.get("detail")
        if isinstance(detail, str) and detail:
            lines.append("  " + clean(detail, one_line=True)[:MAX_DETAIL] + "\n")
    if not items:
        lines.append("(empty: the harness's task list holds no item)\n")
    dropped = data.get("dropped")
    if isinstance(dropped, dict):
        gone = [f"{n} {k}" for k in ("open", "done") if isinstance(n := dropped.get(k), int) and n > 0]
        if gone:
            lines.append(f"(and {' and '.join(gone)} not kept: more than {MAX_ITEMS} items)\n")
    return "".join(lines)
