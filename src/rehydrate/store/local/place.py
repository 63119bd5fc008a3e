"""Per-worktree knowledge: where this clone keeps what it alone knows, outside what is committed.

What this clone has seen of the logs, its locks' companions, the read-side journal and sync's bookkeeping are not
state: they must never be committed, never travel with a `git pull`, and never be shared by two worktrees of one
repository. They live in the worktree's own git folder, `<git-dir>/rehydrate/<key>/` (for a linked worktree that is
`.git/worktrees/<name>/rehydrate/`, which git keeps per worktree), `<key>` naming the state folder by its place in the
worktree (`state`, or `sub%2Fstate`). Outside a repository they live in `<state>/.local/` (git-ignored).

Found without a git process (the hook path's start-up): the state folder's parents are searched for `.git` (a folder,
or a file `gitdir: PATH` for a worktree or a submodule), and `$GIT_DIR` wins when set. HEAD is read the same way.
Everything read here is a hint: a missing or odd file means "not in a repository" or "unknown", never an error.
"""

from __future__ import annotations

import os

LOCAL_DIR = ".local"  # the fallback outside a repository, inside the state folder (git-ignored)
_MAX_SMALL = 4096  # HEAD, a `.git` file, commondir: a few hundred bytes at most


class Repo:
    """Where a state folder sits in git: the worktree's top, its own git folder, the common git folder."""

    def __init__(self, top: str, git_dir: str, common_dir: str) -> None:
        self.top = top  # the folder holding `.git` (the worktree's top)
        self.git_dir = git_dir  # per worktree: `.git`, or `.git/worktrees/<name>`
        self.common_dir = common_dir  # shared by every worktree: refs, objects, config

    def __repr__(self) -> str:
        return f"Repo({self.top!r}, {self.git_dir!r}, {self.common_dir!r})"


def _read_small(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        data = os.read(fd, _MAX_SMALL)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _gitdir_of(dot_git: str) -> str | None:
    """The git folder a `.git` entry names: itself if a folder, the `gitdir:` target if a file."""
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        return dot_git
    text = _read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    if not target:
        return None
    if not os.path.isabs(target):
        target = os.path.join(os.path.dirname(dot_git), target)
    target = os.path.normpath(target)
    return target if os.path.isdir(target) else None


def _common_of(git_dir: str) -> str:
    text = _read_small(os.path.join(git_dir, "commondir"))
    if text is None or not text.strip():
        return git_dir
    target = text.strip()
    if not os.path.isabs(target):
        target = os.path.join(git_dir, target)
    target = os.path.normpath(target)
    return target if os.path.isdir(target) else git_dir


def repo(state_root: str) -> Repo | None:
    """The repository holding the state folder, found upward from it; None outside one.

    `$GIT_DIR` (set by git for the commands its hooks run, relative to the working folder) wins, with the working
    folder's top as `$GIT_WORK_TREE` or the state folder's parent."""
    here = os.path.abspath(state_root)
    env = os.environ.get("GIT_DIR")
    if env:
        git_dir = os.path.abspath(env)
        if os.path.isdir(git_dir):
            top = os.environ.get("GIT_WORK_TREE") or os.path.dirname(here)
            return Repo(os.path.abspath(top), git_dir, _common_of(git_dir))
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.lexists(dot_git):
            named = _gitdir_of(dot_git)
            return Repo(here, named, _common_of(named)) if named is not None else None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def key(state_root: str, top: str) -> str:
    """The state folder's place in its worktree, as one file name: `state`, `sub%2Fstate`."""
    rel = os.path.relpath(os.path.abspath(state_root), top)
    if rel == "." or rel.startswith(".."):
        rel = os.path.basename(os.path.abspath(state_root)) or "state"
    return rel.replace("%", "%25").replace(os.sep, "%2F").replace("/", "%2F")


def local_dir(state_root: str, found: Repo | None = None) -> str:
    """This worktree's folder for what it alone knows about the state folder (not created here; see `ensure`)."""
    found = found if found is not None else repo(state_root)
    if found is None:
        return os.path.join(state_root, LOCAL_DIR)
    return os.path.join(found.git_dir, "rehydrate", key(state_root, found.top))


def ensure(path: str) -> str:
    """Create the local folder and its parents (private to the user); returns path."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def head(found: Repo) -> tuple[str | None, str | None]:
    """(branch, commit) of the worktree's HEAD, read from its files: the branch is None when HEAD is detached, the
    commit None when it cannot be read (an unborn branch, a reftable repository)."""
    text = _read_small(os.path.join(found.git_dir, "HEAD"))
    if text is None:
        return None, None
    text = text.strip()
    if not text.startswith("ref:"):
        return None, text if _is_sha(text) else None
    ref = text[4:].strip()
    branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None
    return branch, resolve_ref(found, ref)


def branch(state_root: str) -> str | None:
    """The branch of the worktree the state folder is in (HEAD read without a git process); None detached or outside
    git."""
    found = repo(state_root)
    return head(found)[0] if found is not None else None


def resolve_ref(found: Repo, ref: str) -> str | None:
    """A ref's commit, from its loose file or packed-refs (one level: a symbolic ref is not followed further)."""
    if ".." in ref.split("/") or not ref.startswith("refs/"):
        return None
    for folder in (found.git_dir, found.common_dir):
        text = _read_small(os.path.join(folder, ref))
        if text is not None and _is_sha(text.strip()):
            return text.strip()
    try:
        with open(os.path.join(found.common_dir, "packed-refs"), "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                sha, _, name = line.partition(" ")
                if name == ref and _is_sha(sha):
                    return sha
    except OSError:
        return None
    return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
