"""handoff: the sunset note (state/20_handoff.md), read in full, and whether it predates the last checkpoint's work.

Contract (WP-A builds it; until then run() returns no finding):
- Reads the whole file through `fsio.read_bytes(path, MAX_HANDOFF)`, never just its title (the brief still shows its
  head and tail). Inputs: `context.since.handoff` (the last `handoff` record after the last checkpoint, or None) and
  `context.since.checkpoint`. The file and the WAL are untrusted (they arrived by git pull).
- n/a: no handoff note: "no handoff note (state/20_handoff.md absent)".
- ok: written after the last checkpoint: "state/20_handoff.md read in full (2,140 bytes, 38 lines), written at record
  51 after checkpoint 50".
- degraded: written before the last checkpoint (no `handoff` record since it), and it stays so after every later
  checkpoint until a new handoff is written: "written at record 12 (...), before checkpoint 42: it predates the last
  checkpoint's work"; next: "read it as background; where it and checkpoint 42 disagree, the checkpoint wins; write
  a new handoff when you stop".
- skipped: unreadable, larger than MAX_HANDOFF, or the WAL back-scan did not reach the checkpoint (`since.complete`
  false, or `since` None while the state loaded).
- Runs in both scopes; bounded by MAX_HANDOFF bytes and the back-scan's cap.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Context, Finding


class HandoffCheck:
    name = "handoff"

    def run(self, context: Context) -> list[Finding]:
        return []
