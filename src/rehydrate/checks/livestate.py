"""live-state: git now against the checkpoint (HEAD, commits since, branch, dirty files, upstream ahead or behind);
PR and CI through `gh` in `rehydrate recover` only (checks/git/gh.py).

Contract:
- start(context): starts the git probe (`checks.git.probe.probe(context)`) and keeps it in `context.shared["gitnow"]`,
  before any check reads a file; in recover scope it also starts gh (`checks.git.gh.start`, `context.shared["gh"]`).
  run() collects them (`.result()`); direction reads the same probe. Inputs: `context.since.git` (the checkpoint's
  `{"head", "branch", "dirty"[, "dirty_blobs"]}`, untrusted: it came from the WAL), `context.env` (PATH),
  `context.config` (gh_timeout). No checkpoint known (no Since, or no seq): no finding, nothing started.
- One finding per aspect. ok: "HEAD a1b2c3d on feat is the checkpoint's (git status, git log a1b2c3d..HEAD)".
  degraded: commits since the checkpoint (at most 5 subjects named, counted to 50); HEAD not a descendant of the
  checkpoint's (rewritten; the reflog's entry quoted); the checkpoint's commit unknown to git now; branch switched;
  files dirty now that the checkpoint did not record (state/ left out; at most 10 named); files dirty at the
  checkpoint whose content changed since, against the git blob ids it recorded (`dirty_blobs`, store/git/info.py; next:
  check them with git diff before redoing the checkpoint's next step); upstream behind ("as of the last fetch").
  Upstream ahead only: ok. The dirty files' content: ok when each holds what was recorded (one recorded by its size
  alone, over gitinfo.MAX_BLOB_BYTES, has that size, and the finding says its content was not compared); skipped for
  one that could not be compared; no finding for a record without dirty_blobs (an older one). No upstream: n/a. Not a
  git repository then and now: n/a "not a git repository (git status in ...)". A HEAD recorded at the checkpoint but
  no answer now, or a git call past its deadline (2 s a call in hook scope, 10 s in recover): skipped, naming what
  was not looked at. Every ok and n/a names where it looked (git status, git log A..B, gh pr view).
- gh (checks/git/gh.py), only when git found a work tree. Recover: n/a when gh is not installed, not signed in or the
  branch has no pull request; skipped past its deadline or on another error; degraded on failing CI, a pull request
  merged or closed after the checkpoint, or one the checkpoint named merged. Hook scope: gh never runs; not on PATH
  gives the same n/a, otherwise no finding and "PR and CI (gh)" in `context.shared["deferred"]` (the ledger's note).
- Claims, stamps and approvals (checks/claims.py) follow git's findings: a stale or failed claim, a changed stamped or
  approved file degrades; a claim without a receipt is n/a (unverified).
- What the WAL recorded never becomes an argv option: a HEAD is used only when it is a hash (gitnow.recorded_head),
  a branch only compared, and suggested as `git switch <branch>` only when plain_branch() holds; a recorded path is
  read only through gitinfo.blobs (plain, inside the work tree, through no symbolic link; at most MAX_BLOBS paths and
  MAX_BLOB_TOTAL bytes). git's and gh's output is untrusted text, cleaned to one line; a path in a suggested command
  is one shell word (quoted).
"""

from __future__ import annotations

import os

from rehydrate import proc
from rehydrate.checks import DEGRADED, NA, OK, SKIPPED, Finding, Quoting
from rehydrate.checks.git import probe as gitnow
from rehydrate.store.git import info as gitinfo
from rehydrate.store.layout import SETUP_FILES
from rehydrate.text import named

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.checks import Context
    from rehydrate.checks.git.probe import GitNow

NAMED_COMMITS = 5  # commits since the checkpoint named in a finding
NAMED_FILES = 10  # dirty files named
NAME = "live-state"
GH_DEFERRED = "PR and CI (gh)"  # the ledger's note of what a hook left to recover (checks/git/gh.py runs it there)
GH_NOT_INSTALLED = "gh not installed (looked for gh on PATH): pull request and CI not looked at"


class LiveStateCheck:
    name = NAME

    def start(self, context: Context) -> None:
        """Starts the git probe before any check reads a file; run() and direction collect it."""
        if (
            context.state is not None
            and context.since is not None
            and context.since.seq is not None
            and "gitnow" not in context.shared
        ):
            context.shared["gitnow"] = gitnow.probe(context)
            if context.scope == "recover" and "gh" not in context.shared:
                context.shared["gh"] = _gh().start(context)  # in parallel with git

    def stop(self, context: Context) -> None:
        """Stops what start() ran that nobody waited for (a run ended early: checks.Started; gh after run())."""
        for started in (context.shared.get("gitnow"), context.shared.get("gh")):  # a Probe, a Gh
            if started is not None:
                started.stop()

    def run(self, context: Context) -> list[Finding]:
        if context.state is None:
            return []  # the state did not load: identity and state say so
        if context.since is None or context.since.seq is None:
            return []  # no checkpoint known to compare with (no Since built, or the WAL holds neither init nor one)
        self.start(context)
        try:
            found = self._git(context)
            if context.since.claims or context.since.evidence:  # receipts, stamps, approvals (checks/claims.py)
                from rehydrate.checks import claims  # loaded where there are any (tests/cli/test_cli_imports.py)

                found.extend(claims.findings(context))
            return found
        finally:
            self.stop(context)

    def _git(self, context: Context) -> list[Finding]:
        now: GitNow = context.shared["gitnow"].result()
        ckpt = context.since.git if context.since is not None else None
        label = _label(context)
        if now.repo is None:
            why = now.unanswered.get("status", "gave no answer")
            text = f"git status {why}: HEAD, branch and changed files since {label} not looked at"
            return [Finding(NAME, SKIPPED, text, "run `git status` and `git log` yourself before going on")]
        if now.repo is False or context.state is None:
            return [_no_repository(context.state.root if context.state else "?", ckpt, label)]
        since = context.since
        reached = since is None or since.complete
        problem = since.problem if since is not None else None
        setup = Setup(context.state.root)
        return [
            *_head(now, ckpt, label, reached, problem, setup),
            *_dirty(now, ckpt, label, setup),
            *_content(context.state.root, ckpt, label, since.next if since is not None else None),
            _upstream(now),
            *_pr(context, now),
        ]


def _pr(context: Context, now: GitNow) -> list[Finding]:
    """The pull request and CI (see the module's docstring): gh.py's findings where recover ran it."""
    started = context.shared.get("gh")
    if started is not None and started.batch is not None:
        return _gh().findings(started, context, now.branch)  # type: ignore[no-any-return]
    if proc.which("gh", (os.environ if context.env is None else context.env).get("PATH", os.defpath)) is None:
        return [Finding(NAME, NA, GH_NOT_INSTALLED)]
    if GH_DEFERRED not in context.shared.setdefault("deferred", []):
        context.shared["deferred"].append(GH_DEFERRED)
    return []


def _gh() -> Any:
    from rehydrate.checks.git import gh  # recover's alone: a session start never loads it

    return gh


def _label(context: Context) -> str:
    since = context.since
    return f"checkpoint {since.seq}" if since is not None and since.seq is not None else "the last checkpoint"


def _short(sha: str | None) -> str:
    return (sha or "(none)")[:7]


def _no_repository(root: str, ckpt: dict[str, Any] | None, label: str) -> Finding:
    recorded = ckpt.get("head") if ckpt else None
    if recorded:
        text = f"{label} recorded HEAD {_short(str(recorded))}, but git status finds no repository now (in {root})"
        return Finding(NAME, SKIPPED, text, "find where the repository went before going on")
    return Finding(NAME, NA, f"not a git repository, at {label} or now (git status in {root})")


def _head(
    now: GitNow,
    ckpt: dict[str, Any] | None,
    label: str,
    complete: bool = True,
    problem: str | None = None,
    setup: Setup | None = None,
) -> list[Finding]:
    """HEAD and branch against the checkpoint's: one finding. complete: whether the WAL's back-scan reached the
    checkpoint's record (else its git fields are unknown, and HEAD was not compared: skipped)."""
    where = f"{_short(now.head)} on {_branch(now.branch)}"
    head = gitnow.recorded_head(ckpt.get("head")) if ckpt else None
    if head is None and not complete:  # the record was not read: what it holds is unknown, not absent
        text = f"{label}'s record was not reached ({problem}): HEAD {where} not compared with it (git status)"
        return [Finding(NAME, SKIPPED, text, f"compare HEAD with {label}'s yourself (git log) before its next step")]
    if head is None:
        return [Finding(NAME, NA, f"{label} recorded no git HEAD: HEAD {where} not compared (git status)")]
    was = ckpt.get("branch") if ckpt else None
    if isinstance(was, str) and was and now.branch != was:
        q = Quoting()
        reflog = _reflog(q, now.reflog, ("checkout:",))
        text = f"on {_branch(now.branch)} at {_short(now.head)}; {label} was on {named(was)}{reflog}"
        if not plain_branch(was):  # the WAL is untrusted: a recorded name never becomes a command to run
            nxt = f"switch back to the branch {label} recorded (git reflog shows it), or confirm the switch was meant"
            return [Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)]
        return [Finding(NAME, DEGRADED, text, f"git switch {was}, or confirm the switch was meant", quotes=q.quotes)]
    if "log" in now.unanswered or "merge-base" in now.unanswered:
        why = now.unanswered.get("log") or now.unanswered["merge-base"]
        text = f"git log {_short(head)}..HEAD {why}: commits since {label} not looked at"
        return [Finding(NAME, SKIPPED, text, f"run `git log {_short(head)}..HEAD` yourself before going on")]
    if now.known is False:
        text = (
            f"{label}'s commit {_short(head)} is not in this repository (HEAD {where}; git log): its work is not here"
        )
        nxt = (
            f"find {label}'s commit {_short(head)} before its next step: git fetch, then git log --all and git reflog;"
            " if it is gone, check its work by hand"
        )
        return [Finding(NAME, DEGRADED, text, nxt)]
    if now.descendant is False:
        q = Quoting()
        text = f"HEAD {where} is not a descendant of {label}'s {_short(head)}{_reflog(q, now.reflog, ())}"
        nxt = f"check that {label}'s work survived: git diff {_short(head)} HEAD"
        return [Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)]
    if now.commits:
        return [_commits(now, head, label, ckpt, setup)]
    return [Finding(NAME, OK, f"HEAD {where} is {label}'s (git status, git log {_short(head)}..HEAD)")]


def _reflog(q: Quoting, reflog: list[str], prefixes: tuple[str, ...]) -> str:
    """The newest reflog entry that explains the move (any, when no prefix is given), quoted, as " (reflog: Q1)"."""
    for entry in reflog:
        if not prefixes or entry.startswith(prefixes):
            return f" (reflog: {q('reflog entry', 'git reflog', entry[:200])})"
    return ""


def _subjects(q: Quoting, commits: list[Any], more: str = "") -> str:
    """The commits by their short hashes, each subject quoted: "a1b2c3d Q1, e4f5a6b Q2"."""
    return ", ".join(f"{_short(c.sha)} {q('commit subject', 'git log', c.subject[:120])}" for c in commits) + more


def _commits(now: GitNow, head: str, label: str, ckpt: dict[str, Any] | None, setup: Setup | None = None) -> Finding:
    """The commits since the checkpoint. Those that changed only state/, rehydrate's own set-up and the files the
    checkpoint recorded as changed are its own work being committed (checkpoint, then commit), or rehydrate's set-up
    being committed: ok when every commit is such."""
    recorded = ckpt.get("dirty") if ckpt else None
    before = {p for p in recorded if isinstance(p, str)} if isinstance(recorded, list) else set()

    def own(path: str) -> bool:
        return path in before or (setup is not None and setup(path))

    news = [c for c in now.commits if c.files is None or not all(map(own, c.files))]
    q = Quoting()
    if not news:
        named = _subjects(q, now.commits[:NAMED_COMMITS])
        text = (
            f"{len(now.commits)} commit(s) since {label}, each holding only state/, rehydrate's own set-up and the "
            f"files {label} recorded as changed: {named} (git log --name-only {_short(head)}..HEAD)"
        )
        return Finding(NAME, OK, text, quotes=q.quotes)
    count = f"more than {len(news)}" if now.more else str(len(news))
    rest = len(news) - NAMED_COMMITS
    more = f" and {'more than ' if now.more else ''}{rest} more" if rest > 0 else ""
    named = _subjects(q, news[:NAMED_COMMITS], more)
    text = f"{count} commit(s) on {_branch(now.branch)} since {label}: {named}"
    nxt = f"read the {count} commit(s) since {label} (git log {_short(head)}..HEAD) before its next step"
    return Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)


def _dirty(now: GitNow, ckpt: dict[str, Any] | None, label: str, setup: Setup | None = None) -> list[Finding]:
    """Files changed now that the checkpoint did not record as changed (state/ is left out by git's pathspec).
    rehydrate's own set-up (its hooks and boot rules, as `install` wrote them) is no work since the checkpoint: ok,
    named."""
    recorded = ckpt.get("dirty") if ckpt else None
    before = {p for p in recorded if isinstance(p, str)} if isinstance(recorded, list) else set()
    new = [p for p in now.dirty if p not in before]
    ours = [p for p in new if setup is not None and setup(p)]
    if ours and len(ours) == len(new) and now.dirty_count == len(now.dirty):
        listed = ", ".join(named(p) for p in ours[:NAMED_FILES]) + (" and more" if len(ours) > NAMED_FILES else "")
        return [Finding(NAME, OK, f"only rehydrate's own set-up changed since {label}: {listed} (git status)")]
    new = [p for p in new if p not in ours]
    if not new:
        return []
    listed = ", ".join(named(p) for p in new[:NAMED_FILES])
    extra = now.dirty_count - len(now.dirty)
    more = len(new) - NAMED_FILES + max(extra, 0)
    if more > 0:
        listed += f" and {more} more"
    text = f"{len(new) + max(extra, 0)} file(s) changed now that {label} did not record: {listed} (git status)"
    diff = _diff(new[:NAMED_FILES])
    return [Finding(NAME, DEGRADED, text, f"look at git status and {diff}: no checkpoint recorded them")]


class Setup:
    """Whether a path as git names it (relative to the work tree's top) is rehydrate's own set-up: one of
    layout.SETUP_FILES in the project (the state folder's parent), or an untracked folder (git names it `dir/`) that
    holds only such files. The top is found, and a folder listed (never through a symbolic link, at most 64
    entries), only when a path is asked about."""

    LISTED = 64

    def __init__(self, state_root: str) -> None:
        self.state_root = state_root
        self.found: tuple[str, str] | None = None  # (top, the project's path from it, "" or "sub/")

    def __call__(self, path: str) -> bool:
        if self.found is None:
            top = gitinfo.top(self.state_root)
            real = os.path.realpath
            rel = "" if top is None else os.path.relpath(os.path.dirname(real(self.state_root)), real(top))
            self.found = (top or "", "" if rel in ("", ".") else rel.replace(os.sep, "/") + "/")
        top, prefix = self.found
        if not top or not path.startswith(prefix):
            return False
        rel = path[len(prefix) :]
        if not rel.endswith("/"):
            return rel in SETUP_FILES
        return self._only_setup(os.path.join(top, path), rel)

    def _only_setup(self, folder: str, rel: str) -> bool:
        seen = 0
        for where, dirs, files in os.walk(folder):
            if any(os.path.islink(os.path.join(where, d)) for d in dirs):
                return False  # a linked folder is not walked: what it holds is not known to be ours
            inside = os.path.relpath(where, folder).replace(os.sep, "/")
            for name in files:
                seen += 1
                if seen > self.LISTED or rel + ("" if inside == "." else inside + "/") + name not in SETUP_FILES:
                    return False
        return seen > 0


def _content(root: str, ckpt: dict[str, Any] | None, label: str, step: str | None) -> list[Finding]:
    """The files the checkpoint recorded as changed, by content (`dirty_blobs`, store/git/info.blobs): work on a file
    that was dirty at the checkpoint leaves the dirty paths as they were, and only its bytes tell that it went on.
    One finding: degraded when one changed since (its next step not to be redone blindly), skipped for those that
    could not be compared, else ok. A record without dirty_blobs (older, or nothing dirty): no finding."""
    recorded = ckpt.get("dirty_blobs") if ckpt else None
    if not isinstance(recorded, dict):
        return []
    # the WAL is untrusted: a path is only ever looked at through gitinfo.blobs, which refuses what is not plain
    # or leads through a symbolic link, and no more of them than a checkpoint records
    was = {p: recorded[p] for p in sorted(p for p in recorded if isinstance(p, str))[: gitinfo.MAX_BLOBS]}
    was = {p: v for p, v in was.items() if _blob_id(v) or v == gitinfo.DELETED or _size(v) is not None}
    if not was:
        return []
    where = gitinfo.top(root)
    if where is None:
        text = f"the work tree's top folder was not found: {len(was)} file(s) dirty at {label} not compared with it"
        return [Finding(NAME, SKIPPED, text, "look at git diff yourself before going on")]
    current = gitinfo.blobs(where, list(was), sized={p for p, v in was.items() if _size(v) is not None})
    found: dict[str, list[tuple[str, str]]] = {"same": [], "sized": [], "changed": [], "unchecked": []}
    for path, before in was.items():
        if path in current:  # else not safe to look at: never read
            kind, why = _compare(before, current[path])
            found[kind].append((path, why))
    how = f"(git blob ids against {label}'s)"
    changed, unchecked = found["changed"], found["unchecked"]
    left = _named([f"{named(p)} ({why})" for p, why in unchecked])
    if changed:
        listed = _named([f"{named(p)} ({why})" if why else named(p) for p, why in changed])
        text = f"{len(changed)} file(s) dirty at {label} changed since it: {listed} {how}"
        text += f"; {len(unchecked)} not compared: {left}" if unchecked else ""
        files = ", ".join(named(p) for p, _ in changed[:3])
        files += f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        diff = _diff([p for p, _ in changed[:NAMED_FILES]])
        q = Quoting()
        if step:
            redo = f"before redoing {label}'s next step, {q('the next step', label, step[:200])}"
            nxt = f"{files} changed after {label}: check them ({diff}) {redo}"
        else:
            nxt = f"{files} changed after {label}: check them ({diff}) before going on"
        return [Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)]
    if unchecked:
        text = f"{len(unchecked)} file(s) dirty at {label} not compared with it: {left}"
        diff = _diff([p for p, _ in unchecked[:NAMED_FILES]])
        return [Finding(NAME, SKIPPED, text, f"check them yourself ({diff}) before going on")]
    same, sized = [p for p, _ in found["same"]], [p for p, _ in found["sized"]]
    same, sized = [named(p) for p in same], [named(p) for p in sized]
    parts = [f"{len(same)} file(s) dirty at {label} hold the content it recorded: {_named(same)} {how}"] if same else []
    if sized:
        unread = f"over {gitinfo.MAX_BLOB_BYTES >> 20} MiB, or past {gitinfo.MAX_BLOB_TOTAL >> 20} MiB in all"
        have = f"have the size it recorded, content not hashed ({unread})"
        parts.append(f"{len(sized)} file(s) dirty at {label} {have}: {_named(sized)}")
    return [Finding(NAME, OK, "; ".join(parts))] if parts else []


def _compare(before: object, after: object) -> tuple[str, str]:
    """A recorded entry against the same path's now (both as gitinfo.blobs gives them): ("same" | "sized" |
    "changed" | "unchecked", what changed or why it was not compared, when the content alone does not say)."""
    if _size(before) is not None and _size(after) == _size(before):
        return "sized", ""
    if after == before:
        return "same", ""
    if before == gitinfo.DELETED:
        return "changed", "recreated"
    if after == gitinfo.DELETED:
        return "changed", "deleted"
    if after is None:
        return "unchecked", "not a readable file"
    if _size(before) is not None:
        return "changed", "another size"
    size = _size(after)
    if (
        size is not None and size <= gitinfo.MAX_BLOB_BYTES
    ):  # a blob recorded, and this one past the bytes hashed in all
        return "unchecked", f"past the {gitinfo.MAX_BLOB_TOTAL >> 20} MiB hashed"
    if size is not None:  # a blob recorded, so no larger than MAX_BLOB_BYTES then
        return "changed", f"now larger than {gitinfo.MAX_BLOB_BYTES >> 20} MiB"
    return "changed", ""


def _named(paths: list[str]) -> str:
    more = len(paths) - NAMED_FILES
    return ", ".join(paths[:NAMED_FILES]) + (f" and {more} more" if more > 0 else "")


def _blob_id(value: object) -> bool:
    """Whether a recorded entry is a blob id (40 lower-case hex digits)."""
    return isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value)


def _size(value: object) -> int | None:
    """A recorded or current entry's size when it is {"size": n}, else None."""
    if isinstance(value, dict) and type(value.get("size")) is int and value["size"] >= 0:
        return int(value["size"])
    return None


def _upstream(now: GitNow) -> Finding:
    branch = named(now.branch) if now.branch else "HEAD"
    if now.upstream is None:
        return Finding(NAME, NA, f"{branch} has no upstream (git status --branch): ahead or behind not looked at")
    upstream = named(now.upstream)
    if now.ahead is None or now.behind is None:
        return Finding(NAME, NA, f"{branch}'s upstream {upstream} is gone (git status --branch)")
    fetched = f"as of the last fetch, {now.fetched}" if now.fetched else "as of the clone: never fetched"
    text = f"{branch} is {now.ahead} ahead of {upstream} and {now.behind} behind (git status --branch, {fetched})"
    if now.behind:
        return Finding(NAME, DEGRADED, text, f"git pull: {upstream} has {now.behind} commit(s) HEAD lacks")
    return Finding(NAME, OK, text)


def plain_branch(name: object) -> bool:
    """Whether a recorded branch name is plain enough to be shown as part of a command: letters, digits and ._/-,
    not starting with "-" or ".", no "..", at most 100 characters (git allows more; the rest is never suggested)."""
    if not isinstance(name, str) or not 0 < len(name) <= 100 or name[0] in "-./" or ".." in name:
        return False
    return all(c.isascii() and (c.isalnum() or c in "._/-") for c in name) and not name.endswith(("/", ".lock"))


def _branch(name: str | None) -> str:
    """A branch git names, as the ledger shows it (text.named), or "a detached HEAD"."""
    return named(name) if name else "a detached HEAD"


def _diff(paths: list[str]) -> str:
    """`git diff -- <paths>` to suggest: each path one shell word (_arg). A path holding a double quote or a
    backslash is left out of the command (named in the finding instead): its shell word would hold a quote mark
    that a reader of the line could take for the end of a quotation."""
    words = [_arg(p) for p in paths if '"' not in p and "\\" not in p]
    left = len(paths) - len(words)
    command = "git diff -- " + " ".join(words) if words else "git diff"
    return command + (f" (and {left} file(s) named above whose names hold quote marks)" if left and words else "")


def _arg(path: str) -> str:
    """A path as one shell word in a suggested command: as it is when plain, else single-quoted."""
    if path and all(c.isascii() and (c.isalnum() or c in "._/-+@%,") for c in path) and path[0] != "-":
        return path
    return "'" + path.replace("'", "'\\''") + "'"
