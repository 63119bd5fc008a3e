"""`rehydrate hook HARNESS`: the harness's call, answered. On the hook path: it loads only the hook dispatch."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def args_hook(p: argparse.ArgumentParser) -> None:
    from rehydrate.harness import HOOKS

    p.description = (
        "Called by the harness, not by hand: reads the hook's JSON on stdin and acts by its event. "
        "SessionStart: the brief as additional context (after a compaction, said first). PreCompact and "
        "PostCompact: a `compaction` record in the WAL. PreToolUse: an edit or command matching a rejected "
        "approach's guard gets the decision set in state/config.json (`guard`: ask, deny or warn; ask by "
        "default). Whatever goes wrong, it exits 0 and prints what it can."
    )
    p.add_argument("harness", choices=HOOKS, help="the harness that calls")


def cmd_hook(args: argparse.Namespace) -> int:
    from rehydrate.harness import hook

    try:
        data = hook.read_input(sys.stdin.fileno()) if sys.stdin is not None else None
    except (OSError, ValueError):  # no usable stdin (closed, or not a file): an empty input
        data = None
    if data is None:
        answer = hook.run(args.harness, b"")
    else:
        answer = hook.run(args.harness, data.head, tail=data.tail, size=data.size, ended=data.ended)
    if answer.stdout:
        sys.stdout.write(answer.stdout if answer.stdout.endswith("\n") else answer.stdout + "\n")
    if answer.stderr:
        sys.stderr.write(answer.stderr)
    return answer.code
