"""`rehydrate install HARNESS`: merge rehydrate into a harness's own files, and take it out again.

Each harness is a list of targets, each one file and a way to merge into it: hooks in a JSON settings file, a marked
block in an instructions file, or a file rehydrate owns whole. Installing keeps every other hook, key, setting and
line; installing twice changes nothing. The bytes a file had before the first install are kept in a record outside
the project (`$XDG_STATE_HOME/rehydrate/installs.json`), so that `--uninstall` puts them back byte for byte when
nothing else changed the file since; when something did, only rehydrate's own part is taken out.

A project's files are written only inside the project, a user's only into their own files and folders (see
`harness/files.py` for the symbolic links followed and those refused), each keeping its mode. Every file is read,
parsed and checked before the first byte is written: a refusal writes nothing.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import sys
import sysconfig

from rehydrate import rules, safejson
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.harness import files, settings, trust
from rehydrate.store import wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

COMMAND = "rehydrate hook"  # the bare command; an entry whose program is any `rehydrate` running `hook` is ours
MAX_FILE = 16 << 20

CURSOR_RULE = """---
description: Working state kept on disk by rehydrate; read it before acting and after any compaction
alwaysApply: true
---
{block}"""


class Change:
    """One file's bytes before and after (None: the file is absent)."""

    def __init__(self, place: files.Place, old: bytes | None, new: bytes | None, note: str) -> None:
        self.place = place
        self.path = place.path  # as the user names it; place.real is the file written
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


# ------------------------------------------------------------------------------------------------ merges


def _is_our_command(command: object) -> bool:
    """`rehydrate hook ...`, with the program named bare or by a path (quoted or not)."""
    try:
        argv = shlex.split(str(command))
    except ValueError:
        return False
    return len(argv) >= 2 and os.path.basename(argv[0]) == "rehydrate" and argv[1] == "hook"


def _ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(hooks, list) or not hooks:
        return False
    return all(isinstance(h, dict) and _is_our_command(h.get("command", "")) for h in hooks)


# ------------------------------------------------------------------------------------------------ the program


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


def _load_json(old: bytes | None, comments: bool = False) -> dict[str, Any]:
    return settings.load_json(old, comments=comments)


def _dump_json(data: dict[str, Any], old: bytes | None, comments: bool = False) -> bytes | None:
    return settings.dump_json(data, old, comments=comments)


def merge_hooks(
    old: bytes | None, events: dict[str, list[dict[str, Any]]], *, remove: bool, comments: bool = False
) -> bytes | None:
    """A settings file with rehydrate's hook groups in (or out), every other key and hook kept (comments too, where
    the harness allows them and the change is a new `hooks` key)."""
    data = _load_json(old, comments)
    before = _load_json(old, comments)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise RehydrateError("its `hooks` is not a JSON object", "fix it by hand, then install again")
    for event in list(hooks):
        if isinstance(hooks[event], list):
            hooks[event] = [g for g in hooks[event] if not _ours(g)]
            if not hooks[event]:
                del hooks[event]
    if not remove:
        for event, groups in events.items():
            hooks.setdefault(event, []).extend(groups)
    if hooks:
        data["hooks"] = hooks
    else:
        data.pop("hooks", None)
    if data == before:
        return old  # nothing to do: the user's formatting stays, byte for byte
    return _dump_json(data, old, comments)


def merge_block(old: bytes | None, block: str, *, remove: bool) -> bytes | None:
    """An instructions file with the boot rule's marked block in (updated in place) or out."""
    text = (old or b"").decode("utf-8", "surrogateescape")
    if not remove:
        return rules.merge(text, block).encode("utf-8", "surrogateescape")
    start = text.find(rules.BEGIN_PREFIX)
    end = text.find(rules.END, start + 1) if start >= 0 else -1
    if start < 0 or end < 0:
        return old
    after = end + len(rules.END)
    after += 1 if text[after : after + 1] == "\n" else 0
    before = text[:start]
    if before.endswith("\n\n"):
        before = before[:-1]
    rest = before + text[after:]
    if not rest.strip() and old is not None:
        return None  # the file held nothing but the block: it was ours
    return rest.encode("utf-8", "surrogateescape")


def merge_owned(old: bytes | None, content: str, *, remove: bool) -> bytes | None:
    """A file rehydrate owns whole."""
    return None if remove else content.encode()


# ------------------------------------------------------------------------------------------------ harnesses


def _hook_group(matcher: str, command: str, timeout: int) -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]


def claude_events(command: str) -> dict[str, list[dict[str, Any]]]:
    return {
        "SessionStart": _hook_group("startup|resume|clear|compact", command, 30),
        "PreCompact": _hook_group("manual|auto", command, 30),
        "PostCompact": _hook_group("manual|auto", command, 30),
        "PreToolUse": _hook_group("Edit|Write|MultiEdit|NotebookEdit|Bash", command, 10),
        "Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}],  # never blocks
    }


def codex_events(command: str) -> dict[str, list[dict[str, Any]]]:
    return {
        "SessionStart": _hook_group("startup|resume|clear|compact", command, 30),
        "PreCompact": _hook_group("manual|auto", command, 30),
        "PreToolUse": _hook_group("Bash|apply_patch", command, 10),
    }


def gemini_events(command: str) -> dict[str, list[dict[str, Any]]]:
    """Gemini CLI: timeouts in milliseconds; a lifecycle matcher matches one exact value, so none is given."""

    def group(timeout_ms: int, matcher: str | None = None) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout_ms}]}
        if matcher:
            entry = {"matcher": matcher, **entry}
        return [entry]

    return {
        "SessionStart": group(30000),
        "PreCompress": group(30000),
        "BeforeAgent": group(30000),
        "BeforeTool": group(10000, "write_file|replace|run_shell_command"),
    }


Target = tuple[str, "Callable[[bytes | None, bool], bytes | None]", str]  # path, merge(old, remove), what


def targets(harness: str, project: str, state_rel: str, user: bool, prog: Program | None = None) -> list[Target]:
    """The files a harness's install touches, and how (hooks run `prog`, by default this installation's)."""
    home = os.path.expanduser("~")
    block = rules.block(state_rel)
    prog = prog or program()
    if harness == "claude":
        base = (os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")) if user else None
        path = os.path.join(base, "settings.json") if base else os.path.join(project, ".claude", "settings.json")
        events = claude_events(prog.shell("hook", "claude"))
        return [(path, lambda old, rm: merge_hooks(old, events, remove=rm), "hooks")]
    if harness == "codex":
        base = (os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")) if user else None
        path = os.path.join(base or os.path.join(project, ".codex"), "hooks.json")
        codex = codex_events(prog.shell("hook", "codex"))
        out: list[Target] = [(path, lambda old, rm: merge_hooks(old, codex, remove=rm), "hooks")]
        if not user:
            agents = os.path.join(project, "AGENTS.md")
            out.append((agents, lambda old, rm: merge_block(old, block, remove=rm), "boot rule"))
        return out
    if harness == "gemini":
        base = os.path.join(home, ".gemini") if user else os.path.join(project, ".gemini")
        gemini = gemini_events(prog.shell("hook", "gemini"))
        out = [
            (
                os.path.join(base, "settings.json"),
                lambda old, rm: merge_hooks(old, gemini, remove=rm, comments=True),
                "hooks",
            )
        ]
        if not user:
            rule = os.path.join(project, "GEMINI.md")
            out.append((rule, lambda old, rm: merge_block(old, block, remove=rm), "boot rule"))
        return out
    if harness == "mcp":
        if user:
            raise UsageError("--user is not available for mcp", "install it into the project instead")
        return [
            (
                os.path.join(project, ".mcp.json"),
                lambda old, rm: merge_mcp_json(old, remove=rm, command=prog.argv0),
                "MCP server",
            ),
            (
                os.path.join(project, ".codex", "config.toml"),
                lambda old, rm: merge_mcp_toml(old, remove=rm, command=prog.argv0),
                "MCP server",
            ),
            (
                os.path.join(project, ".gemini", "settings.json"),
                lambda old, rm: merge_mcp_json(old, remove=rm, command=prog.argv0, comments=True),
                "MCP server",
            ),
        ]
    if user:
        raise UsageError(f"--user is not available for {harness}", "install it into the project instead")
    if harness == "cursor":
        path = os.path.join(project, ".cursor", "rules", "rehydrate.mdc")
        return [(path, lambda old, rm: merge_owned(old, CURSOR_RULE.format(block=block), remove=rm), "rule")]
    if harness == "copilot":
        path = os.path.join(project, ".github", "copilot-instructions.md")
        return [(path, lambda old, rm: merge_block(old, block, remove=rm), "boot rule")]
    raise UsageError(f"installing for {harness!r} is not built yet", f"available: {', '.join(HARNESSES)}")


HARNESSES = ("claude", "codex", "gemini", "cursor", "copilot", "mcp")
RUNS_PROGRAM = ("claude", "codex", "gemini", "mcp")
HOOK_HARNESSES = trust.HOOK_HARNESSES  # the harnesses whose files name the `rehydrate` program


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


MCP_SERVER = {"command": "rehydrate", "args": ["mcp"]}
TOML_BEGIN = "# rehydrate:begin (managed by rehydrate; edits inside this block are replaced)"
TOML_END = "# rehydrate:end"


def merge_mcp_json(
    old: bytes | None, *, remove: bool, command: str = "rehydrate", comments: bool = False
) -> bytes | None:
    """`mcpServers.rehydrate` in a JSON file (.mcp.json, Gemini's settings.json), the rest kept."""
    data = _load_json(old, comments)
    before = _load_json(old, comments)
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise RehydrateError("its `mcpServers` is not a JSON object", "fix it by hand, then install again")
    servers.pop("rehydrate", None)
    if not remove:
        servers["rehydrate"] = {**MCP_SERVER, "command": command}
    if servers:
        data["mcpServers"] = servers
    else:
        data.pop("mcpServers", None)
    if remove and not data and old is not None:
        return None  # it held nothing but rehydrate's server
    if data == before:
        return old  # nothing to do: the user's formatting stays, byte for byte
    return _dump_json(data, old, comments)


def _our_server(table: Any) -> bool:
    """A `[mcp_servers.rehydrate]` that an install wrote: only a command naming a `rehydrate` and `args = ["mcp"]`."""
    return (
        isinstance(table, dict)
        and set(table) == {"command", "args"}
        and os.path.basename(str(table["command"])) == "rehydrate"
        and table["args"] == ["mcp"]
    )


def merge_mcp_toml(old: bytes | None, *, remove: bool, command: str = "rehydrate") -> bytes | None:
    """`[mcp_servers.rehydrate]` in Codex's config.toml, edited through tomlkit (an inline `mcp_servers = {...}`
    gets an inline entry); a marked block an older install appended is taken out first."""
    text = (old or b"").decode("utf-8", "surrogateescape")
    start = text.find(TOML_BEGIN)
    end = text.find(TOML_END, start + 1) if start >= 0 else -1
    if start >= 0 and end >= 0:  # written by an older install as a marked block: ours, taken out as text
        after = end + len(TOML_END)
        after += 1 if text[after : after + 1] == "\n" else 0
        text = text[:start].rstrip("\n") + ("\n" if text[:start].strip() else "") + text[after:]
    rest = None if old is None or (not text.strip() and start >= 0) else text.encode("utf-8", "surrogateescape")
    value = None if remove else {"command": command, "args": ["mcp"]}
    return settings.merge_toml_table(rest, "mcp_servers", "rehydrate", value, ours=_our_server)


def check_parses(path: str, data: bytes | None) -> None:
    """RehydrateError unless the file as install would write it parses as its harness will parse it."""
    if data is None:
        return
    if path.endswith(".toml"):
        settings.check_toml(data)
    elif path.endswith(".json"):
        gemini = os.path.basename(os.path.dirname(path)) == ".gemini"
        settings.check_json(data, comments=gemini)


# ------------------------------------------------------------------------------------------------ plan and apply


def _record_path() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "rehydrate", "installs.json")


_RECORD_HINT = (
    "it keeps the bytes your files had before rehydrate was installed, so that uninstalling restores them exactly: "
    "fix it, or move it away (uninstalling then takes out only rehydrate's own parts), then run the command again"
)


def _load_record() -> dict[str, Any]:
    """The install record; RehydrateError naming it when it cannot be read (never silently replaced by a new one)."""
    path = _record_path()
    try:
        data = files.read(files.in_home(path), MAX_FILE)
        record = safejson.loads(data) if data and data.strip() else {}
    except RehydrateError as e:
        raise RehydrateError(f"the install record {path} cannot be used: {e.message}", _RECORD_HINT) from None
    except (UnicodeDecodeError, ValueError) as e:
        raise RehydrateError(f"the install record {path} is not valid JSON ({e})", _RECORD_HINT) from None
    if not isinstance(record, dict):
        raise RehydrateError(f"the install record {path} does not hold a JSON object", _RECORD_HINT)
    return record


def _save_record(record: dict[str, Any]) -> None:
    data = (json.dumps(record, indent=2, sort_keys=True) + "\n").encode()
    # it holds copies of settings files, which may hold secrets: a new record is readable by its owner only
    files.write(files.in_home(_record_path()), data, "install.record", new_mode=0o600)


def _place(path: str, project: str, user: bool, state_rel: str) -> files.Place:
    return files.in_home(path) if user else files.in_project(path, project, keep_out=(state_rel,))


def preflight(
    harnesses: tuple[str, ...] | list[str],
    project: str,
    *,
    user: bool = False,
    uninstall: bool = False,
    state_rel: str = "state",
) -> None:
    """Plan every harness before applying any: a refusal of the last one leaves the first ones unwritten too."""
    prog = program()
    for harness in harnesses:
        plan(harness, project, user=user, uninstall=uninstall, state_rel=state_rel, prog=prog)


def plan(
    harness: str,
    project: str,
    *,
    user: bool = False,
    uninstall: bool = False,
    state_rel: str = "state",
    prog: Program | None = None,
) -> list[Change]:
    """What installing (or uninstalling) would do to each of the harness's files. Writes nothing."""
    record = _load_record()
    changes = []
    for path, merge, what in targets(harness, project, state_rel, user, prog):
        place = _place(path, project, user, state_rel)
        try:
            old = files.read(place, MAX_FILE)
            if uninstall:
                kept = record.get(os.path.abspath(path))
                if isinstance(kept, dict) and old is not None and wal.sha256(old) == kept.get("written_sha256"):
                    original = kept.get("original")
                    restored = None if original is None else str(original).encode("utf-8", "surrogateescape")
                    note = "restored as it was before the install"
                    changes.append(Change(place, old, restored, note + place.through))
                    continue
                change = Change(place, old, merge(old, True), f"rehydrate's {what} taken out{place.through}")
            else:
                change = Change(place, old, merge(old, False), f"rehydrate's {what} merged in{place.through}")
            if change.changed:
                try:
                    check_parses(path, change.new)
                except RehydrateError as e:
                    raise RehydrateError(
                        f"the result would not parse ({e.message}); nothing was written", "report this as a bug"
                    ) from None
                if settings.has_comments(old) and not settings.has_comments(change.new):
                    change.note += " (its comments could not be kept; uninstall puts them back)"
            changes.append(change)
        except RehydrateError as e:
            raise type(e)(f"{path}: {e.message}", e.hint) from None
    return changes


def apply(changes: list[Change], *, uninstall: bool = False) -> None:
    record = _load_record()
    for change in changes:
        key = os.path.abspath(change.path)
        first = record.get(key)
        created: list[str] = list(first.get("created_folders", [])) if isinstance(first, dict) else []
        if change.changed:
            if change.new is None:
                files.remove(change.place)
            else:
                created += files.write(change.place, change.new, "install.file")
        if uninstall:
            record.pop(key, None)
            if change.new is None:
                for folder in reversed(created):  # the folders the install made, if nothing else is in them now
                    try:
                        os.rmdir(folder)
                    except OSError:
                        break
        else:
            if isinstance(first, dict):
                original = first.get("original")
            else:
                original = None if change.old is None else change.old.decode("utf-8", "surrogateescape")
            record[key] = {
                "original": original,
                "written_sha256": wal.sha256(change.new or b""),
                "created_folders": created,
            }
    _save_record(record)


# ------------------------------------------------------------------------------------------------ will the hooks run


def check(harness: str, project: str, *, user: bool = False, state_rel: str = "state") -> list[trust.Check]:
    """Whether the harness will run rehydrate's hooks: installed, their program found, the project trusted.

    Reads only. A check that fails names what to do; one rehydrate cannot see from outside the harness is None.
    """
    if harness not in trust.HOOK_HARNESSES:
        raise UsageError(
            f"there are no hooks to check for {harness}", f"check one of: {', '.join(trust.HOOK_HARNESSES)}"
        )
    project = os.path.abspath(project)
    path = targets(harness, project, state_rel, user, Program(None, True, None))[0][0]
    expected = {"claude": claude_events, "codex": codex_events, "gemini": gemini_events}[harness](COMMAND)
    found, error = trust.our_hooks(path, harness == "gemini", _is_our_command)
    scope = "--user " if user else ""
    if error:
        return [trust.Check("installed", False, f"{path}: {error}", "fix it by hand, then install again")]
    missing = sorted(set(expected) - {event for event, *_ in found})
    if not found or missing:
        what = "no rehydrate hooks" if not found else "no rehydrate hook for " + ", ".join(missing)
        return [trust.Check("installed", False, f"{path} has {what}", f"run `rehydrate install {scope}{harness}`")]
    out = [trust.Check("installed", True, f"{len(found)} rehydrate hooks in {path}")]
    out.append(trust.command_check([command for *_, command in found]))
    if harness == "codex":
        if not user:
            out.append(trust.codex_project(project))
        out.append(trust.codex_hooks(path, found))
    elif harness == "gemini":
        out.append(trust.gemini_folder(project))
    else:
        out.append(trust.claude_note())
    return out


def will_run(checks: list[trust.Check]) -> bool:
    return all(c.ok is not False for c in checks)
