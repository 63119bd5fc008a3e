"""Registered pipelines: state/pipelines.json names each one's files, so that the brief shows it and the recovery
checks verify it (with the quick check: the output's end only)."""

from __future__ import annotations

import json
import os

from rehydrate import safejson
from rehydrate.cursor.verify import quick_check
from rehydrate.errors import RehydrateError
from rehydrate.fs import lock as fslock
from rehydrate.fs import write as fsio
from rehydrate.store import layout
from rehydrate.text import named

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_CHECKED = 20  # the brief checks at most this many registered pipelines
MAX_NAME = 80


def registry(state_root: str) -> dict[str, Any]:
    """pipelines.json as a dict ({} if absent); RehydrateError if it cannot be read or is not a JSON object."""
    path = os.path.join(state_root, layout.PIPELINES)
    data = fsio.read_bytes(path, 1 << 20)
    if not data:
        return {}
    try:
        value = safejson.loads(data)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise RehydrateError(
            f"{path} is not a JSON object of pipelines",
            "fix it by hand or restore it from git (`cursor register` will not overwrite it)",
        )
    return value


def _inside(project: str, value: object) -> str | None:
    """The path for a registered file, if it resolves (symlinks and all) inside the project; None otherwise.
    pipelines.json arrives by git pull: an absolute path, a `..` or a link out of the project is not followed."""
    if not isinstance(value, str) or not value or "\0" in value:
        return None
    path = os.path.join(project, value)
    root = os.path.realpath(project)
    real = os.path.realpath(path)
    if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return path


def register(
    state_root: str, name: str, output: str, progress: str, key: str = "index", total: int | None = None
) -> None:
    """Register a pipeline in the state folder, so that the brief shows it and the recovery checks verify it.

    Paths are kept relative to the state folder's parent (the project), and must be inside it: the brief reads
    nothing outside the project. Done under the state's lock, reading the registry again inside it, so that
    parallel registrations all stay.
    """
    project = os.path.dirname(os.path.abspath(state_root))
    if not name or name != clean_name(name):
        raise RehydrateError(
            f"the pipeline name {name!r} is empty, too long or holds control characters",
            f"use a short printable name (at most {MAX_NAME} characters)",
            field="name",
        )
    if not key:
        raise RehydrateError("the index key is empty", "name the field that holds each record's index", field="key")
    if total is not None and not 0 <= total < 10**15:
        raise RehydrateError(
            f"the total {total} is out of range", "give the number of items, or leave it out", field="total"
        )
    paths = {}
    for what, path in (("output", output), ("progress", progress)):
        rel = os.path.relpath(os.path.abspath(path), project)
        if _inside(project, rel) is None:
            raise RehydrateError(
                f"the {what} file {path} is outside the project {project}",
                "the brief reads only files inside the project: keep the pipeline's files inside it, or check it "
                "with `rehydrate cursor verify OUTPUT PROGRESS`",
                field=what,
            )
        paths[what] = rel
    with fslock.locked(state_root):
        entries = registry(state_root)
        entries[name] = {**paths, "key": key, "total": total}
        fsio.replace(
            os.path.join(state_root, layout.PIPELINES),
            (json.dumps(entries, indent=2, sort_keys=True) + "\n").encode(),
            "cursor.register",
        )


def clean_name(text: str) -> str:
    """A name from pipelines.json as shown: printable characters only, at most MAX_NAME."""
    return "".join(ch for ch in text if ch.isprintable())[:MAX_NAME]


def summary(state_root: str, name: str, entry: dict[str, Any]) -> tuple[str, str]:
    """(status, one line) for the brief: ("degraded", "pass B: cursor 381 of 1,200; output ends at 379; ...").

    The status is "ok", "degraded", or "skipped" when the quick check could not look (the last record is too large
    for it, or a registered path leaves the project): never a guess."""
    project = os.path.dirname(os.path.abspath(state_root))

    label = named(clean_name(str(name)), MAX_NAME) if clean_name(str(name)) else "?"  # pipelines.json is pulled
    output, progress = _inside(project, entry.get("output")), _inside(project, entry.get("progress"))
    if output is None or progress is None:
        what = "output" if output is None else "progress file"
        return "skipped", (
            f"{label}: not checked: the path pipelines.json gives for its {what} leads outside the project, "
            "and the brief reads nothing outside it"
        )
    key = entry.get("key")
    c = quick_check(output, progress, key if isinstance(key, str) and key else "index")
    total = entry.get("total")
    of = f" of {total:,}" if isinstance(total, int) and not isinstance(total, bool) and 0 <= total < 10**15 else ""
    if c.unchecked is not None:
        ends = "output end not read"
    else:
        ends = "output is empty" if c.last_index is None else f"output ends at {c.last_index:,}"
    text = f"{label}: cursor {c.cursor if c.cursor is not None else '?'}{of}; {ends}"
    if c.problems:
        text += "; " + "; ".join(p.message for p in c.problems[:3])
    if c.unchecked is not None:
        text += f"; the cursor was not compared: {c.unchecked}"
    text = text.replace(os.path.join(project, ""), "")  # paths as registered: relative to the project
    status = "degraded" if c.problems else "skipped" if c.unchecked is not None else "ok"
    return status, text
