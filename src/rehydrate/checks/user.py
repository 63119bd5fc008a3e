"""A user's own checks, named in state/config.json as `module:attr`: run by `rehydrate recover` only, after cursors.

Never on the hook path: importing them costs time, and a config.json that arrived by git pull would run code at every
session start. `recover` imports what the repository's config names: a pulled config.json names code that recover
runs, as a pulled conftest.py is code that pytest runs; REHYDRATE_NO_USER_CHECKS=1 turns them off. What they print
goes to stderr (stdout holds recover's output only). Each entry becomes one check of the ledger:
- an import or lookup error: one `skipped` finding ("could not import mypkg.checks: ModuleNotFoundError");
- a name that is not `module:attr` (store/config.user_checks): `skipped`, saying why;
- an object without `name` and `run`, or whose name is a built-in check's: `failed`;
- a run that raises: `failed` (checks.run_all); a result that is not a list of Findings: `failed`.
"""

from __future__ import annotations

import contextlib
import importlib
import sys

from rehydrate.checks import FAILED, ORDER, SKIPPED, Context, Finding
from rehydrate.store import config as project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from rehydrate.checks import Check

OFF = "REHYDRATE_NO_USER_CHECKS"


class _Broken:
    """A named entry that could not become a check: one finding saying why."""

    def __init__(self, name: str, status: str, message: str) -> None:
        self.name, self.status, self.message = name, status, message

    def run(self, context: Context) -> list[Finding]:
        return [Finding(self.name, self.status, self.message, "fix the entry in state/config.json's checks")]


class _Guarded:
    """A user's check, its results checked: anything but a list of Findings becomes one failed finding."""

    def __init__(self, check: Any) -> None:
        self.check = check
        self.name = str(check.name)

    def run(self, context: Context) -> list[Finding]:
        with _to_stderr():
            found = self.check.run(context)
        if not isinstance(found, list) or not all(isinstance(f, Finding) for f in found):
            return [Finding(self.name, FAILED, f"the check returned {type(found).__name__}, not a list of Findings")]
        return found


def load(config: dict[str, Any], env: Mapping[str, str]) -> list[Check]:
    """The user's checks named in config, in config order (see the module's docstring); none when env sets OFF."""
    if env.get(OFF) == "1":
        return []
    names, refused = project.user_checks(config)
    found: list[Check] = [_Broken("user", SKIPPED, why) for why in refused]
    for entry in names:
        found.append(_one(entry))
    return found


def _one(entry: str) -> Check:
    module, _, attr = entry.partition(":")
    try:
        with _to_stderr():
            target: Any = importlib.import_module(module)
            for part in attr.split("."):
                target = getattr(target, part)
            check = target() if isinstance(target, type) else target
    except Exception as e:
        return _Broken(entry, SKIPPED, f"could not import {entry}: {type(e).__name__}: {e}")
    name = getattr(check, "name", None)
    if not isinstance(name, str) or not callable(getattr(check, "run", None)):
        return _Broken(entry, FAILED, f"{entry} is not a check (it needs a name and a run(context) method)")
    if name in ORDER or name == "user":
        return _Broken(entry, FAILED, f"{entry} is named {name!r}, a built-in check's name")
    return _Guarded(check)


def _to_stderr() -> Any:
    """What a user's check prints (on import, while made or run) goes to stderr: `recover --json`'s stdout holds the
    JSON only (`this:s`, the Zen of Python printed on import, made it unparseable)."""
    return contextlib.redirect_stdout(sys.stderr)
