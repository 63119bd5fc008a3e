"""state/config.json: the project's switches, read once per command and untrusted (it arrived by git pull).

`read(root)` gives the object or {} (the defaults) when the file is absent, unreadable, not a regular file, too large
or not a JSON object; it never follows a symlink nor blocks on a FIFO (fsio). The accessors below validate one key
each and fall back to its default on any other value, so that a pulled config can neither crash a command nor push a
bound out of range: `gh_timeout` (seconds, clamped), `user_checks` (the `module:attr` names `recover` imports).
Keys read elsewhere: guard, block_on_error, stop_reminder_after (harness), capture, capture_user
(harness/compaction/capture).
"""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.fs import read as fsio  # (reads only: a per-call hook never loads the write path)
from rehydrate.store import WORDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG = "config.json"
MAX_CONFIG = 64 << 10  # a few keys; a larger file is ignored (defaults apply)
GH_TIMEOUT, GH_TIMEOUT_MIN, GH_TIMEOUT_MAX = 8.0, 1.0, 60.0  # seconds `gh` may take in `recover`
MAX_USER_CHECKS = 8


def read(root: str) -> dict[str, Any]:
    """state/config.json as an object, or {} (see the module's docstring). root: the state folder."""
    try:
        data = fsio.read_bytes(os.path.join(root, CONFIG), MAX_CONFIG, WORDS)
        value = safejson.loads(data) if data else {}
    except (RehydrateError, OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def gh_timeout(config: dict[str, Any]) -> float:
    """config["gh_timeout"] in seconds, clamped to [1, 60]; 8 when absent or not a finite number."""
    value = config.get("gh_timeout")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return GH_TIMEOUT
    if value >= GH_TIMEOUT_MAX:  # infinity too
        return GH_TIMEOUT_MAX
    if value >= GH_TIMEOUT_MIN:
        return float(value)
    return GH_TIMEOUT_MIN if value < GH_TIMEOUT_MIN else GH_TIMEOUT  # NaN: no comparison holds


def user_checks(config: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The user's checks named in config["checks"]: (names to import, in config order, at most MAX_USER_CHECKS;
    entries refused, each with why). A name is `module:attr`, both dotted identifiers; anything else is refused, so
    that a pulled config names code to import, never a path or an expression."""
    value = config.get("checks")
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], ["config.json's checks is not a list of module:attr names"]
    names: list[str] = []
    refused: list[str] = []
    for entry in value:
        if not isinstance(entry, str) or not _is_name(entry):
            refused.append(f"{str(entry)[:80]!r} is not a module:attr name")
        elif len(names) >= MAX_USER_CHECKS:
            refused.append(f"{entry}: more than {MAX_USER_CHECKS} user checks, not run")
        else:
            names.append(entry)
    return names, refused


def _is_name(entry: str) -> bool:
    module, sep, attr = entry.partition(":")
    if not sep or len(entry) > 200:
        return False
    parts = [*module.split("."), *attr.split(".")]
    return all(p.isidentifier() and p.isascii() for p in parts)
