"""`rehydrate install HARNESS`: merge rehydrate into a harness's own files, and take it out again.

Each harness is a list of targets, each one file and a way to merge into it: hooks in a JSON settings file, a marked
block in an instructions file, or a file rehydrate owns whole. Installing keeps every other hook, key, setting and
line; installing twice changes nothing. The bytes a file had before the first install are kept in a record outside
the project (`$XDG_STATE_HOME/rehydrate/installs.json`), so that `--uninstall` puts them back byte for byte when
nothing else changed the file since; when something did, only rehydrate's own part is taken out.

A project's files are written only inside the project, a user's only into their own files and folders (see
`harness/setup/files.py` for the symbolic links followed and those refused), each keeping its mode. Every file is read,
parsed and checked before the first byte is written: a refusal writes nothing.
"""

from __future__ import annotations

import difflib
import json
import os

from rehydrate import harness as registry
from rehydrate import safejson
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.harness.setup import files, settings, trust
from rehydrate.harness.setup.program import Program, program
from rehydrate.store.wal import record as wal
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Target = tuple[str, Callable[[bytes | None, bool], bytes | None], str]  # path, merge(old, remove), what

MAX_FILE = 16 << 20


class Change:
    """One file's bytes before and after (None: the file is absent)."""

    def __init__(self, place: files.Place, old: bytes | None, new: bytes | None, note: str) -> None:
        self.place = place
        self.path = place.path  # as the user names it; place.real is the file written
        self.old = old
        self.new = new
        self.note = note
        # the file as it would be without rehydrate's part: what uninstall restores. Not always `old`: init
        # writes the boot rule before any install, and a file rehydrate created holds nothing else (None)
        self.base = old

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        a = (self.old or b"").decode("utf-8", "replace").splitlines(keepends=True)
        b = (self.new or b"").decode("utf-8", "replace").splitlines(keepends=True)
        return "".join(difflib.unified_diff(a, b, self.path + " (before)", self.path + " (after)"))


def targets(name: str, project: str, state_rel: str, user: bool, prog: Program | None = None) -> list[Target]:
    """The files a harness's install touches, and how (hooks run `prog`, by default this installation's)."""
    if name not in registry.TARGETS:
        raise UsageError(f"installing for {name!r} is not built yet", f"available: {', '.join(registry.TARGETS)}")
    targets: list[Target] = registry.installer(name).targets(project, state_rel, user, prog or program())
    return targets


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
                change.base = merge(old, True)
            if change.changed:
                try:
                    settings.check_parses(path, change.new)
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
    # taken out last-in first-out: a folder one install made and another's file went into empties in that order
    for change in reversed(changes) if uninstall else changes:
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
                original = None if change.base is None else change.base.decode("utf-8", "surrogateescape")
            record[key] = {
                "original": original,
                "written_sha256": wal.sha256(change.new or b""),
                "created_folders": created,
            }
    _save_record(record)


# ------------------------------------------------------------------------------------------------ will the hooks run


def check(harness_name: str, project: str, *, user: bool = False, state_rel: str = "state") -> list[trust.TrustReport]:
    """Whether the harness will run rehydrate's hooks: installed, their program found, the project trusted.

    Reads only. A check that fails names what to do; one rehydrate cannot see from outside the harness is None.
    """
    if harness_name not in registry.HOOKS:
        raise UsageError(
            f"there are no hooks to check for {harness_name}", f"check one of: {', '.join(registry.HOOKS)}"
        )
    module = registry.get(harness_name)
    project = os.path.abspath(project)
    path = targets(harness_name, project, state_rel, user, Program(None, True, None))[0][0]
    expected = module.hook_groups(settings.COMMAND)
    read = getattr(module, "our_hooks", None)
    found, error = (
        read(path) if read is not None else trust.our_hooks(path, settings.with_comments(path), settings.is_our_command)
    )
    scope = "--user " if user else ""
    if error:
        return [trust.TrustReport("installed", False, f"{path}: {error}", "fix it by hand, then install again")]
    missing = sorted(set(expected) - {event for event, *_ in found})
    fix = f"run `rehydrate install {scope}{harness_name}`"
    wrapped = trust.wrapped_hooks(path)
    if wrapped:  # a command that runs rehydrate's hook and something else: never counted as rehydrate's
        shown = "; ".join(clean(c, one_line=True)[:200] for c in wrapped[:3])
        return [
            trust.TrustReport(
                "installed",
                False,
                f"{path} has hooks that run `rehydrate hook` inside a longer command: {shown}",
                f"look at what else they run, remove them, then run `rehydrate install {scope}{harness_name}`",
            )
        ]
    if not found:
        return [trust.TrustReport("installed", False, f"{path} has no rehydrate hooks", fix)]
    out = [trust.TrustReport("installed", True, f"{len(found)} rehydrate hooks in {path}")]
    if missing:  # written by an older version: the hooks it has still run, the events it lacks do nothing
        what = f"no rehydrate hook for {', '.join(missing)} (the others run without it)"
        out.append(trust.TrustReport("complete", False, f"{path} has {what}", fix))
    out.append(trust.command_check([command for *_, command in found]))
    out += module.trust_checks(project, path, found, user)
    return out


def will_run(checks: list[trust.TrustReport]) -> bool:
    return all(c.ok is not False for c in checks)
