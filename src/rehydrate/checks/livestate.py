"""live-state: git now against the checkpoint (HEAD, commits since, branch, dirty files, upstream ahead or behind);
PR and CI through `gh` in `rehydrate recover` only (checks/gh.py).

Contract (WP-D builds it; until then start() does nothing and run() returns no finding):
- start(context): starts the git probe (`checks.gitnow.probe(context)`) and keeps it in `context.shared["gitnow"]`,
  before any check reads a file; run() collects it (`.result()`), so does direction. Inputs: `context.since.git`
  (the checkpoint's `{"head", "branch", "dirty"}`), `context.env` (PATH).
- One finding per aspect. ok: "HEAD a1b2c3d on feat is the checkpoint's (git status, git log a1b2c3d..HEAD)".
  degraded: commits since the checkpoint (at most 5 subjects named, counted to 50); HEAD not a descendant of the
  checkpoint's (rewritten; the reflog's entry quoted); the checkpoint's commit unknown; branch switched; files dirty
  now that the checkpoint did not record (state/ left out; at most 10 named); upstream behind ("as of the last
  fetch"). Upstream ahead only: ok. No upstream: n/a. Not a git repository then and now: n/a "not a git repository
  (git status in ...)". A HEAD recorded at the checkpoint but no answer now, or a git call past its deadline (2 s a
  call in hook scope, 10 s in recover): skipped, naming what was not looked at.
- gh (recover scope only): not installed, not signed in (exit 4), or no pull request for the branch: n/a; past its
  deadline (config `gh_timeout`, default 8 s, clamped to 1-60; the process group killed) or another error: skipped;
  failing CI, or a pull request merged or closed after the checkpoint, or one named in the checkpoint's next step
  merged: degraded. In hook scope gh is never run: not on PATH gives the same n/a as in recover, otherwise no
  finding and the ledger's deferred note. Nothing ever fetches or reaches a network but gh itself.
- git's and gh's output is untrusted text: cleaned to one line; PR numbers digits only, at most 3, separate argv
  entries, never a shell.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Context, Finding

HOOK_DEADLINE = 2.0  # seconds for each git call in hook scope
RECOVER_DEADLINE = 10.0  # in recover scope
GH_TIMEOUT = 8.0  # gh's default deadline (config gh_timeout, clamped to GH_TIMEOUT_RANGE)
GH_TIMEOUT_RANGE = (1.0, 60.0)


class LiveStateCheck:
    name = "live-state"

    def start(self, context: Context) -> None:
        return None

    def run(self, context: Context) -> list[Finding]:
        return []
