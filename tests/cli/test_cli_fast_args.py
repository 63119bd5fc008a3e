"""`checkpoint` and `resume` command lines read without argparse (the hook path's start-up): every line fast_args
reads, it reads as argparse does; every other line (help, errors, anything unusual) goes to argparse unchanged."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import rehydrate
from rehydrate.cli import build_parser, fast_args
from rehydrate.errors import UsageError

OPTIONS = ["--done", "--next", "--goal", "--dir", "--actor", "--json", "--budget"]
ODD = ["--do", "--", "-h", "--version", "=", "resume"]  # an abbreviation, the end of options, help, strays
VALUES = ["x", "", "a b", "-x", "-x y", "-1", " 7", "1_0", "--json", "é\u202e"]
# a command line: options with a value after them or after "=", alone, or an odd word
WORDS = st.lists(
    st.tuples(st.sampled_from(OPTIONS), st.sampled_from(VALUES)).map(list)
    | st.tuples(st.sampled_from(OPTIONS), st.sampled_from(VALUES)).map(lambda ov: ["=".join(ov)])
    | st.sampled_from(OPTIONS).map(lambda o: [o])
    | st.sampled_from(ODD).map(lambda o: [o]),
    max_size=4,
).map(lambda groups: [w for g in groups for w in g])


def argparse_args(argv: list[str]) -> dict[str, object] | None:
    """What argparse gives for argv (without the parser it keeps), or None when it refuses (usage error, --help)."""
    try:
        parsed = vars(build_parser(argv[0]).parse_args(argv))
    except (UsageError, SystemExit):
        return None
    parsed.pop("command_parser", None)
    return parsed


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(["checkpoint", "resume"]), WORDS)
@example("resume", ["--dir", "-x"])  # argparse: "expected one argument"
@example("resume", ["--dir", "-x y"])  # argparse: a value (it holds a space)
@example("resume", ["--dir", "-1"])  # argparse: a value (a negative number)
@example("checkpoint", ["--done", "a", "--next", "b", "--done", "c"])
def test_fast_args_read_what_argparse_reads(command: str, words: list[str]) -> None:
    argv = [command, *words]
    fast = fast_args(argv)
    if fast is None:
        return  # argparse reads it (tests/cli/test_cli*.py pin what it says)
    mine = {k: v for k, v in vars(fast).items() if not k.startswith("_")}
    assert mine == argparse_args(argv), argv


def test_the_common_lines_are_read_fast() -> None:
    for argv in (
        ["checkpoint", "--done", "x", "--next", "y"],
        ["checkpoint", "--next=y", "--done=x", "--goal", "g", "--json", "--dir", "state", "--actor", "bob"],
        ["resume"],
        ["resume", "--json", "--budget", "4000"],
        ["resume", "--dir=s", "--actor=a"],
    ):
        fast = fast_args(argv)
        assert fast is not None, argv
        assert {k: v for k, v in vars(fast).items() if not k.startswith("_")} == argparse_args(argv)
    for argv in (
        ["checkpoint", "--done", "x"],  # --next is required: argparse says so
        ["checkpoint", "--done", "x", "--next", "y", "--done", "z"],
        ["resume", "--budget", "many"],
        ["resume", "--help"],
        ["resume", "--jso"],
        ["status"],
        [],
    ):
        assert fast_args(argv) is None, argv


def test_messages_name_the_option_on_the_fast_path(repo: Path) -> None:
    """A library error about a field names the option the user gave (flagged reads the command's parser, built
    then), and argparse's own errors and help are as they were."""
    assert rehydrate("init", "--goal", "g").code == 0
    r = rehydrate("checkpoint", "--done", " ", "--next", "y")
    assert r.code == 2 and "--done: " in r.err, r.err
    r = rehydrate("checkpoint", "--done", "x")
    assert r.code == 2 and "the following arguments are required: --next" in r.err, r.err
    r = rehydrate("resume", "--budget", "many")
    assert r.code == 2 and "invalid int value: 'many'" in r.err, r.err
    r = rehydrate("resume", "--help")
    assert r.code == 0 and "--budget CHARS" in r.out
