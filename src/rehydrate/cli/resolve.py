"""`rehydrate resolve`: settle git's conflicts under the state folder (after a merge, rebase or cherry-pick that did
not use the union attributes), and say what to run next."""

from __future__ import annotations

from rehydrate.cli import DIR_HELP, emit_json
from rehydrate.errors import ExitCode

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


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
    from rehydrate.errors import StateMissing
    from rehydrate.fs import write as fsio
    from rehydrate.store.locate import locate
    from rehydrate.sync import team

    root = locate(args.dir)
    if not fsio.check_dir(root):
        raise StateMissing(f"no state folder at {root}", "run `rehydrate init --goal TEXT` to create one")
    with fsio.locked(root):
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
