"""`rehydrate cursor`: a pipeline's cursor against its JSONL output (status, verify, repair), or registered."""

from __future__ import annotations

from rehydrate import cursor
from rehydrate.cli import common_options, emit_json, open_state
from rehydrate.errors import ExitCode, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

# register's positional arguments (one list, ARG...) by the field a library error names
POSITIONALS = {"name": "NAME", "output": "OUTPUT", "progress": "PROGRESS"}


def args_cursor(p: argparse.ArgumentParser) -> None:
    p.description = (
        "A pipeline writes one JSONL record per item (its index under --key) and keeps the index of "
        'the next item in a progress file ({"cursor": N}). The output is the truth. status: what both say. '
        "verify: exit 1 on any discrepancy (cursor ahead or behind, torn last line, an index that repeats, goes "
        "backwards or skips). repair: cut a torn last line (kept in a .broken file) and set the cursor from the "
        "output. register NAME: show the pipeline in the brief and check it in the ledger."
    )
    p.add_argument(
        "action",
        choices=["status", "verify", "repair", "register"],
        help="status: what both say; verify: exit 1 on a discrepancy; repair: fix it from the output; "
        "register: show the pipeline in the brief",
    )
    p.add_argument("files", nargs="+", metavar="ARG", help="OUTPUT PROGRESS (register: NAME OUTPUT PROGRESS)")
    p.add_argument("--key", default="index", help="the field that holds each record's index (default: index)")
    p.add_argument("--total", type=int, metavar="N", help="register: how many items the pipeline has")
    common_options(p)


def cmd_cursor(args: argparse.Namespace) -> int:
    if args.action == "register":
        if len(args.files) != 3:
            raise UsageError("register takes NAME OUTPUT PROGRESS")
        state = open_state(args)
        name, output, progress = args.files
        cursor.register(state.root, name, output, progress, args.key, args.total)
        print(f"registered {name}: {output} with {progress}")
        return 0
    if len(args.files) != 2:
        raise UsageError(f"{args.action} takes OUTPUT PROGRESS")
    output, progress = args.files
    done: list[str] = []
    if args.action == "repair":
        done = cursor.repair(output, progress, args.key)[1]
    c = cursor.check(output, progress, args.key)
    ok = not c.problems
    if args.json:
        emit_json(
            "cursor",
            ok,
            action=args.action,
            cursor=c.cursor if c.cursor is not None else c.expected,
            last_index=c.last_index,
            records=c.records,
            problems=[p.as_dict() for p in c.problems],
            repaired=done,
        )
    else:
        for line in done:
            print(f"repaired: {line}")
        last = "none" if c.last_index is None else str(c.last_index)
        print(f"cursor {c.cursor if c.cursor is not None else '?'}; output: {c.records} record(s), last index {last}")
        for p in c.problems:
            where = f"{output}:{p.line}" if p.line else progress
            print(f"problem: {where}: {p.message} [{p.code}]")
    return 0 if ok or args.action == "status" else ExitCode.DISCREPANCY
