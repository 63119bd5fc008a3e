"""argparse for a table of commands (cli/parser.py): the table's commands in its order, each with the options its
function adds, or only the invoked one's; a usage error raised (never argparse's exit) naming the subcommand and its
help; descriptions keep their line breaks."""

from __future__ import annotations

import argparse

import pytest

from rehydrate.cli import parser
from rehydrate.errors import UsageError

TABLE = {"plant": "plant a tree", "water": "water it"}


def _arguments(name: str) -> parser.Arguments:
    def add(p: argparse.ArgumentParser) -> None:
        p.description = f"{name}: first line\nsecond line"
        p.add_argument(f"--{name}-count", type=int, required=True)

    return add


def _commands(p: argparse.ArgumentParser) -> list[str]:
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def test_the_table_s_commands_with_their_options_or_only_the_invoked_one() -> None:
    whole = parser.build("the tool", TABLE, _arguments)
    assert _commands(whole) == ["plant", "water"]
    args = whole.parse_args(["water", "--water-count", "3"])
    assert args.command == "water" and args.water_count == 3 and args.command_parser.prog == "rehydrate water"
    only = parser.build("the tool", TABLE, _arguments, only="water")
    assert _commands(only) == ["water"]
    assert "first line\nsecond line" in only.parse_args(["water", "--water-count", "1"]).command_parser.format_help()


def test_a_usage_error_is_raised_naming_the_subcommand_and_its_help() -> None:
    p = parser.build("the tool", TABLE, _arguments)
    with pytest.raises(UsageError) as sub_error:
        p.parse_args(["plant"])
    assert str(sub_error.value).startswith("plant: the following arguments are required: --plant-count")
    assert sub_error.value.hint == "see `rehydrate plant --help`"
    with pytest.raises(UsageError) as top_error:
        p.parse_args(["--nope"])
    assert top_error.value.hint == "see `rehydrate --help`" and not str(top_error.value).startswith(":")
