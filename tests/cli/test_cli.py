"""The command line as a user meets it: real subprocesses, exit codes, JSON envelopes pinned as a contract."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, on_a_terminal, rehydrate
from rehydrate import cli
from rehydrate.cli import COMMANDS, build_parser
from test_text import CONTROLS

ENVELOPE = {"version", "command", "ok"}


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    data = json.loads(result.out)
    assert set(data) >= ENVELOPE and data["version"] == 1
    return data


def test_full_loop_with_json_contracts(repo: Path) -> None:
    r = rehydrate("init", "--goal", "Ship it", "--done-when", "tests pass", "--json")
    assert r.code == 0, r.err
    d = _json(r)
    assert d["command"] == "init" and d["ok"] and d["actor"] == "agent" and d["record"]["op"] == "init"

    d = _json(rehydrate("invariant", "Use a WAL", "--because", "crashes", "--json"))
    assert d["id"].startswith("D-") and d["line"].startswith(f"- {d['id']} ") and d["seq"] == 2
    d = _json(rehydrate("reject", "Use eval", "--because", "unsafe", "--guard", "*.py", "--json"))
    assert d["id"].startswith("R-") and d["line"].endswith("guard: *.py")

    (repo / "app.py").write_text("changed\n")
    d = _json(rehydrate("checkpoint", "--done", "lexer", "--next", "parser", "--json"))
    assert d["seq"] == 4 and d["git"]["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert d["git"]["branch"] == "main" and d["git"]["dirty"] == ["app.py"]
    assert "state/99_next.md" not in d["git"]["dirty"]

    d = _json(rehydrate("handoff", "--json", stdin="Next: the parser.\n"))
    assert d["chars"] == len("Next: the parser.")
    assert (repo / "state" / "20_handoff.md").read_text() == "Next: the parser.\n"

    d = _json(rehydrate("status", "--json"))
    assert d["ok"] and d["goal"] == "Ship it" and d["next"]["next"] == "parser" and d["next"]["done"] == "lexer"

    r = rehydrate("resume", "--json")
    d = _json(r)
    assert r.code == 0 and d["confidence"] == "recovered" and d["ok"]
    assert {"brief", "findings", "omitted", "seq", "problems", "repaired"} <= set(d)
    assert d["brief"].index("## Goal") < d["brief"].index("Rejected approaches") < d["brief"].index("## Handoff")
    assert d["brief"].index("## Handoff") < d["brief"].index("## Next") < d["brief"].index("## Ledger")

    r = rehydrate("verify", "--json")
    d = _json(r)
    assert r.code == 0 and d == {**d, "ok": True, "problems": [], "repaired": []} and d["records"] == 5  # the read
    # is logged in the journal, outside the state folder (store/local/journal.py)

    d = _json(rehydrate("rotate", "--json"))
    assert d["archive"].startswith("archive/agent-1-6-") and d["records"] == 6
    assert (repo / "state" / d["archive"]).is_file()
    assert _json(rehydrate("verify", "--json"))["ok"]
    # after rotate, the goal and every recorded line are still bound
    (repo / "state" / "10_invariants.md").write_text(
        (repo / "state" / "10_invariants.md").read_text().replace("Use a WAL", "Use no WAL")
    )
    r = rehydrate("verify", "--json")
    assert r.code == 1 and [p["code"] for p in _json(r)["problems"]] == ["latch-changed"]


def test_usage_errors_exit_2(repo: Path) -> None:
    assert rehydrate().code == 2
    assert rehydrate("nonsense").code == 2
    r = rehydrate("checkpoint", "--done", "x")
    assert r.code == 2 and "--next" in r.err and "Traceback" not in r.err
    rehydrate("init", "--goal", "g")
    assert rehydrate("invariant", "   ", "--because", "b").code == 2
    r = rehydrate("invariant", "x", "--because", "")
    assert r.code == 2 and r.err.startswith("rehydrate: --because"), r.err  # the flag the library's field names
    r = rehydrate("resume", "--budget", "10")
    assert r.code == 2 and r.err.startswith("rehydrate: --budget"), r.err
    assert rehydrate("init", "--goal", "g", "--rules", "emacs").code == 2


def test_missing_state_exits_3_with_a_hint(repo: Path) -> None:
    for argv in (["resume"], ["checkpoint", "--done", "a", "--next", "b"], ["verify"], ["status"]):
        r = rehydrate(*argv)
        assert r.code == 3, argv
        assert "rehydrate init" in r.err and "Traceback" not in r.err


def test_every_command_has_help_and_is_documented() -> None:
    readme = (Path(__file__).parent.parent.parent / "docs" / "commands.md").read_text()
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)  # type: ignore[arg-type]
    for name in COMMANDS:
        r = rehydrate(name, "--help")
        assert r.code == 0 and r.out.startswith(f"usage: rehydrate {name}"), name
        assert f"## {name}" in readme or ("## invariant and reject" in readme and name in ("invariant", "reject"))
        assert f"rehydrate {name}" in readme, name


def test_exit_code_table_matches_the_files_page() -> None:
    from rehydrate.errors import ExitCode

    readme = (Path(__file__).parent.parent.parent / "docs" / "files.md").read_text()
    for code in ExitCode.ALL:
        assert f"| {int(code)} |" in readme


def test_internal_bug_writes_a_crash_log(repo: Path, isolated_home: Path) -> None:
    import subprocess
    import sys

    rehydrate("init", "--goal", "g")
    code = (
        "import rehydrate.store.state as s, sys\n"
        "def boom(*a, **k): raise ZeroDivisionError('planted bug')\n"
        "s.State.checkpoint = boom\n"
        "from rehydrate.cli import main\n"
        "sys.exit(main(['checkpoint', '--done', 'a', '--next', 'b']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=False)
    assert r.returncode == 4 and "crash.log" in r.stderr and "Traceback" not in r.stderr
    log = isolated_home / "xdg_cache_home" / "rehydrate" / "crash.log"
    assert "planted bug" in log.read_text() and "Traceback" in log.read_text()


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help(argv: list[str]) -> None:
    r = rehydrate(*argv)
    assert r.code == 0 and "rehydrate" in r.out


def _without(module: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a process where `module` cannot be imported (an optional extra that is not installed)."""
    code = (
        f"import sys; sys.modules[{module!r}] = None\nfrom rehydrate.cli import main\nsys.exit(main({list(argv)!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False)


def test_a_usage_error_says_rehydrate_once_and_names_the_command(repo: Path) -> None:
    r = rehydrate("checkpoint", "--done", "x")
    assert r.code == 2
    assert r.err.startswith("rehydrate: checkpoint: the following arguments are required: --next"), r.err
    assert "rehydrate: rehydrate" not in r.err
    r = rehydrate("nonsense")
    assert r.code == 2 and r.err.startswith("rehydrate: argument COMMAND: invalid choice"), r.err


def test_json_errors_name_the_command_wherever_it_stands(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    r = rehydrate("--json", "status")
    assert r.code == 2
    d = json.loads(r.out)
    assert d["command"] == "status" and d["ok"] is False and d["error"]["exit_code"] == 2
    assert "rehydrate status --json" in r.err  # the hint says where the option goes
    d = json.loads(rehydrate("--json").out)
    assert d["command"] is None  # JSON null, not the text "None"
    d = json.loads(rehydrate("status", "--json", "--actor", "..").out)
    assert d["command"] == "status" and d["error"]["exit_code"] == 2


def test_a_missing_optional_extra_is_a_usage_error_with_a_hint_that_works(repo: Path, tmp_path: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    r = _without("mcp", "mcp", cwd=repo)
    assert r.returncode == 2, r.stderr
    assert "the MCP server needs the official mcp SDK" in r.stderr and "Traceback" not in r.stderr
    assert "-m pip install 'mcp>=2.3,<3'" in r.stderr and "rehydrate[" not in r.stderr
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    r = _without("plotly", "audit", str(transcript), "--html", str(tmp_path / "a.html"), cwd=repo)
    assert r.returncode == 2 and "Plotly" in r.stderr and "-m pip install 'plotly>=6,<8'" in r.stderr, r.stderr
    assert not (tmp_path / "a.html").exists()


@pytest.mark.parametrize(
    ("field", "flag", "command"),
    [
        ("because", "--because", ["invariant", "x", "--because", "y"]),
        ("done_when", "--done-when", ["init", "--goal", "g", "--done-when", "d"]),
        ("done_when", None, ["invariant", "x", "--because", "y"]),  # invariant has no --done-when
        (None, None, ["invariant", "x", "--because", "y"]),
    ],
    ids=str,
)
def test_the_cli_names_the_flag_a_library_error_is_about(
    repo: Path, field: str | None, flag: str | None, command: list[str]
) -> None:
    """The library words its errors in the domain and names the input in `field`; the CLI adds the flag's name
    (only a flag the invoked command has), in the text on stderr and in the JSON error, with the exit code and the
    hint unchanged."""
    rehydrate("init", "--goal", "g")
    code = (
        "import rehydrate.store.state as s, sys\n"
        "from rehydrate.errors import UsageError\n"
        "def refuse(*a, **k): raise UsageError('the reason is empty', 'say why', field=sys.argv[1] or None)\n"
        "s.State.invariant = s.State.init = refuse\n"
        "from rehydrate.cli import main\n"
        "sys.exit(main(sys.argv[2:]))\n"
    )
    for json_flag in ([], ["--json"]):
        argv = [sys.executable, "-c", code, field or "", *command, *json_flag]
        r = subprocess.run(argv, capture_output=True, text=True, cwd=repo, check=False)
        said = f"{flag}: the reason is empty" if flag else "the reason is empty"
        assert r.returncode == 2 and r.stderr == f"rehydrate: {said}\n  hint: say why\n", r.stderr
        if json_flag:
            assert json.loads(r.stdout)["error"] == {"exit_code": 2, "message": said, "hint": "say why"}


def test_each_command_of_the_table_has_its_arguments_and_its_handler_in_its_module() -> None:
    import importlib

    from rehydrate import cli

    modules = {module for module, _help in COMMANDS.values()}
    for module in modules:
        mod = importlib.import_module(f"rehydrate.cli.{module}")
        handlers = {n[4:] for n in vars(mod) if n.startswith("cmd_")}
        arguments = {n[5:] for n in vars(mod) if n.startswith("args_")}
        named = {name for name, (m, _help) in COMMANDS.items() if m == module}
        assert handlers == arguments == named, module  # no handler without its arguments, none outside the table
        assert all(cli.command_module(name) is mod for name in named)
    found = {p.stem for p in Path(cli.__file__).parent.glob("*.py")} - {"__init__", "parser"}  # parser: argparse's
    assert found == modules, "a module of rehydrate.cli that no command names"


# ---------------------------------------------------------------------------------------------------- terminal_safe

NASTY = "\x1b]0;pwned\x07\x1b[2J\r\x00\x08\u202e\u2066\x9b"


def _assert_clean(out: str) -> None:
    for ch in CONTROLS:
        assert ch not in out, f"{ch!r} reached the terminal: {out!r}"


def test_a_state_folder_whose_path_holds_escape_sequences_prints_clean(tmp_path: Path) -> None:
    repo = tmp_path / f"clone{NASTY.replace(chr(0), '')}"  # a path cannot hold NUL
    repo.mkdir()
    git(repo, "init", "-q")
    assert rehydrate("init", "--goal", "Ship it", cwd=repo).code == 0
    (repo / "state" / "99_next.md").write_text("# Next (checkpoint 9\x1b[2J\r\x00evil\u202e)\ncurrent goal: x\n")
    for args in (("status",), ("verify",), ("resume",), ("checkpoint", "--done", "a", "--next", "b")):
        r = rehydrate(*args, cwd=repo)
        assert r.code in (0, 1), r
        assert "state" in r.out + r.err
        _assert_clean(r.out)
        _assert_clean(r.err)
    # an error message that names the path is clean too
    r = rehydrate("status", "--dir", str(repo / "missing"), cwd=repo)
    assert r.code == 3 and "missing" in r.err
    _assert_clean(r.err)


def test_the_cli_names_what_the_user_gave_a_positional_the_environment_or_nothing(repo: Path) -> None:
    """A library error's field is named as the user gave it: a positional by its metavar (NAME, never a `--name`
    that does not exist), the actor from REHYDRATE_ACTOR by that variable, an option given by its flag; nothing
    when the library's default was used. The hint names --actor, as before the restructure."""
    rehydrate("init", "--goal", "g")
    r = rehydrate("cursor", "register", "", "out.jsonl", "progress.json", "--json")
    said = "NAME: the pipeline name '' is empty, too long or holds control characters"
    assert r.code == 3 and r.err.startswith(f"rehydrate: {said}\n"), r.err
    assert json.loads(r.out)["error"]["message"] == said
    r = rehydrate("cursor", "register", "n", "/elsewhere/out.jsonl", "progress.json")
    assert r.err.startswith("rehydrate: OUTPUT: the output file /elsewhere/out.jsonl is outside"), r.err
    hint = (
        "\n  hint: its first write joins the state: e.g. `rehydrate checkpoint --done ... --next ...` as bob, "
        "or `rehydrate mail` to read what was sent to it\n"
    )
    r = rehydrate("status", env={"REHYDRATE_ACTOR": "bob"})
    said = "REHYDRATE_ACTOR: actor 'bob' has no history yet in state/wal/ (actors: agent)"
    assert r.code == 3 and r.err == f"rehydrate: {said}{hint}", r.err
    r = rehydrate("status", "--actor", "bob", "--json")
    said = "--actor: actor 'bob' has no history yet in state/wal/ (actors: agent)"
    assert r.code == 3 and r.err == f"rehydrate: {said}{hint}", r.err
    assert json.loads(r.out)["error"] == {"exit_code": 3, "message": said, "hint": hint.strip()[len("hint: ") :]}


@pytest.mark.parametrize(
    ("command", "said", "hint"),
    [
        (["status"], "", "name it with --dir (or REHYDRATE_DIR)"),  # --dir not given: no prefix
        (["install", "claude"], "", "name it (REHYDRATE_DIR, or the state folder's option)"),  # no --dir at all
    ],
)
def test_a_folder_of_another_user_is_refused_without_a_flag_nobody_gave(
    repo: Path, command: list[str], said: str, hint: str
) -> None:
    """locate refuses the found folder of another user only when neither --dir nor REHYDRATE_DIR named one: the
    message names no flag; the hint names --dir where the command has it (as before the restructure)."""
    code = (
        "import rehydrate.store.locate as l, rehydrate.store.state as s, sys\n"
        "from rehydrate.errors import StateMissing\n"
        "def refuse(*a, **k):\n"
        "    raise StateMissing('x belongs to another user', 'if you trust it, name it (REHYDRATE_DIR, or the state "
        "folder\\'s option); to start your own, run from your own folder', field='dir')\n"
        "l.locate = s.locate = refuse\n"
        "from rehydrate.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True, cwd=repo, check=False)
    want = f"rehydrate: {said}x belongs to another user\n  hint: if you trust it, {hint}; to start your own, run from"
    assert r.returncode == 3 and r.stderr.startswith(want), r.stderr


def test_the_hook_path_runs_without_the_cyclic_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """hook, checkpoint and resume (processes of milliseconds, bench/startup.py) run with the cyclic collector off;
    every other command keeps it, and it is on again when main returns, even by an exception."""
    seen: list[tuple[str, bool]] = []

    def fake(args: list[str]) -> int:
        seen.append((args[0], gc.isenabled()))
        if args[0] == "resume":
            raise KeyboardInterrupt
        return 0

    monkeypatch.setattr(cli, "_main", fake)
    assert gc.isenabled()
    for command in ("hook", "checkpoint", "status", "mcp", "verify"):
        assert cli.main([command]) == 0
        assert gc.isenabled(), command
    with pytest.raises(KeyboardInterrupt):
        cli.main(["resume"])
    assert gc.isenabled()
    assert seen == [
        ("hook", False),
        ("checkpoint", False),
        ("status", True),
        ("mcp", True),
        ("verify", True),
        *[("resume", False)],
    ]


def _on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> bytes:
    """What the CLI writes to stdout when stdout is a terminal."""
    return on_a_terminal([sys.executable, "-m", "rehydrate", *argv], cwd=cwd, env=env)[1]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_colour_on_a_terminal_for_rehydrate_s_own_words_only_and_never_with_no_color(repo: Path) -> None:
    """verify, status and recover colour their own labels (ok, problem, the confidence) on a terminal; piped output,
    NO_COLOR, TERM=dumb and --json are plain; text from files never carries a colour of its own."""
    assert rehydrate("init", "--goal", "Ship \x1b[32mthe parser").code == 0
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    out = _on_a_terminal(["verify"], repo, env)
    assert b"\x1b[32mok:\x1b[0m state/ verified" in out, out
    assert b"\x1b[32mconfidence: recovered\x1b[0m" in _on_a_terminal(["recover"], repo, env)
    (repo / "state" / "99_next.md").write_text("edited by hand\n")
    status = _on_a_terminal(["status"], repo, env)
    assert b"\x1b[31mproblem:\x1b[0m" in status and status.count(b"\x1b[") == 2, status  # the label alone
    for plain in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        assert b"\x1b[" not in _on_a_terminal(["status"], repo, {**env, **plain})
    assert "\x1b[" not in rehydrate("status").out and "\x1b[" not in rehydrate("--json", "status").out
