"""Paths and hashes: the files a user names to stamp, as the project's relative paths (refused outside the project,
inside the state folder, or through a symlink), a recorded path checked before a file is opened (inforce.safe_rel:
it arrived by git pull), and a file's sha256, never following a symlink nor blocking on a FIFO."""

from __future__ import annotations

import os
import stat

from rehydrate.errors import UsageError
from rehydrate.fs import write as fsio
from rehydrate.store.evidence.inforce import safe_rel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.store.state import State

HASH_LIMIT = 1 << 30  # the largest file stamped (its hash is read in full at every check)
_CHUNK = 1 << 20


def project_of(state: State) -> str:
    return os.path.dirname(os.path.abspath(state.root))


def rel_path(state: State, given: str) -> str:
    """A file the user named (relative to the working folder) as the project's relative path; refused when it is
    outside the project, inside the state folder, a symlink or not a regular file."""
    project = project_of(state)
    full = os.path.abspath(given)
    rel = os.path.relpath(full, project)
    if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
        raise UsageError(f"{given} is outside the project ({project})", "name a file under the project's folder")
    inside = os.path.relpath(full, os.path.abspath(state.root))
    if not inside.startswith(".."):
        raise UsageError(f"{given} is inside the state folder", "stamp the project's files, not the state's")
    st = fsio.lstat(full)
    if st is None:
        raise UsageError(f"{given} does not exist")
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{given} is a symbolic link", "name the file it points to")
    if os.path.realpath(full) != os.path.join(os.path.realpath(project), rel):
        raise UsageError(f"{given} is reached through a symbolic link", "name the file by its own path")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{given} is not a regular file")
    if st.st_size > HASH_LIMIT:
        raise UsageError(f"{given} is larger than {HASH_LIMIT >> 20:,} MiB", "stamp smaller files")
    return rel.replace(os.sep, "/")


def file_sha(full: str, limit: int = HASH_LIMIT) -> str | None:
    """The sha256 of a regular file (not following a symlink, never blocking on a FIFO), None when it is absent, not
    a regular file, or larger than limit."""
    import hashlib  # here: hashlib loads OpenSSL, and a stamp's check hashes only the files it names

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(full, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        h = hashlib.sha256()
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def stamp_files(state: State, files: list[str]) -> dict[str, str]:
    """{project path: sha256} of the files named (each checked by rel_path)."""
    if not files:
        raise UsageError("no file named", "name the files to stamp")
    project = project_of(state)
    out: dict[str, str] = {}
    for given in files:
        rel = rel_path(state, given)
        sha = file_sha(os.path.join(project, rel))
        if sha is None:
            raise UsageError(f"{given} could not be read")
        out[rel] = sha
    return out


def drop_paths(state: State, files: list[str]) -> list[str]:
    """The project paths of files named to drop from the stamps (they need not exist any more)."""
    project = project_of(state)
    out = []
    for given in files:
        rel = os.path.relpath(os.path.abspath(given), project)
        if rel == "." or rel.split(os.sep)[0] == "..":
            raise UsageError(f"{given} is outside the project ({project})")
        out.append(rel.replace(os.sep, "/"))
    return out


def check_file(project: str, rel: str, limit: int = HASH_LIMIT) -> str | None:
    """The sha256 of a recorded path now (None: gone, not a regular file, or a path that is not safe)."""
    path = safe_rel(rel)
    if path is None:
        return None
    full = os.path.join(project, *path.split("/"))
    top = os.path.realpath(project)
    if os.path.realpath(full) != os.path.join(top, *path.split("/")):
        return None  # a folder on the way is a symlink (out of the project, or round in it): not followed
    return file_sha(full, limit)
