"""The brief's mail section: the unread messages to this actor (and to all), most urgent first.

A message is a teammate's text that arrived by git pull: untrusted. Each is quoted by brief/fence.py (cleaned of
control and invisible characters, the brief's token removed, every line marked `> `), under a source line naming its
sender, kind, time and file; it can neither close its quote nor imitate the ledger. At most SHOWN messages are quoted,
each cut to CAP characters (none under a terse plan, when the brief is fitting a small budget), the rest counted.
"""

from __future__ import annotations

import os

from rehydrate.brief.fence import plural, quote
from rehydrate.store.layout import MAIL_DIR
from rehydrate.store.state import State
from rehydrate.text import shorten

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.brief.compose import Sections
    from rehydrate.brief.plan import Draft
    from rehydrate.store.mail.inbox import Listing

SHOWN = 3
CAP = 1200


def section(o: Sections) -> None:
    """Append the mail section (nothing when nothing is unread)."""
    found = _material(o.d)
    if found is None or (not found.messages and not found.not_read):
        return
    total = len(found.messages) + found.not_read
    shown = [] if o.p.terse else found.messages[:SHOWN]
    parts = []
    for m in shown:
        text, cut = shorten(m.text, CAP)
        source = f"from {m.sender} · {m.kind} · {m.ts} · {m.rel}"
        parts.append(quote(text, source, o.d.token, f"cut: {m.rel} holds it all" if cut else ""))
    rest = total - len(shown)
    if rest:
        parts.append(f"and {plural(rest, 'more unread message')}: `rehydrate mail` shows them")
    head = f"## Mail: {plural(total, 'unread message')} (`rehydrate mail` shows them and records that you read them)"
    o.sections.append(head + "\n" + "\n".join(parts))


def _material(d: Draft) -> Listing | None:
    """The unread messages, read once per brief (the fitting composes it many times)."""
    cached = d.__dict__.get("_mail", False)
    if cached is not False:
        return cached  # type: ignore[no-any-return]
    found = None
    try:
        if d.path and os.path.isdir(os.path.join(d.path, MAIL_DIR)):
            from rehydrate.store.mail import inbox, known  # off the hook path while there is no mailbox

            state = State(d.path, d.actor)
            found = inbox.listing(state, known.read_set(state))
    except Exception:  # the mailbox check names what could not be read; the brief goes on without the section
        found = None
    d.__dict__["_mail"] = found
    return found
