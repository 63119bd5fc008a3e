"""`rehydrate install HARNESS`: merge rehydrate's hooks into a harness's own configuration, and take them out again.

Installing keeps every other hook, key and setting; installing twice changes nothing. The bytes a file had before the
first install are kept in a record outside the project (`$XDG_STATE_HOME/rehydrate/installs.json`), so that
`--uninstall` puts them back byte for byte when nothing else changed the file since; when something did, only
rehydrate's own entries are taken out.
"""

from __future__ import annotations

import difflib
import json
import os

from rehydrate import fsio, wal
from rehydrate.errors import RehydrateError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HARNESSES = ("claude",)
COMMAND = "rehydrate hook"  # the prefix that marks a hook entry as ours


class Change:
    """One file's bytes before and after (None: the file is absent)."""

    def __init__(self, path: str, old: bytes | None, new: bytes | None, note: str) -> None:
        self.path = path
        self.old = old
        self.new = new
        self.note = note

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        a = (self.old or b"").decode("utf-8", "replace").splitlines(keepends=True)
        b = (self.new or b"").decode("utf-8", "replace").splitlines(keepends=True)
        return "".join(difflib.unified_diff(a, b, self.path + " (before)", self.path + " (after)"))


def _claude_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    def entry(matcher: str, timeout: int) -> list[dict[str, Any]]:
        return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]

    return {
        "SessionStart": entry("startup|resume|clear|compact", 30),
        "PreCompact": entry("manual|auto", 30),
        "PostCompact": entry("manual|auto", 30),
        "PreToolUse": entry("Edit|Write|MultiEdit|NotebookEdit|Bash", 10),
    }


def _ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(hooks, list) or not hooks:
        return False
    return all(isinstance(h, dict) and str(h.get("command", "")).startswith(COMMAND) for h in hooks)


def merge_settings(old: bytes | None, command: str, *, remove: bool = False) -> bytes | None:
    """settings.json with rehydrate's hooks in (or out), every other key and hook kept."""
    try:
        settings = json.loads(old.decode("utf-8")) if old and old.strip() else {}
    except (UnicodeDecodeError, ValueError) as e:
        raise RehydrateError(
            f"the settings file is not valid JSON ({e})", "fix it by hand, then install again"
        ) from None
    if not isinstance(settings, dict):
        raise RehydrateError("the settings file does not hold a JSON object", "fix it by hand, then install again")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise RehydrateError("its `hooks` is not a JSON object", "fix it by hand, then install again")
    for event in list(hooks):
        if isinstance(hooks[event], list):
            hooks[event] = [g for g in hooks[event] if not _ours(g)]
            if not hooks[event]:
                del hooks[event]
    if not remove:
        for event, groups in _claude_hooks(command).items():
            hooks.setdefault(event, []).extend(groups)
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    if not settings and (old is None or not old.strip()):
        return None if old is None else old
    return (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode()


def _record_path() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "rehydrate", "installs.json")


def _load_record() -> dict[str, Any]:
    try:
        data = fsio.read_bytes(_record_path(), 16 << 20)
        record = json.loads(data) if data else {}
    except (RehydrateError, ValueError):
        record = {}
    return record if isinstance(record, dict) else {}


def _save_record(record: dict[str, Any]) -> None:
    path = _record_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fsio.replace(path, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode(), "install.record")


def settings_path(harness: str, project: str, user: bool) -> str:
    if harness != "claude":
        raise UsageError(f"installing for {harness!r} is not built yet", f"available: {', '.join(HARNESSES)}")
    if user:
        base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
        return os.path.join(base, "settings.json")
    return os.path.join(project, ".claude", "settings.json")


def plan(
    harness: str, project: str, *, user: bool = False, uninstall: bool = False, command: str | None = None
) -> Change:
    """What installing (or uninstalling) would do to the harness's settings file."""
    path = settings_path(harness, project, user)
    old = fsio.read_bytes(path, 16 << 20) if os.path.lexists(path) else None
    command = command or f"{COMMAND} {harness}"
    if uninstall:
        kept = _load_record().get(os.path.abspath(path))
        if isinstance(kept, dict) and old is not None and wal.sha256(old) == kept.get("written_sha256"):
            original = kept.get("original")
            restored = None if original is None else original.encode("utf-8", "surrogateescape")
            return Change(path, old, restored, "restored as it was")
        return Change(path, old, merge_settings(old, command, remove=True), "rehydrate's hooks taken out")
    return Change(path, old, merge_settings(old, command), "rehydrate's hooks merged in")


def apply(change: Change, *, uninstall: bool = False) -> None:
    record = _load_record()
    key = os.path.abspath(change.path)
    if change.changed:
        if change.new is None:
            fsio.unlink(change.path)
        else:
            os.makedirs(os.path.dirname(change.path), exist_ok=True)
            fsio.replace(change.path, change.new, "install.settings")
    if uninstall:
        record.pop(key, None)
    else:
        first = record.get(key)
        original = (
            first.get("original")
            if isinstance(first, dict)
            else (None if change.old is None else change.old.decode("utf-8", "surrogateescape"))
        )
        record[key] = {"original": original, "written_sha256": wal.sha256(change.new or b"")}
    _save_record(record)
