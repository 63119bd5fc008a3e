"""The hook path stays light: running `checkpoint` and `resume` imports only the standard library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import rehydrate
from rehydrate.cli import COMMANDS

PROBE = r"""
import json, sys
from rehydrate.cli import main
code = main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules(cwd: Path, *argv: str) -> list[str]:
    event = json.dumps({"hook_event_name": "SessionStart", "source": "compact", "cwd": str(cwd)})
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True, text=True, check=True, input=event
    )
    return json.loads(r.stderr.strip().splitlines()[-1])


def test_hook_path_imports_only_the_standard_library(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    stdlib = set(sys.stdlib_module_names)
    for argv in (["checkpoint", "--done", "a", "--next", "b"], ["resume"], ["verify"], ["hook", "claude"]):
        mods = _modules(repo, *argv)
        foreign = {m.split(".")[0] for m in mods} - stdlib - {"rehydrate", "__main__", "_distutils_hack"}
        assert not foreign, (argv, foreign)
        assert not {"asyncio", "email", "http", "ssl", "sqlite3", "xml", "logging"} & set(mods), argv
        assert "rehydrate.cli.demo" not in mods and "rehydrate.harness.rules" not in mods
        cli = {m for m in mods if m.startswith("rehydrate.cli.")}
        assert cli == {f"rehydrate.cli.{COMMANDS[argv[0]][0]}"}, (argv, cli)  # only the invoked command's module
        if argv[0] in ("checkpoint", "resume", "hook"):  # what bench/startup.py showed costs the hook path its budget
            heavy = {"typing", "dataclasses", "inspect", "subprocess", "contextlib", "_hashlib", "shutil", "signal"}
            assert not heavy & set(mods), (argv, heavy & set(mods))
            # the brief's pipeline check reads the registry and the outputs' tails, not the pipeline and its lock
            assert not {"rehydrate.cursor.pipeline", "rehydrate.cursor.lock"} & set(mods), argv
