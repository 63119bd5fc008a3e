"""`rehydrate install`: merge rehydrate into harnesses' settings, take it out, or check that the hooks will run."""

from __future__ import annotations

import os
import sys

from rehydrate.cli import emit_json
from rehydrate.errors import ExitCode, UsageError
from rehydrate.harness import HOOKS, RUNS_PROGRAM, TARGETS
from rehydrate.harness.setup import install, program
from rehydrate.store.layout import WAL_DIR
from rehydrate.store.locate import init_location, locate

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

_MARK = {True: "ok", False: "NO", None: "??"}


def args_install(p: argparse.ArgumentParser) -> None:

    p.description = (
        "Merge rehydrate into each harness's own files, keeping every other hook, key and line; "
        "installing twice changes nothing. claude: hooks in .claude/settings.json (~/.claude with --user) and the "
        "boot rule in CLAUDE.md; "
        "codex: hooks in .codex/hooks.json and the boot rule in AGENTS.md; gemini: hooks in "
        ".gemini/settings.json and the boot rule in GEMINI.md; cursor: .cursor/rules/rehydrate.mdc; copilot: "
        "the boot rule in .github/copilot-instructions.md; mcp: the MCP server in .mcp.json, "
        ".codex/config.toml and .gemini/settings.json. --uninstall takes it all out, restoring each file byte "
        "for byte when nothing else changed it since."
    )
    p.add_argument(
        "harness",
        nargs="+",
        choices=[*TARGETS, "all"],
        help="the harnesses to install for (all: every one built)",
    )
    p.add_argument("--user", action="store_true", help="the user's settings instead of the project's")
    p.add_argument("--uninstall", action="store_true", help="take rehydrate's hooks out")
    p.add_argument("--dry-run", action="store_true", help="print the diff and change nothing")
    p.add_argument(
        "--check",
        action="store_true",
        help="change nothing; say whether the harness will run the hooks (installed, program found, project and "
        "hooks trusted) and what to do if not; exit 1 if it will not",
    )
    p.add_argument(
        "--project",
        metavar="DIR",
        help="the project folder (default: the state folder's, found as `init` finds it: the repository's root)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")


def cmd_install(args: argparse.Namespace) -> int:

    if args.project:
        project = os.path.abspath(args.project)
        state_dir = locate(None, project)
    else:  # where init puts the state (or found it): the repository's root, where the harness looks for its files
        project = os.path.dirname(init_location(None))
        state_dir = locate(None, project)
    state_rel = os.path.relpath(state_dir, project)
    args.no_state = not os.path.isdir(os.path.join(state_dir, WAL_DIR))
    if args.check:  # change nothing: will the harness run the hooks?
        if args.uninstall or args.dry_run:
            raise UsageError("--check changes nothing: it takes neither --uninstall nor --dry-run")
        return _check(args, HOOKS if "all" in args.harness else _named(args), project, state_rel)
    names = TARGETS if "all" in args.harness else _named(args)
    if args.uninstall:  # the reverse of the install: a file or folder two harnesses share goes with the first
        names = tuple(reversed(names))
    return _install(args, names, project, state_rel)


def _named(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(dict.fromkeys(args.harness))


def _check(args: argparse.Namespace, names: tuple[str, ...], project: str, state_rel: str) -> int:

    report = []
    for harness in names:
        checks = install.check(harness, project, user=args.user, state_rel=state_rel)
        ok = install.will_run(checks)
        report.append({"harness": harness, "will_run": ok, "checks": [c.as_dict() for c in checks]})
        if args.json:
            continue
        partial = not ok and all(c.ok is not False or c.name == "complete" for c in checks)
        print(
            f"{harness}: the hooks {'will run' if ok else 'will run, not all of them' if partial else 'will NOT run'}"
        )
        for c in checks:
            print(f"  {_MARK[c.ok]:<3} {c.name}: {c.detail}")
            if c.ok is not True and c.fix:
                print(f"      do: {c.fix}")
    ok = all(r["will_run"] for r in report)
    if args.json:
        emit_json("install", ok, check=True, harnesses=report)
    return 0 if ok else ExitCode.DISCREPANCY


def _install(args: argparse.Namespace, names: tuple[str, ...], project: str, state_rel: str) -> int:

    # every harness's files are read and checked before any is written: a refusal leaves nothing half-installed
    install.preflight(names, project, user=args.user, uninstall=args.uninstall, state_rel=state_rel)
    prog = program.program()
    results: list[dict[str, Any]] = []
    for harness in names:  # one after the other: two harnesses can share a file (Gemini's settings.json)
        changes = install.plan(
            harness, project, user=args.user, uninstall=args.uninstall, state_rel=state_rel, prog=prog
        )
        if not args.dry_run:
            install.apply(changes, uninstall=args.uninstall)
        for change in changes:
            results.append({"harness": harness, "path": change.path, "changed": change.changed, "what": change.note})
            if args.json:
                continue
            if args.dry_run:
                sys.stdout.write(change.diff() or f"{change.path}: no change\n")
            else:
                print(f"{harness}: {change.path}: {change.note if change.changed else 'already as it should be'}")
    note = None if args.uninstall or not set(names) & set(RUNS_PROGRAM) else program.program_note(prog)
    steps = {} if args.uninstall or args.dry_run else _next_steps(args, names, project, state_rel)
    if args.json:
        emit_json(
            "install",
            True,
            dry_run=args.dry_run,
            uninstall=args.uninstall,
            files=results,
            program={"command": prog.argv0, "bare": prog.bare, "note": note},
            state=not args.no_state,
            next=steps,
        )
        return 0
    if note:
        print(f"note: {note}")
    if args.no_state and not args.uninstall and not args.user:
        print(f"note: no state in {state_rel}/ yet: the hooks have nothing to read until `rehydrate init --goal ...`")
    for harness, todo in steps.items():
        for step in todo:
            print(f"next ({harness}): {step}")
    if steps:
        print("check with: rehydrate install --check " + " ".join(steps))
    return 0


def _next_steps(args: argparse.Namespace, names: tuple[str, ...], project: str, state_rel: str) -> dict[str, list[str]]:
    """What the user must still do, per harness that runs hooks, for the hooks to run."""
    steps: dict[str, list[str]] = {}
    for harness in names:
        if harness in HOOKS:
            checks = install.check(harness, project, user=args.user, state_rel=state_rel)
            steps[harness] = [c.fix for c in checks if c.ok is not True and c.fix and c.name != "command"]
    return steps
