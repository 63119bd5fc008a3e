"""What git says about the work tree, in one subprocess: HEAD, branch and dirty files (the state folder left out)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

MAX_DIRTY = 200


def snapshot(state_dir: str) -> dict[str, Any]:
    """{"head", "branch", "dirty"} for the repository holding state_dir, or {"repo": False, "reason"} outside one."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        proc = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "-z", "--", ":/", ":(exclude)."],
            cwd=state_dir,
            capture_output=True,
            env=env,
            timeout=20,
            check=False,
        )
    except FileNotFoundError:
        return {"repo": False, "reason": "git is not installed"}
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"repo": False, "reason": f"git status failed: {e}"}
    if proc.returncode != 0:
        return {"repo": False, "reason": "not inside a git repository"}
    head: str | None = None
    branch: str | None = None
    dirty: list[str] = []
    entries = proc.stdout.decode("utf-8", "replace").split("\0")
    skip = False
    for entry in entries:
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
