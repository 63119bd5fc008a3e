"""The command line's parser (argparse): the top level and, on the hook path, only the invoked command's."""

from __future__ import annotations

import argparse
import os
import sys

from rehydrate import __version__
from rehydrate.cli import COMMANDS, DESCRIPTION, command_module
from rehydrate.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


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
        import textwrap

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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that command's (the hook path imports one command's module, not ten)."""
    parser = _Parser(prog="rehydrate", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"rehydrate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_module, help_text) in COMMANDS.items():
        if only in (None, name):
            arguments: Callable[[argparse.ArgumentParser], None] = getattr(command_module(name), f"args_{name}")
            command = sub.add_parser(name, help=help_text)
            arguments(command)
            command.set_defaults(command_parser=command)  # flagged() reads which options this command has
    return parser
