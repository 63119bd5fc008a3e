"""argparse for a table of commands (cli/parser.py): the table's commands in its order, each with the options its
function adds, or only the invoked one's; a usage error raised (never argparse's exit) naming the subcommand and its
help; descriptions keep their line breaks."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from conftest import rehydrate
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


def test_a_mistyped_option_names_the_closest_and_the_command_s_own_help(repo: Path) -> None:
    """`resume --budjet 100` pointed to `rehydrate --help`; `checkpoint --nxt b` reported only the missing --next.
    Both now name the option given, the closest the command has, and the command's help; an abbreviation argparse
    takes (one option starts with it) still works."""
    assert rehydrate("init", "--goal", "g").code == 0
    r = rehydrate("resume", "--budjet", "100")
    assert r.code == 2 and r.err.startswith("rehydrate: resume: unknown option --budjet"), r.err
    assert "did you mean --budget? see `rehydrate resume --help`" in r.err
    r = rehydrate("checkpoint", "--nxt", "b", "--done", "a")
    assert r.code == 2 and "unknown option --nxt" in r.err and "did you mean --next?" in r.err, r.err
    r = rehydrate("log", "--zzzzzz")
    assert r.code == 2 and "unknown option --zzzzzz" in r.err and "did you mean" not in r.err
    assert rehydrate("checkpoint", "--done", "a", "--nex", "b").code == 0  # an abbreviation of --next
    assert rehydrate("log", "--op=checkpoint").code == 0


def test_the_help_lists_every_command_once_by_group_everyday_first() -> None:
    from rehydrate.cli import COMMANDS, GROUPS

    grouped = [name for names in GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(COMMANDS) and len(grouped) == len(set(grouped))
    top = rehydrate("--help")
    assert top.code == 0
    titles = [line[:-1] for line in top.out.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert titles[:6] == ["everyday", "recovery", "teams", "evidence", "integration", "options"], titles
    listed = [line.split()[0] for line in top.out.splitlines() if line.startswith("  ") and not line.startswith("   ")]
    assert [n for n in listed if n in COMMANDS] == grouped
    assert "rehydrate COMMAND --help" in top.out
