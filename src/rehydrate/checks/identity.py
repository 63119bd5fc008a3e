"""identity: who am I (actor, goal), and did the state load at all."""

from __future__ import annotations

from rehydrate.checks import Context, Finding
from rehydrate.store import views


class IdentityCheck:
    name = "identity"

    def run(self, context: Context) -> list[Finding]:
        if context.state is None or context.reconciled is None:
            return [Finding(self.name, "failed", f"the state did not load: {context.error}")]
        goal = (context.views.get("00_goal.md") or "").strip().split("\n")
        title = next((ln for ln in goal if ln.strip() and not ln.startswith("#")), "")
        title = views.clean(title[:400], one_line=True)
        if not title:
            return [Finding(self.name, "degraded", f"actor {context.state.actor}; the goal file is missing or empty")]
        short = title if len(title) <= 100 else title[:99] + "…"
        return [Finding(self.name, "ok", f"actor {context.state.actor}; goal: {short}")]
