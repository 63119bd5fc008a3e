"""The hooks install writes run this installation's `rehydrate` from a harness started anywhere.

A harness started outside the virtual environment rehydrate lives in has none of its bin folder on its PATH: a bare
`rehydrate hook claude` fails there ("hook failed", no brief). Install names the program by its full path (quoted
for the shell) unless the PATH finds this very program without the environment, and says so.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import rehydrate

OWN = Path(sys.executable).absolute().parent / "rehydrate"  # this installation's script (an editable install)
pytestmark = pytest.mark.skipif(not OWN.is_file(), reason="rehydrate is not installed beside this interpreter")

BARE_PATH = "/usr/bin:/bin"  # a harness started outside the environment: no rehydrate on it


def _command(settings: Path, event: str = "SessionStart") -> str:
    return str(json.loads(settings.read_text())["hooks"][event][0]["hooks"][0]["command"])


def _run_hook(command: str, cwd: Path, event: dict[str, object]) -> subprocess.CompletedProcess[str]:
    """The command as a harness runs it: through the shell, with a PATH that has no virtual environment on it."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = BARE_PATH
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_installed_from_a_virtual_environment_the_hook_runs_from_outside_it(repo: Path) -> None:
    assert rehydrate("init", "--goal", "Ship the parser", "--done-when", "tests pass").code == 0
    venv_path = f"{OWN.parent}{os.pathsep}{BARE_PATH}"  # as `source .venv/bin/activate` leaves it
    r = rehydrate("install", "claude", env={"PATH": venv_path, "VIRTUAL_ENV": str(OWN.parent.parent)})
    assert r.code == 0, r.err
    command = _command(repo / ".claude" / "settings.json")
    assert shlex.split(command) == [str(OWN), "hook", "claude"]
    assert "full path" in r.out and "pipx" in r.out  # the user is told why, and how to get a portable command
    event = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo), "session_id": "s1"}
    ran = _run_hook(command, repo, event)
    assert ran.returncode == 0, ran.stderr
    assert "Ship the parser" in ran.stdout  # the brief reached the harness
    # installing again changes nothing; uninstalling finds the hooks by their program and takes them out
    before = (repo / ".claude" / "settings.json").read_bytes()
    assert rehydrate("install", "claude", env={"PATH": venv_path}).code == 0
    assert (repo / ".claude" / "settings.json").read_bytes() == before
    assert rehydrate("install", "claude", "--uninstall").code == 0
    assert not (repo / ".claude").exists()


def test_a_path_with_spaces_and_quotes_is_quoted_for_the_shell(repo: Path, tmp_path: Path) -> None:
    odd = tmp_path / "my tools 'x' $HOME"
    odd.mkdir()
    (odd / "rehydrate").symlink_to(OWN)
    assert rehydrate("init", "--goal", "Ship the parser", "--done-when", "tests pass").code == 0
    env = {**os.environ, "PATH": BARE_PATH}
    r = subprocess.run(
        [str(odd / "rehydrate"), "install", "gemini"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert r.returncode == 0, r.stderr
    command = _command(repo / ".gemini" / "settings.json")
    assert shlex.split(command) == [str(odd / "rehydrate"), "hook", "gemini"]
    ran = _run_hook(command, repo, {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})
    assert ran.returncode == 0 and "Ship the parser" in ran.stdout, ran.stderr


def test_on_the_path_outside_any_environment_the_bare_name_is_kept(repo: Path, tmp_path: Path) -> None:
    """As pipx lays it out: a link in ~/.local/bin to the script in its own environment."""
    bin_folder = tmp_path / "local-bin"
    bin_folder.mkdir()
    (bin_folder / "rehydrate").symlink_to(OWN)
    r = rehydrate("install", "claude", "codex", env={"PATH": f"{bin_folder}{os.pathsep}{BARE_PATH}"})
    assert r.code == 0, r.err
    assert _command(repo / ".claude" / "settings.json") == "rehydrate hook claude"
    assert _command(repo / ".codex" / "hooks.json") == "rehydrate hook codex"
    assert "note: the hooks run" not in r.out  # (the note on the program; no state yet is said apart)


def test_the_mcp_server_is_registered_by_its_full_path_too(repo: Path) -> None:
    r = rehydrate("install", "mcp", "--json", env={"PATH": BARE_PATH})
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["program"]["bare"] is False and out["program"]["command"] == str(OWN) and out["program"]["note"]
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["rehydrate"]["command"] == str(OWN)
    assert f'command = "{OWN}"' in (repo / ".codex" / "config.toml").read_text()


def test_a_hook_written_with_a_path_by_an_older_install_is_ours_on_uninstall(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "./lint.sh"}
    theirs = {"type": "command", "command": "'/opt/x y/bin/rehydrate' hook claude"}
    hooks = {"Stop": [{"hooks": [mine]}, {"hooks": [theirs]}]}
    settings.write_text(json.dumps({"hooks": hooks}))
    assert rehydrate("install", "claude", "--uninstall").code == 0
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": [{"hooks": [mine]}]}}
