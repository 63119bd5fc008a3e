"""What the repository's own files say, read without a git process (one spawn costs the hook path ~1.7 ms): where
.git is (a folder, or a `gitdir:` file of a linked worktree or submodule), HEAD's hash, the main-line refs (loose or
packed), FETCH_HEAD's time. Each file is read only when it is a regular one, non-blocking, and bounded; whatever these
files cannot say plainly (a reftable repository, a huge packed-refs, a symbolic ref outside refs/) is None, and the
probe (checks/git/probe.py) asks git instead. git stays the authority on HEAD.
"""

from __future__ import annotations

import os
import stat
import time

MAIN_REFS = (
    "refs/remotes/origin/HEAD",
    "refs/remotes/origin/main",
    "refs/remotes/origin/master",
    "refs/heads/main",
    "refs/heads/master",
)


class Files:
    """What the repository's own files say, read without a git process (one spawn costs the hook path ~1.7 ms):
    gitdir (HEAD's folder) and common (the folder shared by worktrees); head, HEAD's hash (None: unborn, or not
    readable this way); refs, the main-line candidates present (refname -> hash, or `ref: target` for a symbolic
    ref), or None when the refs cannot be read this way (a reftable repository, a packed-refs over MAX_PACKED, an
    unreadable file): then `git for-each-ref` is asked. git status stays the authority on HEAD: when it disagrees,
    the log is asked after all."""

    __slots__ = ("common", "gitdir", "head", "refs", "top")

    def __init__(self, gitdir: str, common: str, top: str = "") -> None:
        self.gitdir = gitdir
        self.common = common
        self.top = top  # the work tree's top folder (where .git was found)
        self.head: str | None = None
        self.refs: dict[str, str] | None = None

    def fetched(self) -> str | None:
        """FETCH_HEAD's time as UTC ISO (None: never fetched)."""
        try:
            stamp = os.stat(os.path.join(self.common, "FETCH_HEAD")).st_mtime
        except (OSError, ValueError):
            return None
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


MAX_PACKED = 4 << 20


def files(root: str) -> Files | None:
    """The repository holding root, found by looking for .git upwards as git does (a folder; or a file `gitdir: X`
    whose X/commondir names the common folder: a linked worktree, a submodule), and what its files say; None when
    no .git is found. probe() removes GIT_DIR and GIT_WORK_TREE from git's environment, so both find the same."""
    folder = os.path.abspath(root)
    while True:
        dotgit = os.path.join(folder, ".git")
        found = (dotgit, dotgit) if os.path.isdir(dotgit) else _linked(dotgit) if os.path.isfile(dotgit) else None
        if found is not None:
            repo = Files(*found, folder)
            if not os.path.exists(os.path.join(repo.common, "reftable")):
                packed = _packed(repo.common)
                if packed is not None:
                    repo.refs = {n: v for n in MAIN_REFS if (v := _ref(repo.common, n, packed)) is not None}
                    repo.head = _head(repo, packed)
            return repo
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def fetched(root: str) -> str | None:
    """FETCH_HEAD's time as UTC ISO in the common git folder of the repository holding root (None: never fetched,
    or no repository)."""
    repo = files(root)
    return repo.fetched() if repo is not None else None


def _file_text(path: str, most: int = 4096) -> str | None:
    """A regular file's first `most` bytes as text, else None: never blocks (a FIFO planted as .git/HEAD would hang
    the session start; opened non-blocking, and anything but a regular file refused)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read(most).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _linked(dotgit: str) -> tuple[str, str] | None:
    """(gitdir, common) of a `.git` file: `gitdir: X`, then X/commondir (absent: X is the common folder too)."""
    line = (_file_text(dotgit) or "").split("\n", 1)[0].strip()
    if not line.startswith("gitdir: "):
        return None
    gitdir = os.path.normpath(os.path.join(os.path.dirname(dotgit), line[len("gitdir: ") :]))
    rel = _file_text(os.path.join(gitdir, "commondir"))
    return gitdir, os.path.normpath(os.path.join(gitdir, rel.strip())) if rel else gitdir


def _packed(common: str) -> dict[str, str] | None:
    """packed-refs as refname -> hash ({} when absent); None when it is too large or unreadable."""
    path = os.path.join(common, "packed-refs")
    try:
        if os.stat(path).st_size > MAX_PACKED:
            return None
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    text = _file_text(path, MAX_PACKED)
    if text is None:
        return None
    found: dict[str, str] = {}
    for line in text.split("\n"):
        sha, _, name = line.partition(" ")
        if name and is_hash(sha):
            found[name] = sha
    return found


def is_hash(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _ref(common: str, name: str, packed: dict[str, str]) -> str | None:
    """A shared ref's value: its hash, or `ref: target` for a symbolic ref; None when absent or not plain."""
    parts = name.split("/")
    if parts[0] != "refs" or any(p in ("", ".", "..") for p in parts) or "\0" in name:
        return None
    loose = _file_text(os.path.join(common, *parts), 1024)
    value = loose.strip() if loose is not None else packed.get(name)
    if value is None or is_hash(value):
        return value
    return value if value.startswith("ref: refs/") else None


def _head(repo: Files, packed: dict[str, str]) -> str | None:
    """HEAD's hash, following at most 5 symbolic refs among the shared ones; None when unborn or not plain."""
    value = (_file_text(os.path.join(repo.gitdir, "HEAD"), 1024) or "").strip()
    for _ in range(5):
        if is_hash(value):
            return value
        target = value[len("ref: ") :] if value.startswith("ref: refs/heads/") else None
        if target is None:
            return None
        value = _ref(repo.common, target, packed) or ""
    return None


def origin_main(refs: dict[str, str]) -> str | None:
    """The main line as direction finds it among origin's refs (origin/HEAD's target when it exists, else
    origin/main or origin/master), from the files: known before git status, so its calls start with git status."""
    target = refs.get("refs/remotes/origin/HEAD", "")
    name = target[len("ref: ") :] if target.startswith("ref: refs/") else None
    if name is not None and (name in refs or name not in MAIN_REFS):
        return name
    return next((r for r in ("refs/remotes/origin/main", "refs/remotes/origin/master") if r in refs), None)
