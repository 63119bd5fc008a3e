"""`rehydrate sync`: commit the state folder (and nothing else), integrate the upstream, push; git is the only engine.

The order:
0. Refuse, changing nothing: outside a repository, git older than 2.38, a merge/rebase/cherry-pick/revert/bisect in
   progress, unmerged entries, no commit yet.
1. Fetch the upstream (no lock: the network is slow and the agent keeps writing meanwhile).
2. Under this worktree's `sync.lock` and the state's lock (so that no record is appended half-way through):
   finish or undo an interrupted sync (`sync.pending`); commit the state folder through a temporary index
   (read-tree HEAD, add -A of the state folder only, write-tree, commit-tree, update-ref with compare-and-swap, then
   `git reset -- <state>/` so the real index's state entries match HEAD: no other entry of the index is touched, no
   commit hook runs); name a forced push of the upstream; integrate it: a fast-forward, or, when this clone's own
   commits since the last remote tip it saw touch only the state folder, an in-memory rebase (`git merge-tree`,
   union-able state files resolved with `git merge-file --union`), then `read-tree -m -u` and update-ref. A commit of
   the user's own among them stops the sync after the commit: their work is not ours to push.
3. Push HEAD to the upstream branch's own name (never forced). A rejected push goes back to 1, as does a git lock
   held by another process: up to ATTEMPTS rounds with a jittered backoff.
"""

from __future__ import annotations

import os
import random
import time

from rehydrate.errors import RehydrateError
from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store.git.plumb import (
    NETWORK_TIMEOUT,
    Git,
    GitFailed,
    clear_pending,
    parse_stages,
    read_pending,
    union_able,
    union_blob,
    write_pending,
)
from rehydrate.store.git.share import IGNORED_HINT, ignored_own, own_specs, some_paths
from rehydrate.store.local import place as local
from rehydrate.sync.remote import Ctx, Report, Upstream, fetch, forced_push, push, save_tip, stop_here

MIN_GIT = (2, 38)  # git merge-tree --write-tree
ATTEMPTS = 5
BACKOFF = 0.1  # seconds before the second round; doubles each round, ±50%
_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase (or git am)"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
    ("BISECT_LOG", "a bisect"),
)


class Refused(RehydrateError):
    """sync cannot run here; nothing was done (exit 3)."""


def context(root: str, actor: str) -> Ctx:
    """Where the sync runs, or Refused with what to do first."""
    found = local.repo(root)
    if found is None:
        raise Refused(f"{root} is not inside a git repository", "sync commits, pulls and pushes with git: `git init`")
    rel = os.path.relpath(os.path.realpath(root), os.path.realpath(found.top)).replace(os.sep, "/")
    if rel == "." or rel.startswith("../"):
        raise Refused(f"{root} is not a folder inside its repository's worktree", "name the state folder (--dir)")
    ctx = Ctx(root, actor, found, rel)
    version = ctx.git.out("version").rpartition(" ")[2].split(".")
    numbers = tuple(int(v) for v in version[:2] if v.isdigit())
    if len(numbers) == 2 and numbers < MIN_GIT:
        raise Refused(
            f"sync needs git 2.38 or later (this is {'.'.join(version)})",
            "upgrade git; until then commit and push state/ yourself",
        )
    for name, what in _IN_PROGRESS:
        if fsio.lstat(os.path.join(found.git_dir, name)) is not None:
            raise Refused(
                f"{what} is in progress in this worktree: sync changes nothing until it is finished",
                "finish it (`rehydrate resolve` settles conflicts under the state folder) or abort it, then sync",
            )
    if ctx.git.out("ls-files", "-u", "-z"):
        raise Refused("the index holds unmerged paths", "resolve them (`rehydrate resolve` for the state folder)")
    if ctx.git.rev("HEAD") is None:
        raise Refused("this branch has no commit yet", "make the first commit yourself, then sync")
    ctx.branch = (ctx.git.run("symbolic-ref", "-q", "--short", "HEAD").out.decode().strip()) or None
    if ctx.branch:
        ctx.upstream = _upstream(ctx.git, ctx.branch)
    return ctx


def _upstream(git: Git, branch: str) -> Upstream | None:
    remote = git.run("config", "--get", f"branch.{branch}.remote").out.decode().strip()
    merge = git.run("config", "--get", f"branch.{branch}.merge").out.decode().strip()
    if not remote or remote == "." or not merge.startswith("refs/heads/"):
        return None
    named = git.run("rev-parse", "--symbolic-full-name", f"{branch}@{{upstream}}").out.decode().strip()
    tracking = named if named.startswith("refs/remotes/") else f"refs/remotes/{remote}/{merge[len('refs/heads/') :]}"
    return Upstream(remote, merge, tracking)


def identity(git: Git, actor: str) -> dict[str, str]:
    """The environment for sync's commits: rehydrate's name for the actor only when git has no identity."""
    name = os.environ.get("GIT_AUTHOR_NAME") or git.run("config", "--get", "user.name").out.strip()
    email = os.environ.get("GIT_AUTHOR_EMAIL") or git.run("config", "--get", "user.email").out.strip()
    if name and email:
        return {}
    who, mail = f"rehydrate {actor}", f"{actor}@rehydrate.invalid"
    return {
        "GIT_AUTHOR_NAME": who,
        "GIT_AUTHOR_EMAIL": mail,
        "GIT_COMMITTER_NAME": who,
        "GIT_COMMITTER_EMAIL": mail,
    }


# ---------------------------------------------------------------------------------------------------- the rounds


def sync(root: str, actor: str) -> Report:
    ctx = context(root, actor)
    ctx.git.env.update(identity(ctx.git, actor))
    report = Report()
    lock = fsio.open_lock(os.path.join(local.ensure(ctx.local), "sync.lock"))
    try:
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX)
        for attempt in range(1, ATTEMPTS + 1):
            report.attempts = attempt
            try:
                if _round(ctx, report):
                    return report
            except GitFailed as e:
                if not e.locked or attempt == ATTEMPTS:
                    raise
                report.say(f"git was busy ({e.message}): trying again")
            if attempt < ATTEMPTS:
                time.sleep(BACKOFF * 2 ** (attempt - 1) * random.uniform(0.5, 1.5))
        report.stopped = f"the remote kept moving: {ATTEMPTS} pushes were rejected"
        report.say(f"stopped: {report.stopped}; run sync again")
        return report
    finally:
        os.close(lock)


def _round(ctx: Ctx, report: Report) -> bool:
    """One fetch, commit, integrate and push; True when the sync is over (pushed, up to date or stopped)."""
    up_name = ctx.upstream
    if up_name is not None and not fetch(ctx, up_name, report):
        return True
    stop_here("fetched")
    with fslock.locked(ctx.root):
        finish_pending(ctx, report)
        head = commit(ctx, report)
        if up_name is None:
            report.stopped = "detached" if ctx.branch is None else "no-upstream"
            report.say(
                f"HEAD is detached: {ctx.rel}/ is committed on it; sync pulls and pushes a branch only (`git switch`)"
                if ctx.branch is None
                else f"{ctx.branch} has no upstream: {ctx.rel}/ is committed; publish the branch once with "
                f"`git push -u origin {ctx.branch}`, then sync"
            )
            return True
        up = ctx.git.rev(up_name.tracking)
        if up is not None:
            report.forced_push = forced_push(ctx, up_name, up, report) or report.forced_push  # named once
            head = integrate(ctx, report, head, up)
            if report.stopped:
                return True
            save_tip(ctx, up_name, up)
    if up is not None and head == up:
        report.say(f"up to date with {up_name.name} ({up[:7]})")
        return True
    return push(ctx, up_name, head, report)


def commit(ctx: Ctx, report: Report) -> str:
    """Commit the state folder's changes (only them) on HEAD; returns HEAD after it."""
    git = ctx.git
    head = git.out("rev-parse", "HEAD")
    index = os.path.join(ctx.local, "sync.index")
    for stale in (index, index + ".lock"):
        if fsio.lstat(stale) is not None:
            os.unlink(stale)
    git.out("read-tree", "HEAD", index=index)
    git.out("add", "-A", "--", ctx.spec, index=index)
    hidden = ignored_own(git, ctx.root, ctx.rel, index)
    if hidden:  # rehydrate's own files, hidden by a rule: a remote without them holds records it cannot check
        git.out("add", "-A", "-f", "--", *own_specs(ctx.root, ctx.rel), index=index)
        report.say(f"git ignores {some_paths(hidden)}: committed all the same (rehydrate's own files); {IGNORED_HINT}")
    tree = git.out("write-tree", index=index)
    if tree == git.out("rev-parse", "HEAD^{tree}"):
        return head
    paths = [p for p in git.out("diff-tree", "-r", "-z", "--name-only", "--no-renames", head, tree).split("\0") if p]
    message = f"rehydrate: state of {ctx.actor} ({len(paths)} path(s))\n\nRehydrate-Sync: {ctx.actor}\n"
    new = git.out("commit-tree", tree, "-p", head, "-m", message)
    write_pending(ctx.local, "commit", head, new)
    moved = git.run("update-ref", "-m", "rehydrate sync: commit state", "HEAD", new, head)
    if moved.code != 0:  # HEAD moved under us (a commit of the user's): another round
        clear_pending(ctx.local)
        raise GitFailed("HEAD moved while sync committed", locked=True)
    stop_here("committed")
    git.out("reset", "-q", "--", ctx.spec)
    clear_pending(ctx.local)
    report.committed, report.paths = new, sorted(set(report.paths) | set(paths))
    report.say(f"committed {len(paths)} path(s) under {ctx.rel}/: {new[:7]}")
    return new


def finish_pending(ctx: Ctx, report: Report) -> None:
    """Finish a two-part step an interrupted sync left half-done (sync.pending), and say so."""
    pending = read_pending(ctx.local)
    if pending is None:
        return
    head = ctx.git.out("rev-parse", "HEAD")
    step, old, new = pending["step"], pending["old"], pending["new"]
    if step == "commit" and head == new:
        ctx.git.out("reset", "-q", "--", ctx.spec)
        report.say(f"finished an interrupted sync: the index's {ctx.rel}/ entries match HEAD ({new[:7]}) again")
    elif step == "integrate" and head == old:
        ctx.git.out("read-tree", "-m", "-u", old, new)
        ctx.git.out("update-ref", "-m", "rehydrate sync: finish integrating", "HEAD", new, old)
        report.say(f"finished an interrupted sync: HEAD moved from {old[:7]} to {new[:7]}, as the files already were")
    elif head == new:
        report.say(f"an interrupted sync ({step}) had finished: nothing to do")
    else:
        report.say(f"an interrupted sync ({step}) left nothing to finish (HEAD is {head[:7]})")
    clear_pending(ctx.local)


# ---------------------------------------------------------------------------------------------------- integrate


def integrate(ctx: Ctx, report: Report, head: str, up: str) -> str:
    """HEAD with the upstream integrated (a fast-forward or an in-memory rebase of the state commits), or HEAD
    unchanged with report.stopped set."""
    git = ctx.git
    forced = report.forced_push  # carry only this clone's commits since the tip it saw, never what the push dropped
    base = forced["old"] if forced and git.ok("merge-base", "--is-ancestor", forced["old"], head) else None
    is_merge_base = base is None
    if base is None:
        if git.ok("merge-base", "--is-ancestor", up, head):
            return head
        if git.ok("merge-base", "--is-ancestor", head, up):
            report.pulled = int(git.out("rev-list", "--count", f"{head}..{up}"))
            return move(ctx, report, head, up, f"fast-forwarded to {up[:7]} ({report.pulled} commit(s))")
        found = git.run("merge-base", head, up)
        base = found.out.decode().strip()
        if found.code != 0 or not base:
            report.stopped = "unrelated"
            report.say("stopped: HEAD and the upstream share no history")
            return head
    own = [c for c in git.out("rev-list", f"{base}..{head}").split() if c]
    report.pulled = int(git.out("rev-list", "--count", f"{base}..{up}"))
    if not own:
        return move(ctx, report, head, up, f"moved to {up[:7]} ({report.pulled} commit(s))")
    outside = _outside(ctx, base, head)
    if outside:
        report.stopped = "local-commits"
        report.say(
            f"stopped: {len(own)} commit(s) of this branch not on the upstream change paths outside {ctx.rel}/ "
            f"({', '.join(outside[:3])}{', ...' if len(outside) > 3 else ''}): sync publishes only {ctx.rel}/; "
            "pull and push them yourself, then sync"
        )
        return head
    tree = merged_tree(ctx, report, head, up, base, is_merge_base)
    if tree is None:
        return head
    subjects = git.out("log", "--format=  %s", f"{base}..{head}")
    message = f"rehydrate: state of {ctx.actor}\n\nRehydrate-Sync: {ctx.actor}\n\nRebased by sync:\n{subjects}\n"
    new = git.out("commit-tree", tree, "-p", up, "-m", message)
    return move(ctx, report, head, new, f"rebased {len(own)} state commit(s) onto {up[:7]}: {new[:7]}")


def _outside(ctx: Ctx, base: str, head: str) -> list[str]:
    """Paths outside the state folder that commits base..head change (git filters them: a long list, cut at the
    runner's cap, is still not empty)."""
    names = ctx.git.out(
        "log", "--format=", "--name-only", "--no-renames", "-m", "-z", f"{base}..{head}",
        "--", ":(top)", f":(exclude,top,literal){ctx.rel}/",
    )  # fmt: skip
    return sorted({p.strip("\n") for p in names.split("\0") if p.strip("\n")})


def move(ctx: Ctx, report: Report, head: str, new: str, said: str) -> str:
    """Worktree and index from head to new (the user's changes carried), then HEAD; named in sync.pending meanwhile."""
    write_pending(ctx.local, "integrate", head, new)
    moved = ctx.git.run("read-tree", "-m", "-u", head, new)
    if moved.code != 0:
        clear_pending(ctx.local)
        err = moved.err.decode("utf-8", "replace").strip().splitlines()
        report.stopped = "would-overwrite"
        report.say(
            f"stopped: taking the upstream would overwrite an uncommitted change ({err[0] if err else 'git refused'}):"
            " commit or stash it yourself, then sync"
        )
        return head
    stop_here("integrated")
    ctx.git.out("update-ref", "-m", "rehydrate sync: integrate", "HEAD", new, head)
    clear_pending(ctx.local)
    report.say(said)
    return new


def merged_tree(ctx: Ctx, report: Report, head: str, up: str, base: str, is_merge_base: bool) -> str | None:
    """The tree of the upstream with this clone's changes since base; conflicts on union-able state files are
    resolved as git's union driver would; any other conflict stops the sync (None)."""
    git = ctx.git
    ours, theirs = up, head  # the upstream's lines first: the published files only grow
    if not is_merge_base:  # git 2.38 has no --merge-base: three commits whose only merge base is base's tree
        root = git.out("commit-tree", base + "^{tree}", "-m", "base")
        ours = git.out("commit-tree", up + "^{tree}", "-p", root, "-m", "upstream")
        theirs = git.out("commit-tree", head + "^{tree}", "-p", root, "-m", "local")
    result = git.run("merge-tree", "--write-tree", "-z", ours, theirs)
    if result.code not in (0, 1):
        raise GitFailed(f"`git merge-tree` failed: {result.err.decode('utf-8', 'replace').strip()}")
    tree, _, rest = result.out.partition(b"\0")
    if result.code == 0:
        return tree.decode()
    stages = parse_stages(rest)
    prefix = ctx.rel + "/"
    bad = sorted(p for p in stages if not (p.startswith(prefix) and union_able(p[len(prefix) :])))
    if bad or not stages:
        report.stopped = "conflict"
        report.say(f"stopped: merging the upstream conflicts in {', '.join(bad) or 'a path'}; nothing was changed")
        return None
    index = os.path.join(ctx.local, "sync.index")
    git.out("read-tree", tree.decode(), index=index)
    for path, sides in sorted(stages.items()):
        blob = union_blob(git, sides, ctx.local)
        if blob is None:
            git.out("update-index", "--force-remove", "--", path, index=index)
        else:
            git.out("update-index", "--add", "--cacheinfo", f"{blob[0]},{blob[1]},{path}", index=index)
    report.say(f"merged {len(stages)} state file(s) line by line (union): {', '.join(sorted(stages))}")
    return git.out("write-tree", index=index)


# ---------------------------------------------------------------------------------------------------- --dry-run


def dry_run(root: str, actor: str) -> Report:
    """What sync would do, changing nothing at all (no commit, no fetch, no ref, no index, no file of its own)."""
    from rehydrate.store.git import info as gitinfo

    ctx = context(root, actor)
    git = ctx.git
    git.env["GIT_OPTIONAL_LOCKS"] = "0"  # git status must not refresh the index
    report = Report(dry_run=True)
    if read_pending(ctx.local) is not None:
        report.say("an interrupted sync left a step half done: sync would finish it first")
    status = git.out("status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--", ctx.spec)
    hidden = ignored_own(git, ctx.root, ctx.rel)
    report.paths = sorted(set(gitinfo.parse(status.encode())["dirty"]) | set(hidden))
    if hidden:
        report.say(f"git ignores {some_paths(hidden)}: sync would commit them all the same (rehydrate's own files)")
    shown = ", ".join(report.paths[:5]) + (", ..." if len(report.paths) > 5 else "")
    report.say(f"would commit {len(report.paths)} path(s): {shown}" if report.paths else "nothing to commit")
    up = ctx.upstream
    if up is None:
        report.stopped = "detached" if ctx.branch is None else "no-upstream"
        report.say(f"would stop after the commit: {'HEAD is detached' if ctx.branch is None else 'no upstream'}")
        return report
    listed = git.run("ls-remote", up.remote, up.merge, timeout=NETWORK_TIMEOUT)
    if listed.code != 0:
        report.stopped = "fetch-failed"
        report.say(f"would stop: cannot reach {up.remote}")
        return report
    tip = next((row.split("\t")[0] for row in listed.out.decode().splitlines() if row.endswith("\t" + up.merge)), None)
    head = git.out("rev-parse", "HEAD")
    if tip is None:
        report.say(f"{up.name} is not on the remote yet: would push {head[:7]} there")
        return report
    compare: str | None = tip
    if not git.ok("cat-file", "-e", tip + "^{commit}"):
        report.say(f"{up.name} is at {tip[:7]}, which this clone has not fetched yet: sync would fetch it first")
        compare = git.rev(up.tracking)
    else:
        report.forced_push = forced_push(ctx, up, tip, report)
    if compare is not None:
        _would_integrate(ctx, report, head, compare)
    return report


def _would_integrate(ctx: Ctx, report: Report, head: str, up: str) -> None:
    counts = ctx.git.out("rev-list", "--left-right", "--count", f"{head}...{up}").split()
    report.ahead, report.behind = int(counts[0]), int(counts[1])
    report.pulled = report.behind
    report.say(f"{report.ahead} commit(s) ahead of {up[:7]}, {report.behind} behind")
    base = ctx.git.run("merge-base", head, up).out.decode().strip()
    outside = _outside(ctx, base, head) if base and report.ahead else []
    if outside:
        report.stopped = "local-commits"
        report.say(f"would stop after the commit: commits of this branch change paths outside {ctx.rel}/")
    elif report.ahead or report.paths:
        report.say("would push")
    elif not report.behind:
        report.say("up to date")
