"""The git probe live-state and direction share: git now, asked once per run, with bounded calls.

Contract (WP-D builds it; until then probe() raises NotImplementedError and nothing calls it):
- `probe(context) -> Probe` starts round 1 at once, in parallel, through `rehydrate.proc.start` (never subprocess,
  never a shell): `git status --porcelain=v2 --branch -z` (the argv of store/gitinfo.py; upstream and ahead/behind
  read by `gitinfo.parse_upstream`), `git log -z --boundary --format=%H%x1f%P%x1f%an%x1f%ae%x1f%cI%x1f%s
  --max-count=51 <checkpoint HEAD>..HEAD` (when the checkpoint recorded a HEAD), and `git for-each-ref` on
  origin/HEAD, origin/main, origin/master, main, master. It returns without waiting. Each call has its deadline (2 s
  in hook scope, 10 s in recover: checks/livestate.py) and runs with `context.env`.
- `Probe.result() -> GitNow` waits for round 1, then runs round 2 only when needed (`merge-base --is-ancestor`,
  `reflog -n 20 -z --format=%gs HEAD`), and returns the same GitNow on every later call. It never raises for git's
  sake: a call that failed or timed out is named in `GitNow.unanswered`.
- Nothing walks the whole history: every log has --max-count, and --is-ancestor stops at the checkpoint.
- Everything git prints is untrusted text (names, subjects): GitNow holds it raw; the checks clean it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Context

MAX_COMMITS = 50  # commits since the checkpoint counted (one more asked, to know there are more)


class Commit:
    """One commit of a `git log`: full hash, parents' hashes, author name and email, ISO date, subject."""

    __slots__ = ("author", "date", "email", "parents", "sha", "subject")

    def __init__(self, sha: str, parents: list[str], author: str, email: str, date: str, subject: str) -> None:
        self.sha = sha
        self.parents = parents
        self.author = author
        self.email = email
        self.date = date
        self.subject = subject


class GitNow:
    """What git said. repo: whether `git status` found a work tree (None: it did not answer). head: HEAD's full hash
    (None: unborn, or no answer). branch: None when detached. dirty: paths changed now, state/ left out (at most
    gitinfo.MAX_DIRTY; dirty_count the true number). upstream, ahead, behind: None without an upstream. commits: the
    commits in <checkpoint HEAD>..HEAD, newest first, at most MAX_COMMITS (`more`: whether there were more).
    descendant: whether the checkpoint's HEAD is an ancestor of HEAD (None: unknown, or no HEAD at the checkpoint).
    known: whether the checkpoint's commit exists here. reflog: HEAD's last reflog subjects, newest first (asked only
    when HEAD was rewritten or the branch changed). refs: refname -> hash (or `ref: target` for a symbolic ref) of
    the main-line candidates present. fetched: FETCH_HEAD's time as UTC ISO, None if never fetched. unanswered: git
    subcommand -> why it gave no answer ("did not answer within 2 s", "exit 128: ...")."""

    def __init__(self) -> None:
        self.repo: bool | None = None
        self.head: str | None = None
        self.branch: str | None = None
        self.dirty: list[str] = []
        self.dirty_count = 0
        self.upstream: str | None = None
        self.ahead: int | None = None
        self.behind: int | None = None
        self.commits: list[Commit] = []
        self.more = False
        self.descendant: bool | None = None
        self.known: bool | None = None
        self.reflog: list[str] = []
        self.refs: dict[str, str] = {}
        self.fetched: str | None = None
        self.unanswered: dict[str, str] = {}


class Probe:
    """The running git calls of one probe; `result()` waits for them (see the module's docstring)."""

    def result(self) -> GitNow:
        raise NotImplementedError("the git probe comes with WP-D")


def probe(context: Context) -> Probe:
    """Starts git for this run (see the module's docstring); kept by live-state in context.shared["gitnow"]."""
    raise NotImplementedError("the git probe comes with WP-D")
