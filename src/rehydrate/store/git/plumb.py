"""git's plumbing for `sync` and `resolve`: one bounded runner (rehydrate.proc: a deadline, nothing left behind), the
union resolution of a conflicted state file from its stages, and the marker of a two-part step in progress.

Every git call goes through `Git.run`: argv only (never a shell), `git -C <top>`, LC_ALL=C (messages are parsed),
no prompt for credentials, and GIT_INDEX_FILE only when a call names the temporary index. Output is bytes, untrusted.
"""

from __future__ import annotations

import json
import os

from rehydrate import proc
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store.local import place as local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOCAL_TIMEOUT = 60.0  # a local git command (a large repository on a loaded machine is slow, not hung)
NETWORK_TIMEOUT = 120.0  # fetch, ls-remote, push
PENDING = "sync.pending"
# git's words for a lock another git process holds: worth another attempt, not a failure
_LOCK_WORDS = (b"index.lock", b"cannot lock ref", b"Unable to create", b".lock': File exists")
# the state files whose lines two sides may both add to: state/.gitattributes merges them with git's union driver
_UNION_TOP = ("10_invariants.md", "20_handoff.md", "99_next.md")
_UNION_DIRS = {"wal": ".jsonl", "next": ".md", "handoff": ".md"}


class GitFailed(RehydrateError):
    """A git command failed; `locked` when another git process held a lock (the caller tries again)."""

    def __init__(self, message: str, hint: str | None = None, *, locked: bool = False) -> None:
        super().__init__(message, hint)
        self.locked = locked


class Git:
    """Runs git in one worktree: `-C top`, with this process's environment less what would redirect it."""

    def __init__(self, found: local.Repo, extra_env: dict[str, str] | None = None) -> None:
        self.repo = found
        self.top = found.top
        env = {k: v for k, v in os.environ.items() if k not in ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE")}
        env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_EDITOR="true", GIT_MERGE_AUTOEDIT="no")
        env.update(extra_env or {})
        self.env = env

    def run(
        self, *args: str, index: str | None = None, timeout: float = LOCAL_TIMEOUT, cwd: str | None = None
    ) -> proc.Result:
        return self.finish(self.start(*args, index=index, cwd=cwd), args, timeout)

    def start(self, *args: str, index: str | None = None, cwd: str | None = None) -> proc.Batch:
        """A git command started and not waited for (`finish` waits): the caller works while it runs."""
        env = dict(self.env, GIT_INDEX_FILE=index) if index else self.env
        return proc.start([["git", "-C", cwd or self.top, *args]], env=env)

    def finish(self, batch: proc.Batch, args: tuple[str, ...], timeout: float = LOCAL_TIMEOUT) -> proc.Result:
        result = batch.wait(timeout)[0]
        if result.missing:
            raise RehydrateError("git is not installed (or not on PATH)", "install git, then run the command again")
        if result.timed_out:
            raise GitFailed(f"`git {args[0]}` took more than {timeout:.0f} s and was stopped")
        return result

    def out(self, *args: str, index: str | None = None, timeout: float = LOCAL_TIMEOUT, cwd: str | None = None) -> str:
        """stdout of a git command that must succeed (stripped); GitFailed otherwise."""
        result = self.run(*args, index=index, timeout=timeout, cwd=cwd)
        if result.code != 0:
            raise failed(args, result)
        return result.out.decode("utf-8", "replace").strip()

    def ok(self, *args: str) -> bool:
        """Whether a git command exits 0 (a question: is-ancestor, cat-file -e)."""
        return self.run(*args).code == 0

    def rev(self, name: str) -> str | None:
        result = self.run("rev-parse", "--verify", "-q", name + "^{commit}")
        return (result.out.decode().strip() or None) if result.code == 0 else None


def failed(args: tuple[str, ...] | list[str], result: proc.Result) -> GitFailed:
    err = result.err.decode("utf-8", "replace").strip()
    last = err.splitlines()[-1] if err else f"exit {result.code}"
    locked = any(w in result.err for w in _LOCK_WORDS)
    return GitFailed(f"`git {args[0]}` failed: {last}", locked=locked)


def union_able(rel: str) -> bool:
    """Whether a path of the state folder (relative to it) is one git merges with the union driver."""
    folder, _, name = rel.rpartition("/")
    if not folder:
        return name in _UNION_TOP
    return "/" not in folder and _UNION_DIRS.get(folder) is not None and name.endswith(_UNION_DIRS[folder])


def parse_stages(text: bytes) -> dict[str, dict[int, tuple[str, str]]]:
    """`<mode> <oid> <stage>\\t<path>` entries (NUL-terminated; ls-files -u, merge-tree's conflicted file info) by path:
    {path: {stage: (mode, oid)}}; stops at the first empty entry (merge-tree's messages follow it)."""
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for entry in text.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            break
        head, tab, path = entry.partition("\t")
        fields = head.split(" ")
        if not tab or len(fields) != 3 or not fields[2].isdigit():
            continue
        out.setdefault(path, {})[int(fields[2])] = (fields[0], fields[1])
    return out


def union_blob(git: Git, stages: dict[int, tuple[str, str]], scratch: str) -> tuple[str, str] | None:
    """(mode, oid) of the union of a conflicted file's sides: ours (2), then theirs (3), over base (1); a side that
    deleted it (modify/delete) gives the modified side. None when neither side has it."""
    ours, theirs, base = stages.get(2), stages.get(3), stages.get(1)
    if ours is None or theirs is None:
        return ours or theirs
    local.ensure(scratch)
    files = []
    try:
        for side in (ours, base, theirs):
            if side is None:
                empty = os.path.join(scratch, "sync.empty")
                fsio.replace(empty, b"", "sync.scratch")
                files.append(empty)
                continue
            name = git.out("--git-dir", git.repo.git_dir, "unpack-file", side[1], cwd=scratch)
            files.append(os.path.join(scratch, name))
        merged = git.run("merge-file", "--union", "-q", *files)
        if merged.code != 0:
            raise failed(["merge-file"], merged)
        oid = git.out("hash-object", "-w", "--", files[0])
        return ours[0], oid
    finally:
        for path in files:
            if os.path.basename(path).startswith(".merge_file_") or path.endswith("sync.empty"):
                try:
                    os.unlink(path)
                except OSError:
                    pass


def read_blob_to(git: Git, oid: str, target: str, scratch: str) -> None:
    """Copy a blob's bytes to target (any size: unpack-file writes a file, nothing goes through a pipe)."""
    local.ensure(scratch)
    name = git.out("--git-dir", git.repo.git_dir, "unpack-file", oid, cwd=scratch)
    src = os.path.join(scratch, name)
    try:
        with open(src, "rb") as f:
            data = f.read()
        fsio.replace(target, data, "resolve.file")
    finally:
        os.unlink(src)


# ---------------------------------------------------------------------------------------------------- sync.pending


def pending_path(local_folder: str) -> str:
    return os.path.join(local_folder, PENDING)


def write_pending(local_folder: str, step: str, old: str, new: str) -> None:
    """Written (fsync'd) before a two-part step: {"step", "old", "new"}; removed once both parts are done."""
    data = json.dumps({"step": step, "old": old, "new": new}, sort_keys=True).encode() + b"\n"
    fsio.replace(pending_path(local.ensure(local_folder)), data, "sync.pending")


def read_pending(local_folder: str) -> dict[str, Any] | None:
    path = pending_path(local_folder)
    if fsio.lstat(path) is None:
        return None
    try:
        data = json.loads(fsio.read_small(path, 4096)[0] or b"{}")
    except (ValueError, RehydrateError):
        return {"step": "unreadable", "old": "", "new": ""}
    ok = isinstance(data, dict) and all(isinstance(data.get(k), str) for k in ("step", "old", "new"))
    return data if ok else {"step": "unreadable", "old": "", "new": ""}


def clear_pending(local_folder: str) -> None:
    try:
        os.unlink(pending_path(local_folder))
    except FileNotFoundError:
        pass
