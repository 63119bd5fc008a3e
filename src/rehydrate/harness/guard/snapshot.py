"""The check by effect's snapshot: for each guarded file (at most MAX_FILES), its size, mtime, inode and sha256 (""
for a guarded path that does not exist), and the rejected approaches that guard it; built from the watches, compared
with the files, saved whole.

It is kept in `<local_dir>/guard/snapshot` (store/local/place.py: in the worktree's own git folder, never committed).
Its first line says which 10_invariants.md it was built from and how much it watches (rejected approaches with a
watch, files, changes not yet said). A path glob is matched against the work tree from its longest folder without a
wildcard, at most MAX_WALK entries looked at (`.git`, the state folder and SKIP's folders left out, linked folders not
followed); a guard without a `/` watches a file name anywhere, so the whole tree. A file past those caps, and a file
that a glob names but that did not exist at the last rebuild, are not checked by effect until the next one. A
`contains` without a `guard` names no file: it is checked before the call only. A guard is the project's: one that
names a file outside it (`../x`, `/x`) is not looked at.

The restore copy is the file's bytes when the guard last looked (at most MAX_COPY each, MAX_COPIES in all, kept in
`<local_dir>/guard/copies/`), not git's: the human's own uncommitted edits to a guarded file are kept, and no git
process is run. A guarded file the call created is named, never removed.
"""

from __future__ import annotations

import os
import stat

from rehydrate import safejson
from rehydrate.store import layout
from rehydrate.store.local import place as local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.base import Located
    from rehydrate.harness.guard.match import Watch

FOLDER = "guard"  # in the worktree's local folder: the snapshot, its restore copies, the guard log
SNAPSHOT = "snapshot"
MAGIC = "rehydrate-guard-snapshot 1"
MAX_FILES = 256  # guarded files held by the snapshot (each costs a stat on every tool call)
MAX_WALK = 20000  # entries of the work tree looked at to match the guards' globs, in all
MAX_HASH = 64 << 20  # a larger file is compared by its stat alone
MAX_COPY = 1 << 20  # a larger file has no restore copy
MAX_COPIES = 16 << 20  # restore copies, in all
MAX_SNAPSHOT = 4 << 20
SKIP = frozenset((".git", "node_modules", ".venv", "__pycache__"))


def fingerprint(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size}.{st.st_mtime_ns}.{st.st_ino}"


def folder(root: str) -> str:
    """Where the guard keeps what it alone knows for the state folder at root (never committed)."""
    return os.path.join(local.local_dir(root), FOLDER)


def quiet(root: str) -> list[Watch] | None:
    """The rejected approaches' watches when a check by effect has nothing to do: the snapshot was built from this
    10_invariants.md, holds no change not yet said, and finds every guarded file as it recorded it (its stat alone:
    a file that was only touched counts as changed here). None otherwise: the whole check must run (effect.py), and
    it alone writes. The check on every tool call starts here, and so does a per-call hook (harness/percall.py)."""
    view = fingerprint(os.path.join(root, layout.INVARIANTS))
    head, body = read(os.path.join(folder(root), SNAPSHOT))
    if head is None or head[0] != view:
        return None
    if head[1] == 0:
        return []
    snap = parse(body)
    if snap is None or snap.get("pending") != [] or safejson.dumps(snap).encode() != body:
        return None  # (a snapshot saved otherwise than the check saves it is saved again by the whole check)
    for path, entry in snap["files"].items():
        if not isinstance(entry, list) or len(entry) != 5:
            return None
        try:
            st = os.stat(path)
        except OSError:
            if entry[3]:
                return None
            continue
        if not entry[3] or [st.st_size, st.st_mtime_ns, st.st_ino] != entry[:3]:
            return None
    return [watch(w) for w in snap["watches"]]


def watch(item: object) -> Watch:
    """A watch as the snapshot keeps it ([guard, contains, line]); anything else watches nothing."""
    if isinstance(item, list) and len(item) == 3 and isinstance(item[2], str):
        g, c = item[0], item[1]
        return (g if isinstance(g, str) else None, c if isinstance(c, str) else None, item[2])
    return (None, None, "")


def read(path: str) -> tuple[tuple[str, int] | None, bytes]:
    """The snapshot's first line (the view it was built from, how many files) and the rest; (None, b"") for a
    missing, damaged or foreign one (a cache: it is then rebuilt)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None, b""
    try:
        data = os.read(fd, MAX_SNAPSHOT + 1)
    except OSError:
        return None, b""
    finally:
        os.close(fd)
    line, _, body = data.partition(b"\n")
    parts = line.decode("ascii", "replace").rsplit(" ", 2)
    if len(data) > MAX_SNAPSHOT or len(parts) != 3 or parts[0] != MAGIC or not parts[2].isdigit():
        return None, b""
    return (parts[1], int(parts[2])), body


def parse(body: bytes) -> dict[str, Any] | None:
    try:
        snap = safejson.loads(body) if body.strip() else None
    except ValueError:
        return None
    if (
        not isinstance(snap, dict)
        or not isinstance(snap.get("watches"), list)
        or not isinstance(snap.get("files"), dict)
    ):
        return None
    return snap


class Restore:
    """Whether the user asked for restores (`"guard_restore": true` in state/config.json), read when first needed:
    a check that finds every file as it was never reads the config."""

    def __init__(self, here: Located) -> None:
        self.here = here
        self.known: bool | None = None

    def __bool__(self) -> bool:
        if self.known is None:
            self.known = self.here.config.get("guard_restore") is True
        return self.known


# ------------------------------------------------------------------------------------------------ comparing


def compare(snap: dict[str, Any], restore: Restore, folder: str, project: str) -> list[dict[str, Any]]:
    """The guarded files that changed since the snapshot, each as a change (path, how, the rejected approaches'
    lines that apply, whether it was restored); the snapshot's entries brought up to date."""
    watches = snap["watches"]
    changes: list[dict[str, Any]] = []
    for path, entry in list(snap["files"].items()):
        if not isinstance(entry, list) or len(entry) != 5:
            del snap["files"][path]
            continue
        now = _look(path, entry)
        if now is None:
            continue  # as it was
        new_entry, content = now
        how = "deleted" if not new_entry[3] else ("created" if not entry[3] else "changed")
        lines = [
            str(watches[i][2])
            for i in entry[4]
            if isinstance(i, int) and 0 <= i < len(watches) and _applies(watches[i], how, content)
        ]
        restored = False
        if lines and restore and how != "created":
            restored = _put_back(path, entry[3], folder, project)
            if restored:
                new_entry = list(entry)
        snap["files"][path] = new_entry
        if lines:
            changes.append({"path": path, "how": how, "lines": lines[:5], "restored": restored,
                            "sha256": new_entry[3] if not restored else entry[3]})  # fmt: skip
    return changes


def _applies(watch: list[Any], how: str, content: bytes | None) -> bool:
    """A rejected approach that guards the file applies to its change: always, unless it watches for a text
    (`contains`): then only when the file now holds it."""
    contains = watch[1] if len(watch) > 1 else None
    if not isinstance(contains, str) or not contains:
        return True
    return how != "deleted" and content is not None and contains.encode("utf-8", "surrogatepass") in content


def _look(path: str, entry: list[Any]) -> tuple[list[Any], bytes | None] | None:
    """The file's entry now and its bytes (when they were read), or None when it is as the entry says: the stat
    first, the bytes hashed only when the stat changed."""
    try:
        st = os.stat(path)
    except OSError:
        return None if not entry[3] else ([0, 0, 0, "", entry[4]], None)
    if entry[3] and [st.st_size, st.st_mtime_ns, st.st_ino] == entry[:3]:
        return None
    sha, content = _hash(path, st)
    new = [st.st_size, st.st_mtime_ns, st.st_ino, sha, entry[4]]
    if sha == entry[3]:
        entry[:3] = new[:3]  # touched, not changed
        return None
    return new, content


def _hash(path: str, st: os.stat_result) -> tuple[str, bytes | None]:
    """The file's sha256 and its bytes; past MAX_HASH (or unreadable), a mark made of its stat."""
    import hashlib  # OpenSSL's: loaded only when a guarded file is hashed, never by a check that finds nothing guarded

    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HASH:
        return f"stat:{st.st_mode:o}:{st.st_size}:{st.st_mtime_ns}", None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return f"unreadable:{st.st_size}:{st.st_mtime_ns}", None
    try:
        parts = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            parts.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(parts)
    return hashlib.sha256(data).hexdigest(), data


def _put_back(path: str, sha: str, folder: str, project: str) -> bool:
    """The file as the snapshot saw it, from its restore copy (written to a temporary file beside it, then renamed
    over it: never half-written); False when there is no copy."""
    copy = os.path.join(folder, "copies", sha)
    try:
        with open(copy, "rb") as f:
            data = f.read(MAX_COPY + 1)
    except OSError:
        return False
    import hashlib  # as in _hash

    if len(data) > MAX_COPY or hashlib.sha256(data).hexdigest() != sha:
        return False
    target = os.path.realpath(path)
    if not _inside_project(target, os.path.realpath(project)):
        return False  # a guarded path that links out of the project is named, never written through
    tmp = f"{target}.rehydrate-restore.{os.getpid()}"
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True


# ------------------------------------------------------------------------------------------------ building


def build(root: str, old: dict[str, Any] | None, found: list[tuple[str | None, str | None, str]]) -> dict[str, Any]:
    """A snapshot of the files the rejected approaches' guards (found: watches.rejected's) name now."""
    watches = [[g, c, line] for g, c, line in found]
    project = os.path.dirname(os.path.abspath(root))
    files: dict[str, list[Any]] = {}
    walked = [0]
    for index, (pattern, _, _) in enumerate(watches):
        if not isinstance(pattern, str) or " " in pattern:
            continue  # no guard, or a command pattern: checked before the call only
        for path in _guarded(project, root, pattern, walked):
            if path in files:
                files[path][4].append(index)
            elif len(files) < MAX_FILES:
                files[path] = _entry(path, [index], (old or {}).get("files", {}).get(path))
    capped = len(files) >= MAX_FILES or walked[0] >= MAX_WALK
    return {"watches": watches, "files": files, "pending": [], "capped": capped}


def _entry(path: str, indices: list[int], known: list[Any] | None) -> list[Any]:
    """A file's entry: its stat and sha256 ("" when absent), taken from the old snapshot when the stat is the same."""
    try:
        st = os.stat(path)
    except OSError:
        return [0, 0, 0, "", indices]
    if (
        isinstance(known, list)
        and len(known) == 5
        and known[3]
        and known[:3] == [st.st_size, st.st_mtime_ns, st.st_ino]
    ):
        return [*known[:4], indices]
    return [st.st_size, st.st_mtime_ns, st.st_ino, _hash(path, st)[0], indices]


def _guarded(project: str, state_root: str, pattern: str, walked: list[int]) -> list[str]:
    """The files of the work tree a guard names: a plain path as it is (existing or not: its creation is a change),
    a glob matched against the tree from its longest folder without a wildcard (the whole tree for a bare file-name
    glob, which matches a file's name anywhere), MAX_WALK entries in all at most."""
    from rehydrate.harness.guard.match import matches  # a rebuild's: a check with nothing to do needs none

    pattern = pattern.lstrip("/")  # a guard is the project's: `/etc/x` or `../x` never names a file outside it
    if not any(c in pattern for c in "*?[") and "/" in pattern:
        path = os.path.normpath(os.path.join(project, pattern))
        return [path] if _inside_project(path, project) else []
    fixed = pattern.split("/")
    prefix: list[str] = []
    for part in fixed[:-1]:
        if any(c in part for c in "*?["):
            break
        prefix.append(part)
    start = os.path.normpath(os.path.join(project, *prefix)) if prefix else project
    if not _inside_project(start, project):
        return []
    state = os.path.abspath(state_root)
    out: list[str] = []
    stack = [start]
    while stack and walked[0] < MAX_WALK and len(out) < MAX_FILES:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for item in sorted(entries, key=lambda e: e.name):
            walked[0] += 1
            if item.name in SKIP or item.path == state:
                continue
            if item.is_dir(follow_symlinks=False):
                stack.append(item.path)
            elif matches(pattern, item.path, os.path.relpath(item.path, project), None):
                out.append(item.path)
    return out


def _inside_project(path: str, project: str) -> bool:
    rel = os.path.relpath(path, project)
    return rel != ".." and not rel.startswith(".." + os.sep) and not os.path.isabs(rel)


def save(folder: str, view: str, snap: dict[str, Any], restore: Restore) -> None:
    """The snapshot written whole (a temporary file renamed over it); with restore, each guarded file's copy. A
    snapshot that cannot be written is built again at the next call (the check costs more, it is not lost)."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if restore:
            _copies(folder, snap)
        body = safejson.dumps(snap).encode()
        watched = len(snap["watches"]) + len(snap["files"]) + len(snap["pending"])  # 0: nothing to look at
        data = f"{MAGIC} {view} {watched}\n".encode() + body
        tmp = os.path.join(folder, f".{SNAPSHOT}.{os.getpid()}")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(folder, SNAPSHOT))
    except OSError:
        pass


def _copies(folder: str, snap: dict[str, Any]) -> None:
    """Each guarded file's bytes as the snapshot saw them (by sha256), for a restore; MAX_COPY each and MAX_COPIES in
    all at most; the copies no entry names removed."""
    import hashlib  # as in _hash

    where = os.path.join(folder, "copies")
    os.makedirs(where, mode=0o700, exist_ok=True)
    wanted: set[str] = set()
    room = MAX_COPIES
    for path, entry in snap["files"].items():
        sha, size = entry[3], entry[0]
        if not sha or len(sha) != 64 or size > MAX_COPY or size > room:
            continue
        room -= size
        wanted.add(sha)
        copy = os.path.join(where, sha)
        if os.path.exists(copy):
            continue
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_COPY + 1)
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == sha:
            with open(copy, "wb") as f:
                f.write(data)
    for name in os.listdir(where):
        if name not in wanted:
            try:
                os.unlink(os.path.join(where, name))
            except OSError:
                pass
