"""`rehydrate team init`: what a team's clone needs for merges with no human (and what to commit)."""

from __future__ import annotations

from rehydrate.cli import DIR_HELP, emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


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
    import os

    from rehydrate.errors import StateMissing
    from rehydrate.fs import write as fsio
    from rehydrate.store.locate import locate
    from rehydrate.sync import team

    root = locate(args.dir)
    if not fsio.check_dir(root) or not fsio.check_dir(os.path.join(root, "wal")):
        raise StateMissing(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
    with fsio.locked(root):
        actions = team.init(root)
    advice = team.ADVICE.format(name=os.path.basename(os.path.abspath(root)))
    if args.json:
        emit_json("team", True, action=args.action, actions=actions, advice=advice)
    else:
        for line in actions:
            print(line)
        print(f"next: {advice}")
    return 0
