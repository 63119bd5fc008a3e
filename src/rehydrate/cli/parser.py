"""argparse for a table of commands: the top-level parser and each command's subparser (or, with `only`, just the
invoked command's: the hook path builds one command's parser, not thirty). It knows nothing of which commands there
are: the table and each command's arguments come from the caller (cli.build_parser)."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from rehydrate import __version__
from rehydrate.errors import UsageError
from rehydrate.text import did_you_mean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    Arguments = Callable[[argparse.ArgumentParser], None]  # a command's args_NAME: adds its options to its parser


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text as usual, with the width found without argparse's import of shutil (hook-path start-up)."""

    def __init__(self, prog: str) -> None:
        try:
            columns = os.get_terminal_size(sys.stderr.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = int(os.environ.get("COLUMNS", "100")) if os.environ.get("COLUMNS", "").isdigit() else 100
        super().__init__(prog, width=max(40, min(columns, 120) - 2))

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Each line wrapped on its own: explicit line breaks kept, long lines folded."""
        return "\n".join(
            textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent) if line else ""
            for line in text.splitlines()
        )


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # usage errors exit 2 through main, not from deep inside argparse
        where = self.prog.partition(" ")[2]  # main prints "rehydrate: " once; a subcommand is named after it
        raise UsageError(f"{where}: {message}" if where else message, f"see `{self.prog} --help`")


class _Top(_Parser):
    """`rehydrate`'s own parser: its help lists the commands by group, and a mistyped option is named with the
    invoked command's help (check_options)."""

    groups: Mapping[str, tuple[str, ...]] = {}
    commands: Mapping[str, str] = {}
    argv: Sequence[str] = ()

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.argv = list(sys.argv[1:] if args is None else args)
        check_options(self, self.argv)
        return super().parse_args(args, namespace)

    def error(self, message: str) -> Any:
        """A word too many after a command (`withdraw D-1 D-2`) is its command's to explain, not the top's."""
        command = self.argv[0] if self.argv and message.startswith("unrecognized arguments") else ""
        if command in self.commands:
            raise UsageError(f"{command}: {message}", f"see `rehydrate {command} --help` for what it takes")
        return super().error(message)

    def format_help(self) -> str:
        if not self.groups:
            return super().format_help()
        width = max(map(len, self.commands)) + 2
        wrap = max(60, self._get_formatter()._width) - width - 2
        out = [self.format_usage().rstrip(), "", (self.description or "").rstrip()]
        for title, names in self.groups.items():
            out += ["", f"{title}:"]
            for name in names:
                lines = textwrap.wrap(self.commands[name], wrap) or [""]
                out.append(f"  {name:<{width}}{lines[0]}")
                out += [" " * (width + 2) + line for line in lines[1:]]
        out += ["", "options:", "  -h, --help    show this help message and exit", "  --version     show the version"]
        out += ["", "`rehydrate COMMAND --help` describes each command."]
        return "\n".join(out) + "\n"


def build(
    description: str,
    commands: Mapping[str, str],
    arguments: Callable[[str], Arguments],
    only: str | None = None,
    groups: Mapping[str, tuple[str, ...]] | None = None,
) -> argparse.ArgumentParser:
    """The parser of `rehydrate`: commands, name -> one-line help; arguments(name), the function that adds a
    command's options; with `only`, just that command's subparser; groups, title -> names, how --help lists them
    (else in the commands' order)."""
    parser = _Top(prog="rehydrate", description=description)
    parser.groups, parser.commands = groups or {}, commands
    parser.add_argument("--version", action="version", version=f"rehydrate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_text in commands.items():
        if only in (None, name):
            command = sub.add_parser(name, help=help_text)
            arguments(name)(command)
            command.set_defaults(command_parser=command)  # flagged() reads which options this command has
    return parser


def check_options(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """A mistyped option of the command named first in argv, before argparse reads it: argparse would report a
    required option as missing (`checkpoint --nxt b`) or point to the top-level help (`resume --budjet 100`). The
    error names the option, the closest the command has, and the command's own help."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    command = sub.choices.get(argv[0]) if sub is not None and argv else None
    if command is None:
        return
    known = sorted(_options(command))
    for token in argv[1:]:
        if token == "--":
            return
        name = token.split("=", 1)[0]
        if not name.startswith("--") or name in known or sum(o.startswith(name) for o in known) == 1:
            continue  # a value, an option, or an abbreviation argparse takes (one option starts with it)
        guess = did_you_mean(name, known)
        raise UsageError(f"{argv[0]}: unknown option {name}", f"{guess}see `rehydrate {argv[0]} --help`")


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """The long options of a parser and of every subcommand under it (`mail send --to`)."""
    found = {o for action in parser._actions for o in action.option_strings if o.startswith("--")}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found
