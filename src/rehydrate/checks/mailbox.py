"""mailbox: the messages to this actor (and to all) that it has not read yet, most urgent first.

- ok: nothing unread, or unread messages of kinds actionable and fyi only (counted by kind);
- degraded: an unread `redirect` or `blocker` (someone changed or stopped this line of work): next `rehydrate mail`,
  which shows them and records that they were read;
- skipped: a file under state/mail/ that is a link, a FIFO, too large or not a message (named, never followed);
- degraded too: a message in the name of an actor who signs her records, that her signed log does not vouch for (no
  `mail` record of hers, signed, names it): forged, named, neither shown nor counted as hers;
- n/a: the state has one actor and no mail.
Bounded: one readdir of state/mail/<me>/ and state/mail/all/, the header read only for unread messages (at most
store.mail.inbox.MAX_READ), and this actor's log read for its `read` records past what a per-worktree cache covers.
"""

from __future__ import annotations

import os

from rehydrate.checks import Context, Finding
from rehydrate.store import actors
from rehydrate.store.layout import MAIL_DIR
from rehydrate.store.state import State

NEXT = "run `rehydrate mail`: it shows them (most urgent first) and records that you read them"


class MailboxCheck:
    name = "mailbox"

    def run(self, context: Context) -> list[Finding]:
        if context.state is None:
            return []  # the state did not load: identity says so
        root, me = context.state.root, context.state.actor
        folder = os.path.basename(root)  # paths as shown to users (State.rel)
        where = f"{os.path.join(folder, MAIL_DIR, me)}/ and {os.path.join(folder, MAIL_DIR, 'all')}/"
        if not os.path.lexists(os.path.join(root, MAIL_DIR)):
            if len(actors.listed(root)) <= 1:
                return [Finding(self.name, "n/a", "one actor, no state/mail/")]
            return [Finding(self.name, "ok", f"nothing unread (no mail yet in {where})")]
        from rehydrate.store.mail import inbox, known, messages, senders  # only where there is mail: off the hook path

        state = State(root, me)  # store.mail's readers take the State they read through (nothing is written)
        found = inbox.listing(state, known.read_set(state))
        findings = [
            Finding(self.name, "skipped", why, "move it out of state/mail/ (it was not written by rehydrate)")
            for why in found.skipped
        ]
        findings += [  # in a keyed actor's name, not vouched for by her signed log: named, never shown as hers
            Finding(self.name, "degraded", f"forged: {m.rel}: {senders.forged_text(m, why)}", f"git rm {m.rel}")
            for m, why in found.forged
        ]
        if not found.messages and not found.not_read:
            return [Finding(self.name, "ok", f"nothing unread in {where}"), *findings]
        counts = {k: sum(1 for m in found.messages if m.kind == k) for k in messages.KINDS}
        summary = ", ".join(f"{k} {n}" for k, n in counts.items() if n)
        if found.not_read:
            summary += f", {found.not_read} more not read (at most {inbox.MAX_READ} at a time)"
        urgent = [m for m in found.messages if m.kind in messages.URGENT]
        total = len(found.messages) + found.not_read
        if urgent:
            first = urgent[0]
            text = f"{total} unread ({summary}); first: {first.kind} {first.id} from {first.sender} ({first.rel})"
            return [Finding(self.name, "degraded", text, NEXT), *findings]
        return [Finding(self.name, "ok", f"{total} unread ({summary}) in {where}", NEXT), *findings]
