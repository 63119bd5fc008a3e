"""direction: what moved on the main line, by others, since the checkpoint.

Contract (WP-D builds it; until then run() returns no finding):
- The main line: origin/HEAD's target, else origin/main or origin/master, else the local main or master when HEAD is
  on another branch (the refs come from the git probe live-state started, `context.shared["gitnow"]`). None: n/a "no
  main line to compare (looked for origin/HEAD, origin/main, origin/master, main, master)".
- `git log -z --max-count=21 --since=<checkpoint ts> <main> ^HEAD ^<checkpoint HEAD>` and `git config user.email`:
  others' commits listed, one's own counted. Local refs only: nothing fetches ("as of the last fetch", FETCH_HEAD's
  time).
- ok: "origin/main: no commit by others since checkpoint 42 that HEAD lacks (as of the last fetch, 10:02Z)".
- degraded: "origin/main moved: 2 commits by others since checkpoint 42 that HEAD lacks: d4e5f6a "Fix tokenizer
  (#12)" (Ann)..."; next: "read them (git log HEAD..origin/main) before going on: one may be what the checkpoint was
  waiting for".
- skipped: git past its deadline (as live-state). Subjects and names are untrusted text, cleaned to one line.
- Runs in both scopes; if the hook's start-up bound (3.0x `python -c pass`) cannot hold with it, it gets
  `scope = "recover"` and the ledger's deferred note names it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Context, Finding


class DirectionCheck:
    name = "direction"

    def run(self, context: Context) -> list[Finding]:
        return []
