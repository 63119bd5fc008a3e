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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
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


def build(
    description: str, commands: Mapping[str, str], arguments: Callable[[str], Arguments], only: str | None = None
) -> argparse.ArgumentParser:
    """The parser of `rehydrate`: commands, name -> one-line help, in the order --help lists them; arguments(name),
    the function that adds a command's options; with `only`, just that command's subparser."""
    parser = _Parser(prog="rehydrate", description=description)
    parser.add_argument("--version", action="version", version=f"rehydrate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_text in commands.items():
        if only in (None, name):
            command = sub.add_parser(name, help=help_text)
            arguments(name)(command)
            command.set_defaults(command_parser=command)  # flagged() reads which options this command has
    return parser
