"""The command line, the face that prints and exits: `main(argv) -> int`, the table of commands and what their
modules share. Each command's arguments (`args_NAME`) and handler (`cmd_NAME`) sit together in the module the table
names; only the invoked command's module is imported (the hook path stays light). For the same reason, what only
some commands need is imported inside the function that needs it, not at the top: argparse's parser (cli/parser.py),
the State, json, shlex, and a crash log's tempfile and traceback; every command and every hook event loads this
module."""

from __future__ import annotations

import gc
import os
import sys

from rehydrate import JSON_VERSION, __version__
from rehydrate.errors import ExitCode, RehydrateError, UsageError
from rehydrate.text import escaping_streams, terminal_safe

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    import argparse
    from collections.abc import Callable, Sequence
    from types import ModuleType
    from typing import Any


DESCRIPTION = """\
Working state for AI coding agents that survives context compaction, crashes and hand-offs.
The state lives in plain files (state/ by default); every command checks them first and
repairs what is safe.

exit codes: 0 ok, 1 discrepancy or degraded, 2 usage error, 3 state missing or unreadable,
4 internal bug, 130 interrupted
"""

# The commands, in the order `rehydrate --help` lists them: name -> (the module of rehydrate.cli that holds its
# arguments and its handler, the one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("write", "create the state folder with a write-once goal and install the boot rule"),
    "invariant": ("write", "record a decision (append-only, one line)"),
    "reject": ("write", "record a rejected approach (it stays rejected unless a new entry supersedes it)"),
    "withdraw": ("write", "take an entry recorded by mistake out of force (the log keeps it, the brief drops it)"),
    "checkpoint": ("write", "record the step just finished and the next allowed action"),
    "handoff": ("write", "replace 20_handoff.md, the note the next session reads in full"),
    "run": ("evidence", "run a command and record a receipt (exit code, output hash, the tree it ran on)"),
    "stamp": ("evidence", "record files' sha256: the checks report a stamped file that changes"),
    "accept": ("evidence", "accept a reviewer's approval file, only if its transcript shows a finished session"),
    "canary": ("audit", "plant a canary rule, ask an agent the two questions, grade the answer: does recovery work?"),
    "key": ("actors", "make and register the key an actor signs its records with; show keys; trust a changed one"),
    "resume": ("read", "print the brief a fresh context reads first"),
    "ack": (
        "read",
        "restate the next action and the rejected approaches after a compaction; checked against the state",
    ),
    "recover": (
        "recover",
        "the recovery ledger: what happened since the last checkpoint (read-only; exit 1 if degraded)",
    ),
    "verify": ("read", "check the WAL chain, the latches and the views (exit 1 on any problem)"),
    "rotate": ("write", "archive the WAL at the end of a task and start a new one anchored to it"),
    "status": ("read", "one screen: goal, last checkpoint, next action, problems"),
    "log": ("read", "the history of records: every actor's log and the archives, oldest first"),
    "sync": ("sync", "commit the state folder (only it), pull the upstream's state, push; retried on a race"),
    "team": ("sync", "set up a clone for a team: union merges for the state folder's logs, and what to commit"),
    "resolve": ("sync", "settle git conflicts under the state folder after a merge, rebase or cherry-pick"),
    "mail": ("actors", "read the messages other actors sent you, or send one (`mail send --to ACTOR TEXT`)"),
    "promise": ("actors", "record a promise to other actors, or that one is done (`promise done ID`)"),
    "hook": ("hook", "answer a harness's hook call (JSON on stdin); always exits 0"),
    "install": ("install", "merge rehydrate's hooks into a harness's settings (and take them out)"),
    "uninstall": ("install", "take every hook and boot rule rehydrate installed out of the project (and the state)"),
    "mcp": ("mcp", "serve the state as an MCP server over stdio (needs the mcp extra)"),
    "audit": ("audit", "find every compaction in agent transcripts, and what followed it that suggests lost context"),
    "cursor": ("cursor", "pipelines: check or repair a cursor against its JSONL output; register one in the state"),
    "demo": ("demo", "show the whole loop on a throwaway git repository"),
    "completion": ("install", "print (or install) the completion script for bash, zsh or fish"),
}
# `rehydrate --help` lists the commands in these groups, in this order (every command in exactly one)
GROUPS: dict[str, tuple[str, ...]] = {
    "everyday": ("init", "invariant", "reject", "withdraw", "checkpoint", "handoff", "resume", "status", "log"),
    "recovery": ("recover", "verify", "ack", "rotate"),
    "teams": ("sync", "team", "resolve", "mail", "promise", "key"),
    "evidence": ("run", "stamp", "accept", "canary", "cursor"),
    "integration": ("install", "uninstall", "hook", "mcp", "audit", "demo", "completion"),
}
DIR_HELP = "the state folder (default: $REHYDRATE_DIR, else ./state found upward)"
ACTOR_HELP = "whose WAL to write (default: $REHYDRATE_ACTOR, else 'agent')"


def command_module(name: str) -> ModuleType:
    """The module of rehydrate.cli that holds the command's arguments and handler (imported now, not before)."""
    module: ModuleType = __import__(f"rehydrate.cli.{COMMANDS[name][0]}", fromlist=["_"])
    return module


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command in COMMANDS; with `only`, just that command's (its module alone imported)."""
    from rehydrate.cli.parser import build  # argparse loads re, gettext and locale: not on the hook path

    def arguments(name: str) -> Callable[[argparse.ArgumentParser], None]:
        found: Callable[[argparse.ArgumentParser], None] = getattr(command_module(name), f"args_{name}")
        return found

    helps = {name: help_text for name, (_, help_text) in COMMANDS.items()}
    return build(DESCRIPTION, helps, arguments, only, GROUPS)


# ---------------------------------------------------------------------------------------------------- shared by the
# commands' modules


def common_options(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    """--dir and --actor (and --json) of the commands that work on a state folder."""
    p.add_argument("--dir", metavar="DIR", help=DIR_HELP)
    p.add_argument("--actor", metavar="NAME", help=ACTOR_HELP)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")


def open_state(args: argparse.Namespace) -> Any:
    from rehydrate.store.state import State

    return State.open(args.dir, args.actor)


def emit_json(command: str, ok: bool, **fields: Any) -> None:
    # ASCII-only: a path or text holding undecodable bytes still makes valid JSON
    import json  # loaded for --json only: it loads re and enum

    print(json.dumps({"version": JSON_VERSION, "command": command, "ok": ok, **fields}, indent=2))


def report(out: Any, args: argparse.Namespace) -> None:
    """Repairs and leftover problems of a writing command go to stderr (stdout stays the command's answer)."""
    if args.json:
        return
    for r in out.repaired:
        print(f"rehydrate: repaired: {r}", file=sys.stderr)
    for p in out.problems:
        where = p.file + (f":{p.line}" if p.line else "")
        print(f"rehydrate: warning: {where}: {p.message} [{p.code}] (see `rehydrate verify`)", file=sys.stderr)


def problems_json(out: Any) -> dict[str, Any]:
    return {"problems": [p.as_dict() for p in out.problems], "repaired": list(out.repaired)}


# Where a value can come from besides the command line: the environment variable the library reads.
ENVIRONMENT = {"actor": "REHYDRATE_ACTOR", "dir": "REHYDRATE_DIR"}
# A library hint's words for an idea, and the command line's (only where the invoked command has the option).
HINT_WORDS = {
    "actor": (("name the actor ", "set REHYDRATE_ACTOR or --actor to "), (" (REHYDRATE_ACTOR)", "")),
    "dir": (("(REHYDRATE_DIR, or the state folder's option)", "with --dir (or REHYDRATE_DIR)"),),
}


def given(field: str, args: argparse.Namespace | None) -> str | None:
    """What the user gave for the library's field, as they gave it: an option of the invoked command that was given
    (or whose default was used) is `--opt`, a positional its metavar (`NAME`), a value from the environment that
    variable's name; None when nothing known gave it (the library's own default, a field no input names)."""
    parser: argparse.ArgumentParser | None = getattr(args, "command_parser", None)
    if args is None or parser is None:
        return None
    option = f"--{field.replace('_', '-')}"
    for action in parser._actions:
        if option in action.option_strings:
            if getattr(args, action.dest, None) is not None or action.default is not None:
                return option
            break
        if not action.option_strings and action.dest == field:
            return str(action.metavar or field.upper())
    named: dict[str, str] = getattr(command_module(args.command), "POSITIONALS", {})
    if field in named:
        return named[field]
    variable = ENVIRONMENT.get(field)
    return variable if variable and os.environ.get(variable) else None


def flagged(e: RehydrateError, args: argparse.Namespace | None = None, *, with_hint: bool = False) -> str:
    """The library's message as the command line says it: what the user gave that it is about first ("--because:
    the reason is empty", see `given`); with_hint, the hint (in the command line's words) on a line of its own."""
    source = given(e.field, args) if e.field else None
    message = f"{source}: {e.message}" if source else e.message
    hint = cli_hint(e, args)
    return message + (f"\n  hint: {hint}" if with_hint and hint else "")


def cli_hint(e: RehydrateError, args: argparse.Namespace | None) -> str | None:
    """The library's hint, naming the option where the invoked command has one for the idea it names."""
    parser: argparse.ArgumentParser | None = getattr(args, "command_parser", None)
    hint = e.hint
    if hint and e.field in HINT_WORDS and parser is not None:
        option = f"--{e.field.replace('_', '-')}"
        if any(option in action.option_strings for action in parser._actions):
            for library, cli in HINT_WORDS[e.field]:
                hint = hint.replace(library, cli)
    return hint


def extra_hint(extra: str, requirement: str) -> str:
    """How to add an optional extra to the environment this rehydrate runs in (the package is not on an index)."""
    import shlex

    python = shlex.quote(sys.executable or "python3")
    return f"{python} -m pip install {shlex.quote(requirement)} (or, in a clone: pip install '.[{extra}]')"


# ---------------------------------------------------------------------------------------------------- the hook
# path's command lines, read without argparse (nor the re, gettext and locale it loads)

# The options of the commands a hook or an agent runs most, as their parsers declare them (args_checkpoint,
# args_resume, common_options): option -> (dest, kind). tests/cli/test_cli_fast_args.py checks every line read here
# against argparse.
_FAST: dict[str, dict[str, tuple[str, str]]] = {
    "checkpoint": {
        "--done": ("done", "text"),
        "--next": ("next", "text"),
        "--goal": ("goal", "text"),
        "--dir": ("dir", "text"),
        "--actor": ("actor", "text"),
        "--json": ("json", "flag"),
    },
    "resume": {
        "--budget": ("budget", "int"),
        "--dir": ("dir", "text"),
        "--actor": ("actor", "text"),
        "--json": ("json", "flag"),
    },
}
_REQUIRED = {"checkpoint": ("done", "next"), "resume": ()}
_ABSENT = {"checkpoint": ("claims", "receipt"), "resume": ()}  # options read by argparse only (--claim, --receipt)


class _Args:
    """What argparse's Namespace holds for a command line read by fast_args; its command's parser (which flagged()
    reads to name an option in a message) is built when asked for, on an error only."""

    def __init__(self, argv: list[str], fields: dict[str, Any]) -> None:
        self.__dict__.update(fields)
        self._argv = argv

    def __getattr__(self, name: str) -> Any:
        if name != "command_parser":
            raise AttributeError(name)
        parsed = build_parser(self.command).parse_args(self._argv)
        self.command_parser = parsed.command_parser
        return parsed.command_parser


def fast_args(argv: list[str]) -> Any:
    """The arguments argparse would give for a plain `checkpoint` or `resume` command line: each option once, as
    `--opt VALUE` or `--opt=VALUE`, no value that starts with "-". Anything else (help, an error, an abbreviation, a
    repeated option) is None: argparse reads it, says what it says."""
    options = _FAST.get(argv[0]) if argv else None
    if options is None:
        return None
    fields: dict[str, Any] = {"command": argv[0], **{dest: None for dest, _ in options.values()}, "json": False}
    fields.update(dict.fromkeys(_ABSENT[argv[0]]))
    seen: set[str] = set()
    i = 1
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        dest, kind = options.get(name, ("", ""))
        if not dest or dest in seen or (eq and kind == "flag"):
            return None
        seen.add(dest)
        i += 1
        if kind == "flag":
            fields[dest] = True
            continue
        if not eq:
            if i == len(argv):
                return None
            value, i = argv[i], i + 1
        if value.startswith("-"):
            return None
        if kind == "int":
            try:
                fields[dest] = int(value)
            except ValueError:
                return None
        else:
            fields[dest] = value
    if not seen.issuperset(_REQUIRED[argv[0]]):
        return None
    return _Args(argv, fields)


# ---------------------------------------------------------------------------------------------------- the end of a
# command: errors, crash logs, a terminal kept safe


def crash_log(exc: BaseException) -> str:
    import tempfile
    import time
    import traceback

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    text = f"rehydrate {__version__} {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\nargv: {sys.argv!r}\n\n"
    text += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    for folder in (os.path.join(base, "rehydrate"), tempfile.gettempdir()):
        try:
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, "crash.log")
            with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text + "\n")
            return path
        except (OSError, ValueError):
            continue
    return "(no writable place for a crash log)"


def _command_of(args_list: list[str]) -> str | None:
    """The command named in argv (the first word that is one), or None (JSON null)."""
    return next((a for a in args_list if a in COMMANDS), None)


def _fail(args_list: list[str], code: int, message: str, hint: str | None = None) -> int:
    """An error that ends the command: a text line on stderr, and with --json one JSON object on stdout too."""
    # terminal_safe here too: a hook call answered without the command line has no safe streams (rehydrate.__main__)
    print(terminal_safe(f"rehydrate: {message}" + (f"\n  hint: {hint}" if hint else "")), file=sys.stderr)
    if "--json" in args_list:
        import json

        error = {"exit_code": code, "message": message, "hint": hint}
        print(
            json.dumps(
                {"version": JSON_VERSION, "command": _command_of(args_list), "ok": False, "error": error}, indent=2
            )
        )
    return code


_TONES = {"good": "32", "bad": "31", "note": "33"}  # green, red, yellow


def say(label: str, tone: str, rest: str = "") -> None:
    """A line whose label (rehydrate's own fixed words: "ok:", "problem:", "confidence: degraded") is coloured on a
    terminal, the rest plain. The colour goes to the raw stream and never through text from files: the rest is
    written through the stream that strips control characters, so no quoted text can colour itself. No colour with
    NO_COLOR set (any value: no-color.org), TERM=dumb, or output that is not a terminal (--json never comes here)."""
    out = sys.stdout
    raw = getattr(out, "_stream", out)
    plain = os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb" or not raw.isatty()
    if plain:
        out.write(label)
    else:
        raw.write(f"\033[{_TONES[tone]}m{label}\033[0m")
    out.write(rest + "\n")


class _SafeStream:
    """A text stream whose writes pass through terminal_safe: every field a command prints came from files that
    arrived by `git pull` (goal, checkpoint titles, quoted lines, paths), so none may carry a control sequence."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command argv (default: sys.argv[1:]); its exit code."""
    escaping_streams()
    args_list = list(sys.argv[1:] if argv is None else argv)
    raw_streams = sys.stdout, sys.stderr
    if not args_list or args_list[0] != "demo":  # the demo prints its own (fixed) bold headings, nothing from files
        sys.stdout, sys.stderr = _SafeStream(sys.stdout), _SafeStream(sys.stderr)
    # The hook path is a process of milliseconds that loads dozens of modules: the cyclic collector runs several
    # times while they load (gc.callbacks shows each run) for garbage that reference counting frees anyway
    # (bench/startup.py measures the whole process). Other commands (the MCP server, a long verify) keep it.
    collecting = gc.isenabled()
    if args_list[:1] in (["hook"], ["checkpoint"], ["resume"]):
        gc.disable()
    try:
        return _main(args_list)
    finally:
        sys.stdout, sys.stderr = raw_streams
        if collecting:
            gc.enable()


def _main(args_list: list[str]) -> int:
    args: argparse.Namespace | None = None
    try:
        if len(args_list) in (2, 3) and args_list[0] == "hook":  # every harness's call on every hook event: no
            from rehydrate.cli import hook  # options, so no argparse (nor the gettext and locale it loads) to answer it

            if hook.answers(args_list[1]) and not args_list[-1].startswith("-"):
                return hook.answer(args_list[1], args_list[2] if len(args_list) == 3 else None)
        args = fast_args(args_list)  # checkpoint and resume as hooks and agents run them: no argparse either
        if args is not None:
            return int(getattr(command_module(args.command), f"cmd_{args.command}")(args))
        parser = build_parser(args_list[0] if args_list and args_list[0] in COMMANDS else None)
        args = parser.parse_args(args_list)
        if not args.command:
            parser.print_help(sys.stderr)
            return ExitCode.USAGE
        handler: Callable[[argparse.Namespace], int] = getattr(command_module(args.command), f"cmd_{args.command}")
        return int(handler(args))
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except (Exception, KeyboardInterrupt) as e:
        return failed(args_list, e, args)


def failed(args_list: list[str], e: Exception | KeyboardInterrupt, args: argparse.Namespace | None = None) -> int:
    """How a command that raised e ends: its message and hint on stderr (and JSON on stdout with --json), and the
    exit code. Also for a hook call answered without the command line (rehydrate.__main__)."""
    if isinstance(e, RehydrateError):
        hint, command = cli_hint(e, args), _command_of(args_list)
        if isinstance(e, UsageError) and command and args_list[0].startswith("-"):  # rehydrate --json status
            hint = f"options go after the command: `rehydrate {command} {args_list[0]}`"
        return _fail(args_list, int(e.exit_code), flagged(e, args), hint)
    if isinstance(e, KeyboardInterrupt):
        print("rehydrate: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    if isinstance(e, BrokenPipeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    path = crash_log(e)
    return _fail(
        args_list,
        ExitCode.BUG,
        f"internal error ({type(e).__name__}: {e}); details in {path}",
        "this is a bug; please report it with that file",
    )
