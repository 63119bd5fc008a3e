"""Where the state folder is, and who is writing: the upward search, its boundaries, and the actor's name.

The search for `state/` from the working folder stops at the folder holding `.git` and at the home folder, and never
takes or crosses a folder that another user owns: a state folder that arrived some other way must be named (the
CLI's --dir, REHYDRATE_DIR).
"""

from __future__ import annotations

import os

from rehydrate.store import layout

DEFAULT_DIR = "state"
DEFAULT_ACTOR = "agent"


def named(path: str | os.PathLike[str] | None = None) -> str | os.PathLike[str] | None:
    """The state folder the user named: PATH, else $REHYDRATE_DIR; None when neither names one (then it is found)."""
    return path if path is not None else (os.environ.get("REHYDRATE_DIR") or None)


def locate(path: str | os.PathLike[str] | None = None, start: str | None = None) -> str:
    """The state folder: PATH, else $REHYDRATE_DIR, else the nearest `state/` holding a WAL, upward from start
    (default: the current folder), else `state/` in start.

    The search stops where no one else can plant a folder: at the repository's root (a folder holding `.git`), at
    the home folder, and before any folder that another user owns; a `state/` that another user owns is never
    taken. (Outside a repository the search would otherwise reach shared folders such as the system's temporary
    folder, where anyone can put a `state/` for someone else's agent to read and write.) StateMissing if the only
    candidate left, `state/` in start, belongs to another user: no caller ever gets such a folder unless it is named."""
    path = named(path)
    if path is not None:
        return os.path.join(start or os.getcwd(), os.fspath(path)) if not os.path.isabs(path) else os.fspath(path)
    origin = os.path.abspath(start or os.getcwd())
    found = _search(origin)
    if found is not None:
        return found
    fallback = os.path.join(origin, DEFAULT_DIR)
    if foreign(fallback):
        from rehydrate.errors import StateMissing  # (every hook call finds its state here: it loads no more)

        raise StateMissing(
            f"{fallback} belongs to another user: rehydrate does not take a state folder that someone else owns "
            "unless it is named",
            "if you trust it, name it (REHYDRATE_DIR, or the state folder's option); to start your own, run from "
            "your own folder",
            field="dir",
        )
    return fallback


def init_location(path: str | os.PathLike[str] | None = None, start: str | None = None) -> str:
    """Where `init` creates the state folder: PATH, else $REHYDRATE_DIR, else the state folder the other commands
    would find upward from start (default: the current folder), else `state/` at the repository's root (the nearest
    folder holding `.git`, where the harness's hooks look), else, outside a repository, `state/` in start. The search
    for the root stops as `locate`'s does: at the home folder, never across a folder that another user owns."""
    if named(path) is not None:
        return locate(path, start)
    origin = os.path.abspath(start or os.getcwd())
    found = _search(origin)
    if found is not None:
        return found
    home = _identity(os.path.expanduser("~"))
    here = origin
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return os.path.join(here, DEFAULT_DIR)
        st = _lstat(here)
        parent = os.path.dirname(here)
        if st is None or foreign(here, st) or (home is not None and (st.st_dev, st.st_ino) == home) or parent == here:
            return os.path.join(origin, DEFAULT_DIR)
        here = parent


def _search(origin: str) -> str | None:
    home = _identity(os.path.expanduser("~"))
    here = origin
    while True:
        candidate = os.path.join(here, DEFAULT_DIR)
        if os.path.isdir(os.path.join(candidate, layout.WAL_DIR)):
            return None if foreign(candidate) else candidate
        if os.path.lexists(os.path.join(here, ".git")):
            return None  # the repository's root
        st = _lstat(here)
        if st is None or foreign(here, st) or (home is not None and (st.st_dev, st.st_ino) == home):
            return None  # never above the home folder, never across a folder that someone else owns
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _lstat(path: str) -> os.stat_result | None:
    """path's lstat, None if absent (fs.read.lstat's: the file layer is not loaded to find the state folder)."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def foreign(path: str, st: os.stat_result | None = None) -> bool:
    """path (not followed) belongs to another user than the one running rehydrate."""
    euid = getattr(os, "geteuid", None)
    if euid is None:  # no owners to compare (Windows)
        return False
    st = st if st is not None else _lstat(path)
    return st is not None and st.st_uid != euid()


def resolve_actor(actor: str | None = None) -> str:
    actor = actor or os.environ.get("REHYDRATE_ACTOR") or DEFAULT_ACTOR
    if not layout.is_actor(actor):
        from rehydrate.errors import UsageError

        raise UsageError(
            f"invalid actor name {actor!r}",
            "use letters, digits, '.', '_' or '-' (at most 64, not starting with '.' or '-')",
        )
    return actor
