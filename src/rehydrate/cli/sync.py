"""The git transport's commands: `rehydrate sync` (commit the state folder, only it, integrate the upstream, push;
retried on a race), `rehydrate team init` (what a team's clone needs for merges with no human, and what to commit)
and `rehydrate resolve` (settle git's conflicts under the state folder after a merge, rebase or cherry-pick that did
not use the union attributes, and say what to run next). The work is sync/'s."""

from __future__ import annotations

import os

from rehydrate.cli import DIR_HELP, emit_json
from rehydrate.errors import ExitCode, StateMissing
from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store.locate import locate, resolve_actor
from rehydrate.sync import run as gitsync
from rehydrate.sync import team

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


def args_team(p: argparse.ArgumentParser) -> None:
    p.description = (
        "init: write state/.gitattributes (the logs and the append-only views merge with git's union driver; your "
        "own lines kept) and state/.gitignore's missing lines, and add the same union lines to this clone's "
        ".git/info/attributes (every worktree, whatever the branch). No merge driver to install. Says each action."
    )
    p.add_argument("action", choices=["init"], help="init: set up this clone and the state folder for a team")
    p.add_argument("--dir", metavar="DIR", help=DIR_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")


def cmd_team(args: argparse.Namespace) -> int:
    root = locate(args.dir)
    if not fsio.check_dir(root) or not fsio.check_dir(os.path.join(root, "wal")):
        raise StateMissing(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
    with fslock.locked(root):
        actions = team.init(root)
    advice = team.ADVICE.format(name=os.path.basename(os.path.abspath(root)))
    if args.json:
        emit_json("team", True, action=args.action, actions=actions, advice=advice)
    else:
        for line in actions:
            print(line)
        print(f"next: {advice}")
    return 0


def args_resolve(p: argparse.ArgumentParser) -> None:
    p.description = (
        "For the unmerged paths under the state folder only: a content conflict in a log, 10_invariants.md, "
        "20_handoff.md or 99_next.md (or an actor's next/handoff file) keeps both sides' lines (git merge-file "
        "--union of ours, base and theirs) and is added to the index; a log that one side changed and the other "
        "deleted keeps the changed side. Any other path, in the state folder or outside it, is named and left to "
        "you (exit 1). Then says what finishes the operation: git commit, git cherry-pick --continue or git rebase "
        "--continue."
    )
    p.add_argument("--dir", metavar="DIR", help=DIR_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")


def cmd_resolve(args: argparse.Namespace) -> int:
    root = locate(args.dir)
    if not fsio.check_dir(root):
        raise StateMissing(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
    with fslock.locked(root):
        done, left, step = team.resolve(root)
    ok = not left
    if args.json:
        emit_json("resolve", ok, resolved=done, left=left, next=step if done or not left else None)
        return 0 if ok else ExitCode.DISCREPANCY
    if not done and not left:
        print("nothing to resolve: no unmerged path")
    for line in done:
        print(f"resolved {line}")
    for line in left:
        print(f"left to you: {line}")
    if left:
        print(f"next: resolve the paths left to you, `git add` them, then `{step}`")
    elif done:
        print(f"next: `{step}`")
    return 0 if ok else ExitCode.DISCREPANCY
