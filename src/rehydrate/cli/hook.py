"""`rehydrate hook HARNESS`: the harness's call, answered. On the hook path: it loads only the hook dispatch."""

from __future__ import annotations

import sys

from rehydrate import harness as registry
from rehydrate.harness import hook, percall

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def args_hook(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Called by the harness, not by hand: reads the hook's JSON on stdin and acts by its event. "
        "SessionStart: the brief as additional context (after a compaction, said first). PreCompact and "
        "PostCompact: a `compaction` record in the WAL. PreToolUse: an edit or command matching a rejected "
        "approach's guard gets the decision set in state/config.json (`guard`: ask, deny or warn; ask by "
        "default). Whatever goes wrong, it exits 0 and prints what it can."
    )
    p.add_argument("harness", choices=registry.HOOKS, help="the harness that calls")
    p.add_argument(
        "event", nargs="?", help="the event, for a harness whose input does not name it (GitHub Copilot CLI)"
    )


def cmd_hook(args: argparse.Namespace) -> int:
    return answer(args.harness, args.event)


def answers(harness: str) -> bool:
    """Whether `rehydrate hook HARNESS` names a harness that calls it (else the parser says what is wrong)."""
    return harness in registry.HOOKS


def answer(harness: str, event: str | None = None) -> int:
    """Read the harness's event on stdin, answer it on stdout; the exit code the harness expects (always 0). The
    `rehydrate` script answers a hook call without the command line (rehydrate.__main__); this is the command
    line's own way, for `cli.main(["hook", ...])`."""
    cap = getattr(registry.get(harness), "read_cap", None) if harness in registry.HOOKS else None
    try:
        data = percall.read_input(sys.stdin.fileno(), cap=cap) if sys.stdin is not None else None
    except (OSError, ValueError):  # no usable stdin (closed, or not a file): an empty input
        data = None
    return percall.told(hook.answer(harness, data if data is not None else percall.Input(b""), event))
