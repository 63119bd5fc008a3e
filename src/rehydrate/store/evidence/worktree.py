"""The work tree as a git tree (a receipt's `tree`): what `git add -A` would commit, the state folder left out,
written to a scratch index in this worktree's git folder (never the real index); and the paths two such trees differ
in."""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.store.evidence.inforce import is_hex
from rehydrate.store.git import index as gitindex
from rehydrate.store.git.plumb import Git, GitFailed
from rehydrate.store.local import place as local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class Tree:
    """The work tree as a git tree: `sha` (None when it could not be computed: `why` says so; `repo` False outside a
    git repository)."""

    def __init__(self, sha: str | None, why: str | None = None, repo: bool = True) -> None:
        self.sha = sha
        self.why = why
        self.repo = repo


def tree_of(state_root: str, timeout: float = 60.0) -> Tree:
    """The work tree holding the state folder as git would commit it with `git add -A`: tracked files as they are
    now and untracked files git does not ignore, the state folder left out. Written to a scratch index (a copy of
    the real one, so that unchanged files are not hashed again) in this worktree's own git folder, never to the real
    index; `git write-tree` names it. The blobs of changed files land in git's object store, as `git stash create`'s
    do (git gc removes them). An entry the real index marks assume-unchanged or skip-worktree (git then takes the
    index's copy for the file's and never reads it) is unmarked in the copy first (`_unflag`): the tree is what is
    on disk, a file rewritten behind such a mark included, and one absent behind it counted as deleted."""
    found = local.repo(state_root)
    if found is None:
        return Tree(None, "not a git repository", repo=False)
    git = Git(found)
    scratch = local.ensure(local.local_dir(state_root, found))
    index = os.path.join(scratch, f"tree.{os.getpid()}.{os.urandom(3).hex()}.index")
    spec = [":/"]
    rel = os.path.relpath(os.path.abspath(state_root), found.top)
    if not rel.startswith(".."):
        spec.append(f":(top,exclude){rel}")
    try:
        data = _copy_index(os.path.join(found.git_dir, "index"), index)
        try:
            return _scratch_tree(git, index, data, _hash_len(found.common_dir), spec, rel, timeout)
        except GitFailed as e:
            return Tree(None, str(e))
        except RehydrateError as e:  # git not installed
            return Tree(None, str(e), repo=False)
    finally:
        for leftover in (index, index + ".lock"):
            try:
                os.unlink(leftover)
            except OSError:
                pass


def _copy_index(real: str, index: str) -> bytes | None:
    """The real index's bytes, written to the scratch index with the real one's times (git's check of entries as new
    as the index still works); None when there is no index yet (a new repository: every file is hashed)."""
    try:
        with open(real, "rb") as f:
            data = f.read()
            st = os.fstat(f.fileno())
        with open(index, "xb") as out:
            out.write(data)
        os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns))
        return data
    except OSError:
        try:
            os.unlink(index)  # a copy cut short is no index: git add makes one
        except OSError:
            pass
        return None


def _hash_len(common_dir: str) -> int:
    """20 bytes per object id, or 32 in a repository whose config names the sha256 object format."""
    try:
        with open(os.path.join(common_dir, "config"), "rb") as f:
            text = f.read(1 << 16).lower()
    except OSError:
        return 20
    return 32 if b"objectformat" in text and b"sha256" in text else 20


def _scratch_tree(
    git: Any, index: str, data: bytes | None, hash_len: int, spec: list[str], rel: str, timeout: float
) -> Tree:
    """`git add -A` into the scratch index (from HEAD when the copy is of no use), the state folder's entries taken
    out (a committed state/ is in the real index), `git write-tree`. While the first `git add` runs, the copied
    index's bytes are read for entries marked assume-unchanged or skip-worktree (git add skips those files): when
    there are any, they are unmarked and `git add -A` runs again; an index that cannot be read so is not used."""
    add = ("add", "-A", "--ignore-errors", "--", *spec)
    if data is None:  # no index yet (a new repository): git add makes one, every file hashed
        added = git.run(*add, index=index, timeout=timeout)
    else:
        started = git.start(*add, index=index)
        try:
            marks = gitindex.marked(data, hash_len)
        finally:  # never a git left running
            added = git.finish(started, add, timeout)
        fresh = added.code != 0 or marks is None  # a copied index git or gitindex cannot use
        if not fresh and marks:
            fresh = not _unflag(git, index, marks, timeout)
            if not fresh:
                added = git.run(*add, index=index, timeout=timeout)
        if fresh:  # start from HEAD: an index read from a tree holds no mark
            os.unlink(index)
            git.run("read-tree", "HEAD", index=index, timeout=timeout)
            added = git.run(*add, index=index, timeout=timeout)
    if added.code != 0:
        return Tree(None, f"git add -A failed: {_first_line(added.err)}")
    if len(spec) > 1:
        out = ("rm", "-r", "--cached", "-q", "--ignore-unmatch", "--", f":(top){rel}")
        removed = git.run(*out, index=index, timeout=timeout)
        if removed.code != 0:
            return Tree(None, f"git rm --cached failed: {_first_line(removed.err)}")
    wrote = git.run("write-tree", index=index, timeout=timeout)
    if wrote.code != 0:
        return Tree(None, f"git write-tree failed: {_first_line(wrote.err)}")
    sha = wrote.out.decode("ascii", "replace").strip()
    return Tree(sha) if is_hex(sha) else Tree(None, "git write-tree gave no tree")


_CHUNK_ARGS = 64 << 10  # bytes of paths on one `git update-index` command line (far under any system's limit)


def _unflag(git: Any, index: str, marks: Any, timeout: float) -> bool:
    """Clear the scratch index's assume-unchanged and skip-worktree marks (gitindex.Marked): with them git add never
    looks at the file, and a rewrite hidden so would leave a claim verified. False when git refused (a sparse index's
    folder entry, say): the caller then starts from HEAD."""
    # one mark per command: given both, `git update-index` applies only the first to each path
    for flag, names in (("--no-assume-unchanged", marks.assumed), ("--no-skip-worktree", marks.skipped)):
        for chunk in _chunks([os.fsdecode(n) for n in names]):
            if git.run("update-index", flag, "--", *chunk, index=index, timeout=timeout).code != 0:
                return False
    return True


def _chunks(paths: list[str]) -> Iterator[list[str]]:
    chunk: list[str] = []
    size = 0
    for path in paths:
        if chunk and size + len(path) > _CHUNK_ARGS:
            yield chunk
            chunk, size = [], 0
        chunk.append(path)
        size += len(path) + 1
    if chunk:
        yield chunk


def changed_between(state_root: str, old: str, new: str, limit: int = 10, timeout: float = 10.0) -> list[str] | None:
    """The paths that differ between two trees (both hashes checked), at most limit; None when git cannot say (the
    old tree was computed in another clone, whose object store held it)."""
    found = local.repo(state_root)
    if found is None or not (is_hex(old) and is_hex(new)):
        return None
    try:
        out = Git(found).run("diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new, timeout=timeout)
    except (GitFailed, RehydrateError):
        return None
    if out.code != 0:
        return None
    return [p.decode("utf-8", "replace") for p in out.out.split(b"\0") if p][:limit]


def _first_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace").strip().split("\n")
    return text[0][:200] if text and text[0] else "no message"
