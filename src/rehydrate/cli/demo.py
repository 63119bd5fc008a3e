"""`rehydrate demo`: the whole loop on a throwaway git repository, narrated."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap

from rehydrate.cli import main
from rehydrate.errors import ExitCode, RehydrateError
from rehydrate.harness.setup import NEXT_STEPS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

_KILLED_WRITER = """
import os, signal, sys
from rehydrate.fs import write as fsio
from rehydrate.store.state import State

class KillAfterWalAppend(fsio.Calls):
    def fsync(self, fd, point):
        super().fsync(fd, point)
        if point == "wal.append":  # the record is durable; the view is not written yet
            os.kill(os.getpid(), signal.SIGKILL)

fsio.calls = KillAfterWalAppend()
State.open("state").checkpoint(done=sys.argv[1], next=sys.argv[2])
"""


INVARIANTS = "state/10_invariants.md"


def _say(text: str) -> None:
    print(text, flush=True)


def _step(n: int, title: str, why: str = "") -> None:
    bold = sys.stdout.isatty() and not os.environ.get("NO_COLOR")  # https://no-color.org: any value but empty
    _say(f"\n\033[1m{n}. {title}\033[0m" if bold else f"\n{n}. {title}")
    if why:
        _say(textwrap.fill(why, 100, initial_indent="   ", subsequent_indent="   "))


def _run(*argv: str) -> int:
    """Run one rehydrate command in this process, showing it and its indented output."""
    _say("   $ rehydrate " + shlex.join(argv))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = main(list(argv))
    for line in buf.getvalue().rstrip("\n").split("\n"):
        _say("     " + line if line else "")
    if code:
        _say(f"     (exit {code})")
    return code


def _git(*args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=rehydrate demo", "-c", "user.email=demo@example.invalid", *args],
        check=True,
        capture_output=True,
    )


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def args_demo(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run init, decisions, a rejected approach and checkpoints in a temporary git "
        "repository, kill a writer between the WAL append and the view update, rewrite a line of "
        "10_invariants.md by hand, then verify, repair and print the brief a fresh context reads."
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary repository and print its path")


def cmd_demo(args: argparse.Namespace) -> int:
    return run(keep=args.keep)


def run(keep: bool = False) -> int:
    if shutil.which("git") is None:
        raise RehydrateError("the demo needs git on PATH", "install git, then run `rehydrate demo` again")
    base = tempfile.mkdtemp(prefix="rehydrate-demo-")
    saved_env = {k: os.environ.pop(k) for k in ("REHYDRATE_DIR", "REHYDRATE_ACTOR") if k in os.environ}
    old_cwd = os.getcwd()
    try:
        os.chdir(base)
        return _story(base)
    finally:
        os.chdir(old_cwd)
        os.environ.update(saved_env)
        if keep:
            _say(f"\nThe repository is kept at {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


def _story(base: str) -> int:
    _say("rehydrate demo: an agent's working state kept on disk, broken twice, recognized and repaired.")
    _say(f"A throwaway git repository: {base}")
    _externalize()
    _break()
    return _recognize_and_repair()


def _externalize() -> None:
    """Steps 1 to 3: a task starts, decisions are recorded, checkpoints follow the work."""
    _step(
        1,
        "A task starts",
        "`init` writes the write-once goal, the decision log, the program counter and the "
        "write-ahead log, and puts the boot rule into AGENTS.md.",
    )
    _git("init", "-q")
    _write("calc/parser.py", "def parse(text):\n    raise NotImplementedError\n")
    _git("add", ".")
    _git("commit", "-qm", "skeleton")
    _run(
        "init",
        "--goal",
        "Make calc parse and evaluate arithmetic expressions",
        "--done-when",
        "pytest passes on tests/test_calc.py",
        "--rules",
        "agents",
    )

    _step(2, "Decisions and a rejected approach are recorded as they happen")
    _run("invariant", "Parse with a Pratt parser", "--because", "operator precedence stays in one table")
    _run("invariant", "Keep the evaluator free of I/O", "--because", "the tests call it directly")
    _run("reject", "Evaluate input with Python's eval()", "--because", "it runs arbitrary code", "--guard", "calc/*.py")

    _step(3, "Work goes on; a checkpoint after each step")
    _write("calc/parser.py", "def parse(text):\n    return text.split()\n")
    _git("add", ".")
    _git("commit", "-qm", "tokenizer")
    _run("checkpoint", "--done", "tokenizer in calc/parser.py", "--next", "binding powers for + - * /")
    _write("calc/parser.py", "BP = {'+': 10, '-': 10, '*': 20, '/': 20}\n\ndef parse(text):\n    return text.split()\n")
    _git("add", ".")
    _git("commit", "-qm", "binding powers")
    _run("checkpoint", "--done", "binding powers table", "--next", "parse prefix minus")
    _git("add", "state", "AGENTS.md")
    _git("commit", "-qm", "state")


def _break() -> None:
    """Steps 4 and 5: a writer killed between the WAL append and the view, a recorded line edited by hand."""
    _step(
        4,
        "A crash",
        "A writer process is killed with SIGKILL right after its WAL record reached the disk and "
        "before it could update state/99_next.md: the view now lags the log.",
    )
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, "prefix minus", "parenthesized groups"],
        env=env,
        capture_output=True,
        check=False,
    )
    if proc.returncode != -signal.SIGKILL:
        raise RehydrateError(
            f"the demo's writer was meant to be killed, but exited {proc.returncode}: "
            f"{proc.stderr.decode(errors='replace')[-500:]}"
        )
    _say(
        f"   writer killed (signal {signal.SIGKILL}); 99_next.md still says: "
        + _read("state/99_next.md").split("\n")[2]
    )

    _step(
        5,
        "A hand edit",
        "Someone 'tidies' a recorded decision in state/10_invariants.md. The file is an "
        "append-only latch: each recorded line is bound by its WAL record.",
    )
    text = _read(INVARIANTS)
    edited = text.replace("Parse with a Pratt parser", "Parse with a recursive-descent parser", 1)
    _write(INVARIANTS, edited)
    _say("   - Parse with a Pratt parser ...   became   - Parse with a recursive-descent parser ...")


def _recognize_and_repair() -> int:
    """Steps 6 to 9: verify names both, the safe repair, the brief, the decision restored from git."""
    _step(6, "Recognize: `verify` compares the files with the log and names every discrepancy")
    _run("verify")

    _step(
        7,
        "Repair what is safe",
        "The lagging view is redone from the WAL's last record. The hand edit is not "
        "overwritten: it stays reported until a person decides.",
    )
    _run("verify", "--repair")

    _step(
        8,
        "What a fresh context reads first",
        "After a compaction the harness's hook (or the boot rule) runs "
        "`rehydrate resume`: the state in boot order, bounded, ending with the ledger of checks.",
    )
    _run("resume")

    _step(9, "A person restores the decision from git; the state is whole again")
    _git("checkout", "--", INVARIANTS)
    _say("   $ git checkout -- state/10_invariants.md")
    code = _run("verify")
    _say("\nThat is the loop: externalize (files, WAL first), recognize (checks), rehydrate (the brief).")
    _say("Start in a repository of your own:")
    for line in NEXT_STEPS:
        _say(f"   {line}")
    return ExitCode.OK if code == 0 else ExitCode.DISCREPANCY
