"""What git says about the work tree, in one `git status`: HEAD, branch and dirty files (the state folder left out).

`start` launches git and `finish` reads its answer, so that a checkpoint can reconcile the state while git runs.
git is started with os.posix_spawn rather than subprocess: importing subprocess (and threading) costs more than the
whole git call, on a path that runs at every checkpoint (bench/startup.py measures it). Its answer is waited for with
poll(), not select(): select() refuses descriptor numbers above 1,023, which a long-lived process (an MCP server, a
test suite) can reach.
"""

from __future__ import annotations

import os
import select
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

MAX_DIRTY = 200
TIMEOUT = 20.0


class Pending:
    """A running `git status`, or the reason it could not start."""

    def __init__(self, pid: int | None, fd: int | None, reason: str | None) -> None:
        self.pid = pid
        self.fd = fd
        self.reason = reason


def start(state_dir: str) -> Pending:
    argv = ["git", "-C", state_dir, "status", "--porcelain=v2", "--branch", "-z", "--", ":/", ":(exclude)."]
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        read_fd, write_fd = os.pipe()
    except OSError as e:  # out of descriptors: the checkpoint goes on without git, and says so
        return Pending(None, None, f"git could not start: {e.strerror}")
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
    except OSError as e:
        os.close(read_fd)
        os.close(write_fd)
        return Pending(None, None, f"git could not start: {e.strerror}")
    try:
        pid = os.posix_spawnp(
            "git",
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, write_fd, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
                (os.POSIX_SPAWN_CLOSE, read_fd),
            ],
        )
    except FileNotFoundError:
        os.close(read_fd)
        return Pending(None, None, "git is not installed")
    except OSError as e:
        os.close(read_fd)
        return Pending(None, None, f"git could not start: {e.strerror}")
    finally:
        os.close(write_fd)
        os.close(devnull)
    return Pending(pid, read_fd, None)


def finish(pending: Pending) -> dict[str, Any]:
    """{"head", "branch", "dirty"} for the repository holding the state folder, or {"repo": False, "reason"}."""
    if pending.pid is None or pending.fd is None:
        return {"repo": False, "reason": pending.reason or "git did not run"}
    chunks: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT
    timed_out = False
    try:
        poller = select.poll()  # any descriptor number, unlike select.select
        poller.register(pending.fd, select.POLLIN)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(int(left * 1000) + 1):
                timed_out = True
                os.kill(pending.pid, 9)  # SIGKILL (the signal module costs the hook path 0.5 ms to import)
                break
            chunk = os.read(pending.fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(pending.fd)
        _, status = os.waitpid(pending.pid, 0)
    if timed_out:
        return {"repo": False, "reason": f"git status took more than {TIMEOUT:.0f} s"}
    if os.waitstatus_to_exitcode(status) != 0:
        return {"repo": False, "reason": "not inside a git repository"}
    return parse(b"".join(chunks))


def snapshot(state_dir: str) -> dict[str, Any]:
    return finish(start(state_dir))


def parse(output: bytes) -> dict[str, Any]:
    """Read `git status --porcelain=v2 --branch -z`."""
    head: str | None = None
    branch: str | None = None
    dirty: list[str] = []
    skip = False
    for entry in output.decode("utf-8", "replace").split("\0"):
        if skip:  # the original path of a rename
            skip = False
            continue
        if entry.startswith("# branch.oid "):
            oid = entry[len("# branch.oid ") :]
            head = None if oid == "(initial)" else oid
        elif entry.startswith("# branch.head "):
            name = entry[len("# branch.head ") :]
            branch = None if name == "(detached)" else name
        elif entry[:2] in ("1 ", "u "):
            dirty.append(entry.split(" ", 8 if entry[0] == "1" else 10)[-1])
        elif entry.startswith("2 "):
            dirty.append(entry.split(" ", 9)[-1])
            skip = True
        elif entry.startswith("? "):
            dirty.append(entry[2:])
    out: dict[str, Any] = {"head": head, "branch": branch, "dirty": sorted(dirty)[:MAX_DIRTY]}
    if len(dirty) > MAX_DIRTY:
        out["dirty_count"] = len(dirty)
    return out


def parse_upstream(output: bytes) -> dict[str, Any]:
    """The upstream of `git status --porcelain=v2 --branch -z` (which parse() leaves out, so that a checkpoint's
    `git` does not change): {"upstream": its name or None, "ahead": commits HEAD has that it lacks, "behind": the
    reverse}; ahead and behind are None without an upstream, or when git did not count them (the upstream gone)."""
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    for entry in output.decode("utf-8", "replace").split("\0"):
        if entry.startswith("# branch.upstream "):
            upstream = entry[len("# branch.upstream ") :]
        elif entry.startswith("# branch.ab "):
            counts = entry[len("# branch.ab ") :].split(" ")
            if len(counts) == 2 and counts[0][1:].isdigit() and counts[1][1:].isdigit():
                ahead, behind = int(counts[0][1:]), int(counts[1][1:])
        elif not entry.startswith("#"):
            break  # the headers come first
    return {"upstream": upstream, "ahead": ahead, "behind": behind}
