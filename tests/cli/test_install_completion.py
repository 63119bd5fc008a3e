"""`rehydrate completion` (cli/install.py): scripts generated from the parser (every command, its options), one
that bash really completes with, and --install writing where each shell loads it (in the test's own home)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate.cli import COMMANDS


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_script_names_every_command_and_an_option_of_each(shell: str) -> None:
    r = rehydrate("completion", shell)
    assert r.code == 0 and r.err == ""
    for name in COMMANDS:
        assert name in r.out, (shell, name)
    for option in ("--next", "--because", "--grep", "--uninstall"):
        assert option.lstrip("-") in r.out, (shell, option)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_completes_a_command_and_an_option(tmp_path: Path) -> None:
    script = tmp_path / "rehydrate.bash"
    script.write_text(rehydrate("completion", "bash").out)
    probe = (
        f"source {script}; "
        'COMP_WORDS=(rehydrate chec); COMP_CWORD=1; _shtab_rehydrate; echo "${COMPREPLY[@]}"; '
        'COMP_WORDS=(rehydrate checkpoint --ne); COMP_CWORD=2; _shtab_rehydrate; echo "${COMPREPLY[@]}"; '
        'COMP_WORDS=(rehydrate completion f); COMP_CWORD=2; _shtab_rehydrate; echo "${COMPREPLY[@]}"'
    )
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["checkpoint", "--next", "fish"], out


def test_install_writes_where_each_shell_loads_it(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the XDG folders when they are set, else under the home folder, as bash-completion and fish look."""
    for xdg in (True, False):
        if not xdg:
            monkeypatch.delenv("XDG_DATA_HOME")
            monkeypatch.delenv("XDG_CONFIG_HOME")
        data = isolated_home / ("xdg_data_home" if xdg else ".local/share")
        config = isolated_home / ("xdg_config_home" if xdg else ".config")
        for shell, place in (
            ("bash", data / "bash-completion" / "completions" / "rehydrate"),
            ("fish", config / "fish" / "completions" / "rehydrate.fish"),
            ("zsh", isolated_home / ".zfunc" / "_rehydrate"),
        ):
            r = rehydrate("completion", shell, "--install")
            assert r.code == 0 and str(place) in r.out, r
            assert place.read_text() == rehydrate("completion", shell).out
