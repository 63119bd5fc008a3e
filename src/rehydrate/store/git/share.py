"""What git carries of the state folder, as the store and `sync` both see it: rehydrate's own files as pathspecs,
those an ignore rule hides from `git add`, and a sync stopped between the two parts of a step (sync.pending). The
store reports them in `status`; sync/run.py commits and finishes them.
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import layout
from rehydrate.store.git.plumb import Git, read_pending
from rehydrate.store.local import place as local

IGNORED_HINT = "remove the ignore rule (`git check-ignore -v PATH` names it)"


def own_specs(root: str, rel: str) -> list[str]:
    """Pathspecs of what rehydrate writes and shares in the state folder (layout.is_own: its top-level entries there
    now, as literal paths) less its caches (the patterns of the .gitignore it writes, at any depth)."""
    try:
        names = sorted(n for n in os.listdir(root) if layout.is_own(n))
    except OSError:
        names = []
    specs = [f":(top,literal){rel}/{name}" for name in names]
    for line in layout.GITIGNORE_TEXT.splitlines():
        pattern = line.strip()
        if pattern and not pattern.startswith("#"):
            tail = pattern + "**" if pattern.endswith("/") else pattern
            specs.append(f":(top,exclude,glob){rel}/**/{tail}")
    return specs


def ignored_own(git: Git, root: str, rel: str, index: str | None = None) -> list[str]:
    """rehydrate's own files in the state folder (own_specs) that no index entry holds and an ignore rule hides:
    `git add` leaves them out. Paths from the worktree's top, cut at the runner's cap on output."""
    specs = own_specs(root, rel)
    if not any(s.startswith(":(top,literal)") for s in specs):
        return []
    out = git.out("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", *specs, index=index)
    return sorted(p for p in out.split("\0") if p)


def some_paths(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def ignored_message(root: str) -> str | None:
    """For `status`: rehydrate's files that git ignores (a plain `git add` or `git commit -a` leaves them out; sync
    commits them regardless). One `git ls-files`; None outside a repository or when git cannot say."""
    found = local.repo(root)
    if found is None:
        return None
    rel = os.path.relpath(os.path.realpath(root), os.path.realpath(found.top)).replace(os.sep, "/")
    if rel == "." or rel.startswith("../"):
        return None
    try:
        hidden = ignored_own(Git(found), root, rel)
    except RehydrateError:  # git missing or failing: status says what it can without it
        return None
    if not hidden:
        return None
    return (
        f"git ignores {some_paths(hidden)}, which rehydrate wrote: `git add` leaves them out and a teammate's clone "
        f"lacks them; `rehydrate sync` commits them all the same; {IGNORED_HINT}"
    )


def pending_message(root: str) -> str | None:
    """For `status` (one lstat when there is none): an interrupted sync whose second part is not done yet."""
    folder = local.local_dir(root)
    if fsio.lstat(os.path.join(folder, "sync.pending")) is None:
        return None
    pending = read_pending(folder) or {"step": "unknown"}
    return f"a sync was interrupted ({pending['step']} half done): run `rehydrate sync` to finish it"
