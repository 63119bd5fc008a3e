"""Where the files an install writes really are, and writing them without changing anything else about them.

A harness's files in a project (`.claude/settings.json`, `AGENTS.md`, `CLAUDE.md`, ...) are written only inside the
project. A symbolic link on the way (the file itself, or any folder above it) is followed when its real path stays
inside the project, out of its `.git` folder and out of the state folder (`CLAUDE.md -> AGENTS.md` is common); a link
that leads anywhere else is refused, naming the link and where it points, and nothing is written.

A user's own files (`~/.claude/settings.json`, ...) live outside any project, and dotfiles managers make them links:
those are followed, but only onto a file and a folder that belong to the user running rehydrate, never into another
user's.

A write replaces the file atomically (temporary file in the same folder, sync, rename, sync the folder) and keeps its
permission bits: a 0600 file stays 0600, and its temporary copy is never more open than the file.
"""

from __future__ import annotations

import errno
import os
import stat

from rehydrate.errors import RehydrateError, UnsafeFile
from rehydrate.fs import write as fsio

NEW_FILE_MODE = 0o644  # before the umask, as open() would


class Place:
    """A file as the user names it (path) and the file that is read and written (real)."""

    def __init__(self, path: str, real: str, link: str | None = None) -> None:
        self.path = path
        self.real = real
        self.link = link  # the first symbolic link followed on the way, if any

    @property
    def through(self) -> str:
        """A note for the report when a link was followed, else ''."""
        return f" (through the link {self.link}, to {self.real})" if self.link else ""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _resolve(link: str) -> str:
    """The real path a link leads to (where it would lead, for a dangling one)."""
    try:
        return os.path.realpath(link, strict=True)
    except FileNotFoundError:
        return os.path.realpath(link)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafeFile(
                f"{link} is a symbolic link that loops ({link} -> {_readlink(link)})",
                "replace the link with a regular file or folder, then run the command again",
            ) from None
        raise RehydrateError(f"cannot follow the symbolic link {link}: {e.strerror}") from None


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _links_on_the_way(path: str, top: str) -> list[str]:
    """Every prefix of path below top (top excluded, path included) that is a symbolic link."""
    rel = os.path.relpath(path, top)
    links = []
    here = top
    for part in rel.split(os.sep):
        here = os.path.join(here, part)
        if os.path.islink(here):
            links.append(here)
    return links


def _check_folders(real: str) -> None:
    """The nearest existing folder above the file must be a folder (install creates the missing ones below it)."""
    here = os.path.dirname(real)
    while not os.path.lexists(here):
        parent = os.path.dirname(here)
        if parent == here:
            return
        here = parent
    if not os.path.isdir(here):
        raise UnsafeFile(
            f"{here} is not a folder, but {real} would have to be inside it",
            "move it away, then run the command again",
        )


def _refuse_link(link: str, real: str, why: str, is_file: bool) -> UnsafeFile:
    what = "a regular file (a copy of what it points to)" if is_file else "a real folder"
    return UnsafeFile(
        f"{link} is a symbolic link to {_readlink(link)} ({real}), {why}; nothing was written",
        f"replace the link with {what}, or with a link to somewhere inside the project, then run the command again",
    )


def in_project(path: str, project: str, keep_out: tuple[str, ...] = ()) -> Place:
    """The place of a project file, following only links that stay inside the project and out of keep_out."""
    path = os.path.abspath(path)
    project = os.path.abspath(project)
    root = os.path.realpath(project)
    if not _inside(path, project):
        raise UnsafeFile(f"{path} is not inside the project {project}")
    forbidden = [os.path.join(root, ".git"), *(os.path.realpath(os.path.join(project, k)) for k in keep_out)]

    def refuse_unless_allowed(link: str, real: str) -> None:
        if not _inside(real, root):
            raise _refuse_link(link, real, f"outside the project {root}", link == path)
        for folder in forbidden:
            if _inside(real, folder):
                why = f"inside {os.path.relpath(folder, root)}/, where rehydrate never writes"
                raise _refuse_link(link, real, why, link == path)

    links = _links_on_the_way(path, project)
    for link in links:
        refuse_unless_allowed(link, _resolve(link))
    real = os.path.realpath(path) if links else path
    if links:
        refuse_unless_allowed(links[-1], real)
    _check_folders(real)
    return Place(path, real, links[0] if links else None)


def _owner(uid: int) -> str:
    try:
        import pwd  # not on Windows

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except OSError as e:
        raise RehydrateError(f"cannot look at {path}: {e.strerror or e}") from None


def _check_mine(path: str, link: str | None) -> None:
    st = _stat(path)
    if st.st_uid == os.geteuid():
        return
    kind = "folder" if stat.S_ISDIR(st.st_mode) else "file"
    how = f"{link} is a symbolic link to {_readlink(link)}, and " if link else ""
    raise UnsafeFile(
        f"{how}the {kind} {path} belongs to {_owner(st.st_uid)}, not to you; "
        "rehydrate never writes into another user's files or folders; nothing was written",
        "point the link at a file or folder of your own, or install into the project instead"
        if link
        else "make it yours again (chown), or install into the project instead",
    )


def _shared(path: str) -> bool:
    """A folder everyone may create in, each their own entries (the system's temporary folder)."""
    mode = _stat(path).st_mode
    return bool(mode & stat.S_ISVTX and mode & stat.S_IWOTH)


def in_home(path: str) -> Place:
    """The place of a user's own file: links followed, onto a file and a folder of the user's only."""
    path = os.path.abspath(path)
    links = [p for p in _ancestors(path) if os.path.islink(p)]
    for each in links:
        _resolve(each)  # a loop is named here
    real = os.path.realpath(path) if links else path
    link = links[-1] if links else None  # the deepest: ~/.claude rather than a system link above the home
    _check_folders(real)
    if os.path.lexists(real):
        _check_mine(real, link)
    folder = os.path.dirname(real)
    here = folder
    while not os.path.lexists(here) and os.path.dirname(here) != here:
        here = os.path.dirname(here)  # the folders below here are to be made, and will be the user's
    if here == folder or not _shared(here):
        _check_mine(here, link)
    return Place(path, real, link)


def _ancestors(path: str) -> list[str]:
    """path and every folder above it, outermost first (the root excluded)."""
    out = []
    here = path
    while os.path.dirname(here) != here:
        out.append(here)
        here = os.path.dirname(here)
    return list(reversed(out))


WORDS = fsio.Words(
    "install only reads and writes regular files; nothing was written",
    "move it away, then run the command again",
    "check the disk (space, permissions, a read-only mount), then run the command again",
)


def read(place: Place, limit: int) -> bytes | None:
    """The file's bytes, None if it is absent; a FIFO, folder or device is refused with what to do."""
    return fsio.read_bytes(place.real, limit, WORDS) if _mode(place.real) is not None else None


def _mode(real: str) -> int | None:
    """The permission bits of a regular file, None if it is absent; anything else is refused."""
    st = fsio.stat_regular(real, WORDS)
    return None if st is None else stat.S_IMODE(st.st_mode)


def write(place: Place, data: bytes, point: str, *, new_mode: int = NEW_FILE_MODE) -> list[str]:
    """Replace the file atomically, keeping its permission bits (new_mode for a new one); the folders made."""
    made = fsio.make_dirs(os.path.dirname(place.real), point + ".mkdir", WORDS)
    fsio.replace(place.real, data, point, mode=_mode(place.real), new_mode=new_mode, words=WORDS)
    return made


def remove(place: Place) -> None:
    fsio.unlink(place.real, WORDS)
