"""`rehydrate install`: merge rehydrate into harnesses' settings, take it out, or check that the hooks will run;
`rehydrate uninstall`, all of it out at once; `rehydrate completion`, the shells' completion scripts. None of this is
on the hook path."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys

import shtab

from rehydrate.cli import build_parser, emit_json
from rehydrate.errors import ExitCode, UsageError
from rehydrate.harness import HOOKS, RUNS_PROGRAM, TARGETS
from rehydrate.harness.setup import install, program
from rehydrate.store.layout import WAL_DIR
from rehydrate.store.local import place
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
    p.add_argument("--uninstall", action="store_true", help="take rehydrate's hooks out")
    _scope_options(p)
    p.add_argument(
        "--check",
        action="store_true",
        help="change nothing; say whether the harness will run the hooks (installed, program found, project and "
        "hooks trusted) and what to do if not; exit 1 if it will not",
    )
    _project_options(p)


def _scope_options(p: argparse.ArgumentParser) -> None:
    """--user and --dry-run, as install and uninstall take them."""
    p.add_argument("--user", action="store_true", help="the user's settings instead of the project's")
    p.add_argument("--dry-run", action="store_true", help="print the diff and change nothing")


def _project_options(p: argparse.ArgumentParser) -> None:
    """--project and --json, as install and uninstall take them (the project found as `_project` finds it)."""
    p.add_argument(
        "--project",
        metavar="DIR",
        help="the project folder (default: the state folder's, found as `init` finds it: the repository's root)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")


def cmd_install(args: argparse.Namespace) -> int:
    project, state_rel, args.no_state = _project(args)
    if args.check:  # change nothing: will the harness run the hooks?
        if args.uninstall or args.dry_run:
            raise UsageError("--check changes nothing: it takes neither --uninstall nor --dry-run")
        return _check(args, HOOKS if "all" in args.harness else _named(args), project, state_rel)
    names = TARGETS if "all" in args.harness else _named(args)
    if args.uninstall:  # the reverse of the install: a file or folder two harnesses share goes with the first
        names = tuple(reversed(names))
    return _install(args, names, project, state_rel)


def _project(args: argparse.Namespace) -> tuple[str, str, bool]:
    """The project folder, the state folder's path from it, and whether there is no state there yet."""
    if args.project:
        project = os.path.abspath(args.project)
        state_dir = locate(None, project)
    else:  # where init puts the state (or found it): the repository's root, where the harness looks for its files
        project = os.path.dirname(init_location(None))
        state_dir = locate(None, project)
    return project, os.path.relpath(state_dir, project), not os.path.isdir(os.path.join(state_dir, WAL_DIR))


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


def _apply(
    args: argparse.Namespace, names: tuple[str, ...], project: str, state_rel: str
) -> tuple[list[dict[str, Any]], list[str], Any]:
    """Each harness's files planned, then written unless --dry-run: (each file's result, the diffs, the program)."""
    # every harness's files are read and checked before any is written: a refusal leaves nothing half-installed
    install.preflight(names, project, user=args.user, uninstall=args.uninstall, state_rel=state_rel)
    prog = program.program()
    results: list[dict[str, Any]] = []
    diffs: list[str] = []
    for harness in names:  # one after the other: two harnesses can share a file (Gemini's settings.json)
        changes = install.plan(
            harness, project, user=args.user, uninstall=args.uninstall, state_rel=state_rel, prog=prog
        )
        if not args.dry_run:
            install.apply(changes, uninstall=args.uninstall)
        for change in changes:
            results.append({"harness": harness, "path": change.path, "changed": change.changed, "what": change.note})
            diffs.append(change.diff() or f"{change.path}: no change\n")
    return results, diffs, prog


def _install(args: argparse.Namespace, names: tuple[str, ...], project: str, state_rel: str) -> int:
    results, diffs, prog = _apply(args, names, project, state_rel)
    if not args.json:
        for result, diff in zip(results, diffs, strict=True):
            if args.dry_run:
                sys.stdout.write(diff)
            else:
                what = result["what"] if result["changed"] else "already as it should be"
                print(f"{result['harness']}: {result['path']}: {what}")
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


def args_uninstall(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Take rehydrate out of the project: every harness's hooks and boot rule, and the MCP entries (with --user, "
        "the user's hooks instead). Each file goes back byte for byte as it was before rehydrate when nothing else "
        "changed it since (a file rehydrate created is removed); otherwise only rehydrate's own parts go. Running it "
        "again changes nothing. The state folder is kept unless --state is given, with --yes or confirmed at the "
        "terminal."
    )
    _scope_options(p)
    p.add_argument(
        "--state", action="store_true", help="remove the state folder too, and what this clone keeps of it in .git"
    )
    p.add_argument("--yes", action="store_true", help="with --state: do not ask (the state's history goes with it)")
    _project_options(p)


def cmd_uninstall(args: argparse.Namespace) -> int:
    if args.state and args.user:
        raise UsageError("--state is the project's: it takes no --user", field="state")
    if args.yes and not args.state:
        raise UsageError("--yes confirms --state: without it the state is kept anyway", field="yes")
    project, state_rel, args.no_state = _project(args)
    state_dir = os.path.join(project, state_rel)
    remove = args.state and not args.no_state
    if remove and not args.dry_run and not (args.yes or _confirmed(state_dir)):
        raise UsageError(
            f"not removing {state_dir}: its whole history goes with it",
            "confirm with --yes (or answer yes at a terminal); without --state the state is kept",
            field="yes",
        )
    args.uninstall = True
    names = tuple(reversed(TARGETS)) if not args.user else tuple(reversed(HOOKS))
    results, diffs, _ = _apply(args, names, project, state_rel)
    removed = _remove_state(state_dir) if remove and not args.dry_run else []
    if args.json:
        emit_json("uninstall", True, dry_run=args.dry_run, files=results, state_removed=removed)
        return 0
    changed = [(r, d) for r, d in zip(results, diffs, strict=True) if r["changed"]]
    for result, diff in changed:
        sys.stdout.write(diff if args.dry_run else f"{result['harness']}: {result['path']}: {result['what']}\n")
    if not changed:
        print("nothing of rehydrate's is installed here: nothing changed")
    if removed:
        print("removed " + ", ".join(removed))
    elif not args.no_state:
        print(f"kept {state_rel}/ (`rehydrate uninstall --state` removes it)")
    return 0


def _confirmed(state_dir: str) -> bool:
    """At a terminal, the user types yes; elsewhere (a script, a hook) nobody can: no."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    answer = input(f"remove {state_dir} and its whole history? type yes: ")
    return answer.strip().lower() == "yes"


def _remove_state(state_dir: str) -> list[str]:
    """The state folder (only a real folder holding a WAL: never through a link), then what this worktree keeps
    of it in its git folder. The paths removed."""
    if os.path.islink(state_dir) or not os.path.isdir(os.path.join(state_dir, WAL_DIR)):
        raise UsageError(f"{state_dir} is not a state folder (a real folder holding wal/): not removed")
    local = place.local_dir(state_dir)
    shutil.rmtree(state_dir)
    removed = [state_dir]
    if os.path.isdir(local) and not os.path.islink(local):
        shutil.rmtree(local)
        removed.append(local)
        with contextlib.suppress(OSError):  # .git/rehydrate/ itself, when no other state folder keeps anything there
            os.rmdir(os.path.dirname(local))
    return removed


# ------------------------------------------------------------------------------------------------ completion
# The shells' completion scripts, generated from the parser by shtab (so that they cannot drift from the commands and
# their options); with --install, written where the shell loads them by itself.

SHELLS = ("bash", "zsh", "fish")


def args_completion(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Print the completion script for bash, zsh or fish: commands, options and their choices, generated from "
        "this version's parser. With --install it is written where the shell loads it: bash-completion's folder "
        "($XDG_DATA_HOME/bash-completion/completions), fish's ($XDG_CONFIG_HOME/fish/completions), or ~/.zfunc for "
        "zsh (then add `fpath+=~/.zfunc; autoload -Uz compinit; compinit` to ~/.zshrc). Run it again after an upgrade."
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete for")
    p.add_argument("--install", action="store_true", help="write the script where the shell loads it, and say where")
    p.add_argument("--json", action="store_true", help="with --install: print one JSON object (with a version field)")


def cmd_completion(args: argparse.Namespace) -> int:
    parser = build_parser()
    parser.prog = "rehydrate"
    script = shtab.complete(parser, shell=args.shell)
    script += "" if script.endswith("\n") else "\n"
    if not args.install:
        sys.stdout.write(script)
        return 0
    path = where(args.shell)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(script)
    os.replace(temporary, path)
    then = "new shells complete rehydrate" if args.shell != "zsh" else "add `fpath+=~/.zfunc` to ~/.zshrc"
    if args.json:
        emit_json("completion", True, shell=args.shell, path=path)
    else:
        print(f"wrote {path}: {then}")
    return 0


def where(shell: str) -> str:
    """Where the shell loads a completion script by itself (the XDG folders honoured, as the shells do)."""
    home = os.path.expanduser("~")
    if shell == "bash":
        data = os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
        return os.path.join(data, "bash-completion", "completions", "rehydrate")
    if shell == "fish":
        config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        return os.path.join(config, "fish", "completions", "rehydrate.fish")
    return os.path.join(home, ".zfunc", "_rehydrate")
