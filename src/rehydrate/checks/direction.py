"""direction: what moved on the main line, by others, since the checkpoint.

Contract:
- The main line: origin/HEAD's target, else origin/main or origin/master, else the local main or master when HEAD is
  on another branch (the refs come from the git probe live-state started, `context.shared["gitnow"]`). None: n/a "no
  main line to compare (looked for origin/HEAD, origin/main, origin/master, main, master)".
- `git log -z --max-count=21 <main> ^HEAD ^<checkpoint HEAD>` and `git config user.email`: others' commits
  listed, one's own counted. No --since: a commit made before the checkpoint but pushed after it is news too (the
  two negative refs bound the walk). Local refs only: nothing fetches ("as of the last fetch", FETCH_HEAD's
  time).
- ok: "origin/main: no commit by others since checkpoint 42 that HEAD lacks (as of the last fetch, 10:02Z)".
- degraded: "origin/main moved: 2 commits by others since checkpoint 42 that HEAD lacks: d4e5f6a "Fix tokenizer
  (#12)" (Ann)..."; next: "read them (git log HEAD..origin/main) before going on: one may be what the checkpoint was
  waiting for".
- skipped: git past its deadline (as live-state), for-each-ref included (no answer is not "no main line").
  Subjects and names are untrusted text, cleaned to one line.
- Runs in both scopes; if the hook's start-up bound (3.0x `python -c pass`) cannot hold with it, it gets
  `scope = "recover"` and the ledger's deferred note names it.
"""

from __future__ import annotations

from rehydrate.checks import DEGRADED, NA, OK, SKIPPED, Finding, Quoting
from rehydrate.checks.git import probe as gitnow
from rehydrate.checks.git.files import origin_main
from rehydrate.checks.git.probe import MAX_LISTED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Context
    from rehydrate.checks.git.probe import GitNow

NAME = "direction"
NAMED = 3  # others' commits named in the finding
REMOTES = "origin/HEAD, origin/main, origin/master"
LOOKED = f"looked for {REMOTES}, main, master"


class DirectionCheck:
    name = NAME

    def run(self, context: Context) -> list[Finding]:
        if context.state is None:
            return []  # the state did not load: identity and state say so
        if context.since is None or context.since.seq is None:
            return []  # no checkpoint known to compare with: as live-state (checks/livestate.py)
        probe = context.shared.get("gitnow")
        if probe is None:  # live-state was not run: start the probe here
            probe = context.shared["gitnow"] = gitnow.probe(context)
        now: GitNow = probe.result()
        if now.repo is None:
            why = now.unanswered.get("status", "gave no answer")
            return [Finding(NAME, SKIPPED, f"git status {why}: the main line not looked at")]
        if now.repo is False:
            return [Finding(NAME, NA, f"not a git repository (git status in {context.state.root}): no main line")]
        if "for-each-ref" in now.unanswered:
            text = f"git for-each-ref {now.unanswered['for-each-ref']}: the main line not looked at"
            return [Finding(NAME, SKIPPED, text, "run `git log HEAD..origin/main` yourself before going on")]
        main = main_line(now)
        if main is None:
            if now.branch in ("main", "master"):  # the local main line is HEAD's own: nothing else to compare with
                text = f"HEAD on {now.branch} is the main line; no remote one (git for-each-ref: {REMOTES})"
                return [Finding(NAME, NA, text)]
            return [Finding(NAME, NA, f"no main line to compare (git for-each-ref: {LOOKED})")]
        since = context.since
        head = gitnow.recorded_head(since.git.get("head")) if since.git else None
        label = f"checkpoint {since.seq}"
        if head is None and not since.complete:  # the record was not read: what it holds is unknown, not absent
            text = f"{label}'s record was not reached ({since.problem}): {_short(main)} not compared (git log)"
            return [Finding(NAME, SKIPPED, text, f"run `git log HEAD..{_short(main)}` yourself before going on")]
        if head is None:
            return [Finding(NAME, NA, f"{label} recorded no git HEAD: {_short(main)} not compared with it (git log)")]
        answers = probe.early(main) or probe.run(gitnow.direction_calls(main, head))
        failed = probe.why(answers["log"])
        if failed is not None:
            text = f"git log HEAD..{_short(main)} {failed}: the main line since {label} not looked at"
            return [Finding(NAME, SKIPPED, text, f"run `git log HEAD..{_short(main)}` yourself before going on")]
        me = answers["config"].out.decode("utf-8", "replace").strip() if answers["config"].code == 0 else None
        return [_finding(answers["log"].out, me, _short(main), label, now.fetched)]


def main_line(now: GitNow) -> str | None:
    """origin/HEAD's target, else origin/main or origin/master, else the local main or master when HEAD is on
    another branch: a full ref name, or None."""
    found = origin_main(now.refs)  # a dangling origin/HEAD (origin/master after a rename to main and a fetch
    if found is not None:  # --prune) falls through to the refs that exist
        return found
    for ref in ("refs/heads/main", "refs/heads/master"):
        if ref in now.refs and now.branch != ref[len("refs/heads/") :]:
            return ref
    return None


def _short(ref: str) -> str:
    for prefix in ("refs/remotes/", "refs/heads/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def _finding(out: bytes, me: str | None, main: str, label: str, fetched: str | None) -> Finding:
    others: list[list[str]] = []
    own = 0
    more = False
    for entry in out.decode("utf-8", "replace").split("\0"):
        fields = entry.strip("\n").split("\x1f")
        if len(fields) != 4:
            continue
        if own + len(others) >= MAX_LISTED:
            more = True
        elif me and fields[2] == me:
            own += 1
        else:
            others.append(fields)
    when = f"as of the last fetch, {fetched}" if fetched else "as of the clone: never fetched"
    if main.startswith("origin/") is False:
        when = "a local branch"
    mine = f"; {own} of your own" if own else ""
    if not others:
        return Finding(NAME, OK, f"{main}: no commit by others since {label} that HEAD lacks{mine} ({when}; git log)")
    count = f"{'more than ' if more else ''}{len(others)}"
    q = Quoting()
    named = ", ".join(
        f"{c[0][:7]} {q('commit subject', 'git log', c[3][:120])} ({q('author', 'git log', c[1][:60])})"
        for c in others[:NAMED]
    )
    if len(others) > NAMED:
        named += f" and {len(others) - NAMED} more"
    text = f"{main} moved: {count} commit(s) by others since {label} that HEAD lacks: {named}{mine} ({when})"
    nxt = f"read them (git log HEAD..{main}) before going on: one may be what {label} was waiting for"
    return Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)
