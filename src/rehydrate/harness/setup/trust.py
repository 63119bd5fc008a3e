"""Will the installed hooks run? Installed, their program found, and the project trusted where the harness asks.

Read-only: it looks at the harness's settings and trust files, never writes them (trusting a project is the user's
decision, made in the harness). What each harness needs, as observed in the real CLIs (see HARNESSES.md):

- Claude Code runs a project's hooks once the folder is trusted (the dialog at the first interactive start; print
  mode `-p` asks nothing); hooks are read when a session starts.
- Codex CLI ignores a project's `.codex/` until the project is trusted (`[projects."<path>"] trust_level =
  "trusted"` in `$CODEX_HOME/config.toml`), then skips each new or changed hook, without a message, until it is
  trusted in `/hooks` (recorded as `[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash`). The hash is
  Codex's own: a recorded one may be stale if the hook changed since, which only Codex's `/hooks` can tell.
- Gemini CLI refuses an untrusted folder in `-p` mode (exit 55) and asks in the interactive one; trusted folders are
  in `~/.gemini/trustedFolders.json` (`GEMINI_CLI_TRUSTED_FOLDERS_PATH`). New project hooks are announced once.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys

from rehydrate import harness as registry
from rehydrate.errors import RehydrateError
from rehydrate.harness.setup import files, settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class TrustReport:
    """The answer to one question about the hooks (a result, not a check to run: checks.Check is the protocol of
    those): ok True (yes), False (no: they will not run) or None (cannot tell from here)."""

    def __init__(self, name: str, ok: bool | None, detail: str, fix: str | None = None) -> None:
        self.name = name
        self.ok = ok
        self.detail = detail
        self.fix = fix

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def read_capped(path: str) -> bytes | None:
    """A user's settings file as install reads it: links (dotfiles) followed onto the user's own files."""
    try:
        return files.read(files.in_home(path), 16 << 20)
    except (OSError, RehydrateError):
        return None


def _codex_config_path() -> str:
    return os.path.join(registry.get("codex").home(), "config.toml")


def _gemini_trust_file() -> str:
    trusted = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    return trusted or os.path.join(registry.get("gemini").home(), "trustedFolders.json")


def _same_path(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b) or os.path.realpath(a) == os.path.realpath(b)


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# ------------------------------------------------------------------------------------------------ the checks


def _loaded(path: str, comments: bool) -> tuple[dict[str, Any], str | None]:
    """A settings file read (capped) and parsed: {} when it is not there, and the error when it does not parse."""
    data = read_capped(path)
    if data is None:
        return {}, None
    try:
        return settings.load_json(data, comments=comments), None
    except RehydrateError as e:
        return {}, e.message


def _hooks_of(path: str, comments: bool) -> tuple[object, str | None]:
    """The `hooks` value of a settings file, or None; and the error when it does not parse."""
    loaded, error = _loaded(path, comments)
    return loaded.get("hooks"), error


def our_hooks(path: str, comments: bool, is_ours: Any) -> tuple[list[tuple[str, int, int, str]], str | None]:
    """Our hook commands in a settings file: (event, group index, handler index, command); or an error."""
    hooks, error = _hooks_of(path, comments)
    found = []
    if isinstance(hooks, dict):
        for event, groups in hooks.items():
            for gi, group in enumerate(groups if isinstance(groups, list) else []):
                handlers = group.get("hooks") if isinstance(group, dict) else None
                for hi, h in enumerate(handlers if isinstance(handlers, list) else []):
                    if isinstance(h, dict) and is_ours(h.get("command", "")):
                        found.append((str(event), gi, hi, str(h["command"])))
    return found, error


def flat_hooks(path: str, key: str) -> tuple[list[tuple[str, int, int, str]], str | None]:
    """rehydrate's commands (under `key` in each entry) in a hooks file of flat entries: (event, entry index, 0,
    command); or an error."""
    hooks, error = _hooks_of(path, comments=False)
    found = []
    for event, entries in hooks.items() if isinstance(hooks, dict) else ():
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            command = entry.get(key) if isinstance(entry, dict) else None
            if isinstance(command, str) and settings.is_our_command(command):
                found.append((str(event), i, 0, command))
    return found, error


def wrapped_hooks(path: str) -> list[str]:
    """The hook commands in a settings file (any harness's shape: a "command", "bash" or "powershell" string anywhere
    under `hooks`) that run `rehydrate hook` among other things."""
    loaded, _ = _loaded(path, comments=True)
    found: list[str] = []

    def walk(node: Any, depth: int = 0) -> None:
        if depth > 8:
            return
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("command", "bash", "powershell") and isinstance(value, str):
                    ours = settings.is_our_powershell if key == "powershell" else settings.is_our_command
                    if settings.mentions_our_command(value) and not ours(value):
                        found.append(value)
                else:
                    walk(value, depth + 1)
        elif isinstance(node, list):
            for item in node:
                walk(item, depth + 1)

    walk(loaded.get("hooks"))
    return found


def command_check(commands: list[str]) -> TrustReport:
    """Each hook's program exists and a harness started outside any virtual environment will find it."""
    for command in dict.fromkeys(commands):
        argv0 = shlex.split(command)[0]
        if os.sep in argv0:
            if not (os.path.isfile(argv0) and os.access(argv0, os.X_OK)):
                return TrustReport(
                    "command",
                    False,
                    f"the hooks run {argv0}, which is not there (moved or deleted)",
                    "run `rehydrate install` again from the rehydrate you use",
                )
            continue
        found = shutil.which(argv0)
        if not found:
            return TrustReport(
                "command",
                False,
                f"the hooks run a bare `{argv0}`, which is not on the PATH",
                "install rehydrate where every shell finds it (`pipx install .` in a clone), or run "
                "`rehydrate install` from your virtual environment to write its full path",
            )
        venv_bin = os.path.dirname(os.path.abspath(sys.executable))
        in_venv = sys.prefix != sys.base_prefix
        if in_venv and _same_path(os.path.dirname(found), venv_bin):
            return TrustReport(
                "command",
                False,
                f"the hooks run a bare `{argv0}`, found only in this virtual environment's bin folder ({found}); "
                "a harness started outside it will not find it",
                "run `rehydrate install` again (it writes the full path), or install rehydrate with pipx",
            )
    return TrustReport("command", True, "the hooks' program is found: " + ", ".join(sorted(set(commands))))


def codex_project(project: str) -> TrustReport:
    path = _codex_config_path()
    fix = (
        f"start `codex` in {project} and answer the trust prompt, or run `codex exec --trust ...` once, or add "
        f'[projects."{project}"] trust_level = "trusted" to {path}'
    )
    config = _codex_config(path)
    if isinstance(config, str):
        return TrustReport("project trusted", False, f"{path} cannot be read: {config}", "fix it, then check again")
    projects = config.get("projects")
    for key, value in projects.items() if isinstance(projects, dict) else []:
        if _same_path(str(key), project) and isinstance(value, dict):
            level = value.get("trust_level")
            if level == "trusted":
                return TrustReport("project trusted", True, f"Codex trusts {project} ({path})")
            return TrustReport(
                "project trusted", False, f"Codex has {project} as trust_level = {level!r} ({path})", fix
            )
    return TrustReport("project trusted", False, f"Codex has not trusted {project}: it ignores its .codex/ folder", fix)


def _codex_config(path: str) -> dict[str, Any] | str:
    data = read_capped(path)
    if data is None:
        return {}
    try:
        return settings.parse_toml(data.decode("utf-8", "replace"))
    except RehydrateError as e:
        return e.message


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def codex_hooks(hooks_file: str, found: list[tuple[str, int, int, str]]) -> TrustReport:
    path = _codex_config_path()
    config = _codex_config(path)
    state = config.get("hooks", {}).get("state", {}) if isinstance(config, dict) else {}
    state = state if isinstance(state, dict) else {}
    fix = (
        "start `codex` in the project, open `/hooks` and trust each rehydrate hook (Codex skips an untrusted "
        "hook without a message; editing a hook, even by reinstalling with another command, untrusts it)"
    )
    untrusted = []
    for event, gi, hi, _command in found:
        keys = {f"{p}:{_snake(event)}:{gi}:{hi}" for p in (os.path.abspath(hooks_file), os.path.realpath(hooks_file))}
        entry = next((state[k] for k in keys if isinstance(state.get(k), dict)), None)
        if not (entry and entry.get("trusted_hash")):
            untrusted.append(event)
    if untrusted:
        return TrustReport("hooks trusted", False, "Codex has not trusted the hooks for " + ", ".join(untrusted), fix)
    return TrustReport(
        "hooks trusted",
        True,
        f"Codex has a trusted hash for each hook ({path}); if they changed since, `/hooks` shows them untrusted",
    )


def gemini_folder(project: str) -> TrustReport:
    user_settings = os.path.join(registry.get("gemini").home(), "settings.json")
    try:
        loaded = settings.load_json(read_capped(user_settings), comments=True)
    except RehydrateError:
        loaded = {}
    security = loaded.get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return TrustReport("project trusted", True, f"folder trust is off in {user_settings}")
    path = _gemini_trust_file()
    fix = (
        f"start `gemini` in {project} and choose to trust the folder, or add "
        f'"{project}": "TRUST_FOLDER" to {path} (in -p mode Gemini refuses an untrusted folder)'
    )
    try:
        rules = settings.load_json(read_capped(path), comments=True)
    except RehydrateError as e:
        return TrustReport("project trusted", False, f"{path} cannot be read: {e.message}", "fix it, then check again")
    best, level = -1, None
    for rule, value in rules.items():
        folder = os.path.dirname(rule) if value == "TRUST_PARENT" else rule
        if _inside(project, folder) and len(rule) > best:
            best, level = len(rule), value
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return TrustReport("project trusted", True, f"Gemini trusts {project} ({path})")
    if level == "DO_NOT_TRUST":
        return TrustReport("project trusted", False, f"Gemini is told not to trust {project} ({path})", fix)
    return TrustReport("project trusted", False, f"Gemini has not trusted {project}", fix)


def copilot_folder(project: str) -> TrustReport:
    """Copilot CLI runs a repository's hooks in `-p` mode only in a trusted folder (`trustedFolders` in
    $COPILOT_HOME/config.json, `--trust-folder`, or COPILOT_ALLOW_ALL=true); the interactive CLI asks."""
    path = os.path.join(registry.get("copilot").home(), "config.json")
    fix = (
        f'start `copilot` in {project} and trust the folder, or add {project!r} to "trustedFolders" in {path} '
        "(in -p mode, Copilot skips an untrusted folder's hooks without a word; `--trust-folder` trusts it for one run)"
    )
    try:
        loaded = settings.load_json(read_capped(path), comments=True)
    except RehydrateError as e:
        return TrustReport("project trusted", False, f"{path} cannot be read: {e.message}", "fix it, then check again")
    folders = loaded.get("trustedFolders")
    if isinstance(folders, list) and any(isinstance(f, str) and _inside(project, f) for f in folders):
        return TrustReport("project trusted", True, f"Copilot trusts {project} ({path})")
    return TrustReport("project trusted", False, f"Copilot has not trusted {project}", fix)


def claude_note() -> TrustReport:
    return TrustReport(
        "project trusted",
        None,
        "Claude Code asks once, at the first interactive start in a folder, whether to trust it (print mode asks "
        "nothing); rehydrate cannot see the answer",
        "start `claude` in the project once and accept the trust dialog; start a new session after installing",
    )
