"""identity: who am I (actor, goal), and did the state load at all.

A missing or empty goal with no checkpoint naming a next step leaves nothing to act on: the finding then carries the
ledger's one question (`ask`, checks/ledger.ASK_TASK), so that the ledger stops and asks rather than guess."""

from __future__ import annotations

from rehydrate.checks import Context, Finding
from rehydrate.checks.ledger import ASK_TASK
from rehydrate.store import layout, views
from rehydrate.text import clean, quoted


class IdentityCheck:
    name = "identity"

    def run(self, context: Context) -> list[Finding]:
        if context.state is None or context.reconciled is None:
            return [Finding(self.name, "failed", f"the state did not load: {context.error}")]
        goal = (context.views.get("00_goal.md") or "").strip().split("\n")
        title = next((ln for ln in goal if ln.strip() and not ln.startswith("#")), "")
        title = clean(title[:400], one_line=True)
        if not title:
            text = f"actor {context.state.actor}; the goal file is missing or empty"
            return [Finding(self.name, "degraded", text, ask=None if _checkpoint_next(context) else ASK_TASK)]
        # the goal file arrived by git pull like the rest of state/: quoted, so that it cannot run on as the ledger's
        return [Finding(self.name, "ok", f"actor {context.state.actor}; goal: {quoted(title, 100)}")]


def _checkpoint_next(context: Context) -> str | None:
    """The last checkpoint's next step: from the WAL's back-scan when the caller built one, else as 99 shows it."""
    if context.since is not None and context.since.next:
        return context.since.next
    return views.parse_next(context.views.get(layout.NEXT) or "").get("next") or None
