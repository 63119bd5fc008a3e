"""`rehydrate sync`: commit the state folder (only it), integrate the upstream, push; retried on a race."""

from __future__ import annotations

from rehydrate.cli import DIR_HELP, emit_json
from rehydrate.errors import ExitCode

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def args_sync(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Commit the changes under the state folder, and nothing else (a temporary index: the user's staged, "
        "unstaged and untracked work is never committed, stashed or reset, and no commit hook runs); fetch the "
        "upstream and integrate it (a fast-forward, or the state commits rebased in memory, logs merged line by "
        "line); push to the upstream branch (never forced). A rejected push is retried (5 rounds). A forced push "
        "that rewrote the upstream since this clone's last sync is named, and what it dropped is not pushed again. "
        "Stops (exit 1) when commits of this branch change paths outside the state folder, on a detached HEAD and "
        "without an upstream. Refuses (exit 3) mid-merge/rebase/cherry-pick, with unmerged paths, or git < 2.38."
    )
    p.add_argument("--dry-run", action="store_true", help="say what sync would do and change nothing at all")
    p.add_argument("--dir", metavar="DIR", help=DIR_HELP)
    p.add_argument(
        "--actor",
        metavar="NAME",
        help="the name on sync's commits when git has no identity (default: $REHYDRATE_ACTOR, else 'agent')",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")


def cmd_sync(args: argparse.Namespace) -> int:
    from rehydrate.errors import StateMissing
    from rehydrate.fs import write as fsio
    from rehydrate.store.locate import locate, resolve_actor
    from rehydrate.sync import run as gitsync

    actor = resolve_actor(args.actor)
    root = locate(args.dir)
    if not fsio.check_dir(root):
        raise StateMissing(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
    report = gitsync.dry_run(root, actor) if args.dry_run else gitsync.sync(root, actor)
    ok = report.stopped is None
    if args.json:
        emit_json("sync", ok, **report.as_dict(), actions=report.lines)
    else:
        for line in report.lines:
            print(line)
    return 0 if ok else ExitCode.DISCREPANCY
