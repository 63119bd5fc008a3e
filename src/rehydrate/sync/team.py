"""What a team's clone needs (`rehydrate team init`) and the settling of conflicts the design did not foresee
(`rehydrate resolve`).

team init: state/.gitattributes merges the logs and the append-only views with git's built-in union driver (a
committed file, so a fresh clone needs nothing else; a user's own lines are kept), state/.gitignore keeps caches out,
and the same union lines go into `<common-dir>/info/attributes`: git reads attributes from the branch that receives a
merge, so a branch made before the committed file was upgraded would conflict; the local file covers every worktree of
this clone whatever the branch. No custom merge driver: one that is not on PATH (a GUI client, CI) turns
every merge into a conflict.

resolve: for unmerged paths under the state folder only, a content conflict on a union-able file is settled as the
union driver would (both sides' lines: ours, then theirs, over the base), a modify/delete keeps the modified side;
anything else is left to the user, and named.
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import layout
from rehydrate.store.git.plumb import Git, parse_stages, read_blob_to, union_able, union_blob
from rehydrate.store.local import place as local

_INFO_HEADER = "# rehydrate team init: the state folder's logs and append-only views merge line by line (union)"
_UNION = [line.split(" ", 1)[0] for line in layout.GITATTRIBUTES_TEXT.splitlines() if line.endswith(" merge=union")]


def attributes_text(existing: bytes | None) -> bytes:
    """state/.gitattributes as rehydrate writes it, followed by the user's own lines of the existing file."""
    ours = set(layout.GITATTRIBUTES_TEXT.splitlines()) | set(layout.GITATTRIBUTES_V1.splitlines())
    text = (existing or b"").decode("utf-8", "replace")
    extra = [line for line in text.splitlines() if line.strip() and line not in ours]
    return (layout.GITATTRIBUTES_TEXT + "".join(line + "\n" for line in extra)).encode()


def _quoted(pattern: str) -> str:
    if any(c in pattern for c in ' \t"\\'):
        return '"' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return pattern


def init(root: str) -> list[str]:
    """Set up the clone; returns one line per action (or per thing already in place)."""
    name = os.path.basename(os.path.abspath(root))
    actions: list[str] = []
    path = os.path.join(root, layout.GITATTRIBUTES)
    existing = fsio.read_bytes(path, 1 << 20)
    wanted = attributes_text(existing)
    if existing != wanted:
        fsio.replace(path, wanted, "team.attributes")
        what = "wrote" if existing is None else "updated"
        actions.append(f"{what} {name}/.gitattributes: logs and append-only views merge line by line (union)")
    else:
        actions.append(f"{name}/.gitattributes already merges logs and append-only views line by line")
    ignore = os.path.join(root, ".gitignore")
    had = (fsio.read_bytes(ignore, 1 << 20) or b"").decode("utf-8", "replace")
    ours = layout.GITIGNORE_TEXT.splitlines()
    missing = [line for line in ours if line and not line.startswith("#") and line not in had.splitlines()]
    if missing:
        lines = ours if not had else missing  # a new file gets rehydrate's own, comment included
        sep = "" if not had or had.endswith("\n") else "\n"
        fsio.replace(ignore, (had + sep + "".join(line + "\n" for line in lines)).encode(), "team.ignore")
        actions.append(f"added {', '.join(missing)} to {name}/.gitignore")
    found = local.repo(root)
    if found is None:
        actions.append("not inside a git repository: nothing else to set up")
        return actions
    actions.append(_info_attributes(root, found))
    return actions


def _info_attributes(root: str, found: local.Repo) -> str:
    rel = os.path.relpath(os.path.realpath(root), os.path.realpath(found.top)).replace(os.sep, "/")
    info = os.path.join(found.common_dir, "info", "attributes")
    shown = os.path.relpath(info, found.top) if info.startswith(found.top + os.sep) else info
    lines = [f"{_quoted(f'{rel}/{pattern}')} merge=union" for pattern in _UNION]
    had = (fsio.read_bytes(info, 1 << 20) or b"").decode("utf-8", "replace")
    missing = [line for line in lines if line not in had.splitlines()]
    if not missing:
        return f"{shown} already merges {rel}/'s logs line by line in this clone"
    fsio.ensure_dir(os.path.dirname(info), None)
    block = "".join(line + "\n" for line in ([_INFO_HEADER] if _INFO_HEADER not in had else []) + missing)
    fsio.replace(info, (had + ("" if not had or had.endswith("\n") else "\n") + block).encode(), "team.info")
    return f"added union merges for {rel}/ to {shown} (this clone, every worktree, whatever the branch)"


ADVICE = (
    "commit {name}/.gitattributes on your main line before branching: git reads merge attributes from the branch "
    "that receives a merge (`rehydrate sync` commits it)"
)


# ---------------------------------------------------------------------------------------------------- resolve


def _next_step(git_dir: str) -> str:
    for marker, step in (
        ("MERGE_HEAD", "git commit"),
        ("CHERRY_PICK_HEAD", "git cherry-pick --continue"),
        ("rebase-merge", "git rebase --continue"),
        ("rebase-apply", "git rebase --continue"),
        ("REVERT_HEAD", "git revert --continue"),
    ):
        if fsio.lstat(os.path.join(git_dir, marker)) is not None:
            return step
    return "git commit"


def resolve(root: str) -> tuple[list[str], list[str], str]:
    """(what was settled, what was left to the user, the git command that finishes the operation)."""
    found = local.repo(root)
    if found is None:
        raise RehydrateError(f"{root} is not inside a git repository: there is nothing to resolve")
    rel = os.path.relpath(os.path.realpath(root), os.path.realpath(found.top)).replace(os.sep, "/")
    git = Git(found)
    listed = git.run("ls-files", "-u", "-z")
    if listed.code != 0:
        raise RehydrateError(f"`git ls-files -u` failed: {listed.err.decode('utf-8', 'replace').strip()}")
    done: list[str] = []
    left: list[str] = []
    top = os.path.realpath(found.top)
    scratch = local.local_dir(root, found)
    for path, sides in sorted(parse_stages(listed.out).items()):
        inside = path.startswith(rel + "/")
        target = os.path.join(top, path)
        if not inside or not union_able(path[len(rel) + 1 :]):
            why = f"outside {rel}/: yours to resolve" if not inside else "not a file rehydrate merges: take a side"
            left.append(f"{path} ({why})")
            continue
        folder, base = os.path.realpath(os.path.dirname(target)), os.path.join(top, rel)
        if folder != base and not folder.startswith(base + os.sep):
            left.append(f"{path} (its folder leads outside {rel}/: not touched)")
            continue
        blob = union_blob(git, sides, scratch)
        if blob is None:
            left.append(f"{path} (deleted on both sides)")
            continue
        read_blob_to(git, blob[1], target, scratch)
        git.out("add", "--", f":(top,literal){path}")
        both = 2 in sides and 3 in sides
        done.append(f"{path}: " + ("kept both sides' lines (union)" if both else "kept the modified side"))
    return done, left, _next_step(found.git_dir)
