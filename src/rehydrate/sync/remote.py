"""sync's side of the remote (fetch, push, the remote tips this clone integrated, forced pushes) and the objects a
sync works with: its context, its report, its test-only stop points."""

from __future__ import annotations

import json
import os

from rehydrate.fs import write as fsio
from rehydrate.store.git.plumb import NETWORK_TIMEOUT, Git, GitFailed
from rehydrate.store.local import place as local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STOP_ENV = "REHYDRATE_SYNC_STOP"  # tests only: exit at the named step, as a crash there would
REMOTES = "remotes.json"


class Upstream:
    def __init__(self, remote: str, merge: str, tracking: str) -> None:
        self.remote = remote  # origin
        self.merge = merge  # refs/heads/main on the remote (the upstream branch's own name)
        self.tracking = tracking  # refs/remotes/origin/main
        short = tracking.removeprefix("refs/remotes/")
        self.name = short if short != tracking else f"{remote}/{merge.removeprefix('refs/heads/')}"


class Ctx:
    """What one sync works on."""

    def __init__(self, root: str, actor: str, found: local.Repo, rel: str) -> None:
        self.root = root
        self.actor = actor
        self.repo = found
        self.rel = rel  # the state folder from the worktree's top, with '/'
        self.spec = f":(top,literal){rel}/"
        self.local = local.local_dir(root, found)
        self.git = Git(found)
        self.branch: str | None = None
        self.upstream: Upstream | None = None


class Report:
    """What a sync did (or, dry, would do): one line per action, and the JSON fields."""

    def __init__(self, dry_run: bool = False) -> None:
        self.dry_run = dry_run
        self.committed: str | None = None
        self.paths: list[str] = []
        self.pulled = 0
        self.pushed: str | None = None
        self.attempts = 0
        self.forced_push: dict[str, Any] | None = None
        self.stopped: str | None = None
        self.lines: list[str] = []
        self.ahead: int | None = None
        self.behind: int | None = None

    def say(self, line: str) -> None:
        self.lines.append(line)

    def as_dict(self) -> dict[str, Any]:
        out = {
            "committed": self.committed,
            "paths": self.paths,
            "pulled": self.pulled,
            "pushed": self.pushed,
            "attempts": self.attempts,
            "forced_push": self.forced_push,
            "stopped": self.stopped,
        }
        if self.dry_run:
            out.update(dry_run=True, ahead=self.ahead, behind=self.behind)
        return out


def stop_here(step: str) -> None:
    """Tests only: end the process at this step, as a crash would (no clean-up runs)."""
    if os.environ.get(STOP_ENV) == step:
        os._exit(75)


# ---------------------------------------------------------------------------------------------------- step 0


def fetch(ctx: Ctx, up: Upstream, report: Report) -> bool:
    result = ctx.git.run(
        "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", up.remote, f"+{up.merge}:{up.tracking}",
        timeout=NETWORK_TIMEOUT,
    )  # fmt: skip
    if result.code == 0:
        return True
    err = result.err.decode("utf-8", "replace")
    if "couldn't find remote ref" in err:
        return True  # the branch is not on the remote yet: the push creates it
    if any(w in result.err for w in (b"index.lock", b"cannot lock ref", b"Unable to create")):
        raise GitFailed(f"`git fetch` failed: {err.strip()}", locked=True)
    report.stopped = "fetch-failed"
    report.say(f"stopped: could not fetch {up.name}: {err.strip().splitlines()[-1] if err.strip() else 'error'}")
    return False


def push(ctx: Ctx, up: Upstream, head: str, report: Report) -> bool:
    result = ctx.git.run("push", "--porcelain", up.remote, f"HEAD:{up.merge}", timeout=NETWORK_TIMEOUT)
    text = result.out + result.err
    if result.code == 0:
        stop_here("pushed")
        save_tip(ctx, up, head)
        report.pushed = head
        report.say(f"pushed {head[:7]} to {up.name}")
        return True
    # the remote moved meanwhile: refused as not a fast-forward, or (a race inside the receiving side) its ref
    # changed between our look and the update; a hook's refusal ("[remote rejected] ... declined") is not a race
    race = (b"[rejected]", b"non-fast-forward", b"fetch first", b"failed to update ref", b"cannot lock ref")
    if any(w in text for w in race):
        report.say(f"push rejected: {up.name} moved meanwhile; fetching again")
        return False
    err = result.err.decode("utf-8", "replace").strip()
    report.stopped = "push-failed"
    report.say(f"stopped: the push to {up.name} failed: {err.splitlines()[-1] if err else 'error'}")
    return True


# ---------------------------------------------------------------------------------------------------- commit

# ---------------------------------------------------------------------------------------------------- forced pushes


def _tips(ctx: Ctx) -> dict[str, str]:
    data, _ = fsio.read_small(os.path.join(ctx.local, REMOTES), 1 << 16)
    try:
        tips = json.loads(data or b"{}")
    except ValueError:
        return {}
    return (
        {k: v for k, v in tips.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(tips, dict) else {}
    )


def save_tip(ctx: Ctx, up: Upstream, sha: str) -> None:
    """Record the remote tip this clone has integrated (remotes.json), to tell a forced push from a fast-forward."""
    tips = _tips(ctx)
    if tips.get(up.tracking) != sha:
        tips[up.tracking] = sha
        data = json.dumps(tips, sort_keys=True, indent=1).encode() + b"\n"
        fsio.replace(os.path.join(local.ensure(ctx.local), REMOTES), data, "sync.remotes")


def forced_push(ctx: Ctx, up: Upstream, tip: str, report: Report) -> dict[str, Any] | None:
    """The upstream's rewrite since this clone last integrated it, named; None when it only moved forward."""
    git = ctx.git
    old = _tips(ctx).get(up.tracking)
    if not old or old == tip or git.ok("merge-base", "--is-ancestor", old, tip):
        return None
    if not git.ok("cat-file", "-e", old + "^{commit}"):
        return None
    left = int(git.out("rev-list", "--count", f"{tip}..{old}"))
    records = 0
    stat = git.out("diff", "--numstat", "--no-renames", tip, old, "--", f":(top,literal){ctx.rel}/wal/")
    for row in stat.splitlines():
        added = row.split("\t", 1)[0]
        records += int(added) if added.isdigit() else 0
    report.say(
        f"{up.name} was rewritten by a forced push since this clone's last sync: {old[:7]}..{tip[:7]}; {left} "
        f"commit(s) left it, carrying {records} state record(s); they are still in this clone: `git log {old[:7]}` "
        "(sync does not push them again)"
    )
    return {"remote": up.name, "old": old, "new": tip, "left": left, "records": records}
