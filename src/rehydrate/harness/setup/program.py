"""Which `rehydrate` a harness will start: this installation's script, by its bare name when the PATH finds it from
anywhere, else by its absolute path, and what the user should know when neither is sure to work."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig


class Program:
    """How a harness will start this installation's `rehydrate`: the bare name when the PATH finds it there from
    anywhere, else its absolute path; `warning` says what the user must do when neither is sure to work."""

    def __init__(self, path: str | None, bare: bool, warning: str | None) -> None:
        self.path = path  # this installation's script, if one was found
        self.bare = bare
        self.warning = warning

    @property
    def argv0(self) -> str:
        return "rehydrate" if self.bare or self.path is None else self.path

    def shell(self, *args: str) -> str:
        """A command line for a harness that runs hooks through the shell."""
        return " ".join([shlex.quote(self.argv0), *args])

    def powershell(self, *args: str) -> str:
        """The same command line for PowerShell: a path is a quoted string, run with the call operator `&`."""
        if self.argv0 == "rehydrate":
            return " ".join(["rehydrate", *args])
        return " ".join(["&", "'" + self.argv0.replace("'", "''") + "'", *args])


def _own_scripts() -> list[str]:
    """Where this installation's `rehydrate` script may be (the first that exists is it)."""
    found = []
    if os.path.basename(sys.argv[0] or "") == "rehydrate":
        found.append(os.path.abspath(sys.argv[0]))
    found.append(os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "rehydrate"))
    for scheme in (None, f"{os.name}_user"):
        try:
            folder = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if folder:
            found.append(os.path.join(folder, "rehydrate"))
    return found


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def program() -> Program:
    """This installation's `rehydrate`, and whether a harness started anywhere will find it by its bare name.

    A bare name is written only when the PATH finds this very script, and not through the bin folder of an active
    virtual environment (a harness started outside the environment would not have that folder on its PATH).
    """
    own = next((p for p in _own_scripts() if _runnable(p)), None)
    found = shutil.which("rehydrate")
    if own is None:
        if found:
            return Program(
                None,
                True,
                f"this rehydrate has no `rehydrate` script of its own; the hooks will run {found}, another "
                "installation: install rehydrate where that one is (or uninstall it), then run install again",
            )
        return Program(
            None,
            True,
            "no `rehydrate` program is on the PATH, so the hooks would fail: install rehydrate with pipx "
            "(`pipx install .` in a clone) or into a folder on your PATH, then run install again",
        )
    if found and _same(found, own):
        venv_bin = os.path.dirname(os.path.abspath(sys.executable))
        in_venv = sys.prefix != sys.base_prefix or bool(os.environ.get("VIRTUAL_ENV"))
        if not (in_venv and _same(os.path.dirname(os.path.abspath(found)), venv_bin)):
            return Program(own, True, None)
    return Program(own, False, None)


def program_note(prog: Program) -> str | None:
    """What the user should know about the program the hooks run, or None when the bare name is sure to work."""
    if prog.warning:
        return prog.warning
    if prog.bare:
        return None
    return (
        f"the hooks run {prog.argv0} by its full path: a harness started outside this virtual environment would not "
        "find a bare `rehydrate` on its PATH. The path is this machine's: before committing the files, install "
        "rehydrate where every shell finds it (`pipx install .` in a clone) and run install again from there"
    )
