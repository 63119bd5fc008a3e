"""Evidence for claims: receipts (a command run: its exit code and the tree it ran on), stamps (files' sha256) and
approvals (a reviewer's file accepted against its finished transcript), and the claims a checkpoint binds to them.

Records (each in the writer's own log, written under the state's lock):
- `receipt`: `data = {"argv", "cwd", "exit", "duration", "stdout", "stderr", "bytes", "tree"[, "tree_after"]
  [, "output_cut"][, "claim"]}`; `git` as a checkpoint's (HEAD, branch, dirty). Its id is `rc-` and the first 12 hex
  digits of its `h`: it names the record it is the hash of, and cannot be minted for another. `tree` is the git tree
  of the work tree when the command started (`tree_of`): tracked and untracked files that git does not ignore, the
  state folder left out; `tree_after` when the command left another. `duration` runs to the command's own exit;
  `output_cut` (true) when a process it left behind still held its stdout or stderr then: `stdout`, `stderr` and
  `bytes` cover what was read until then and for a short grace after (rehydrate/runner.py).
- `stamp` and `accept`: `data = {"files": [...] | "file", ..., "evidence": {...}}`.
- `checkpoint`: `data.claims = [{"text", "receipt"?: {"id", "h", "exit", "tree", "tree_after"?, "argv", "ts"}}]`
  (a receipt's facts copied, so that the check needs the checkpoint alone) and `data.evidence`.

`evidence` is the whole set in force: `{"stamps": {path: sha256}, "approvals": {path: {"sha256", "transcript",
"transcript_sha256", "harness", "ts"}}}`. Every stamp, accept and checkpoint record carries it whole, so the newest of
them since the last checkpoint (store/wal/since.py reads back that far anyway) holds it, and a rotate record carries
it in the checkpoint it carries: what is checked costs what is stamped, never the length of the history.

Paths are the project's (the state folder's parent), relative and with `/`. Everything read back from a record is
untrusted (it arrived by git pull): a path must pass `safe_rel` before a file is opened, a hash is compared, never
used as an argument, and a command line is shown as data, never suggested as a command to run.
"""

from __future__ import annotations

import itertools
import os

from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import write as fsio
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

PREFIX = "rc-"  # a receipt's id: PREFIX and the first ID_HEX hex digits of its record's hash
ID_HEX = 12
MAX_CLAIMS = 16  # claims on one checkpoint
MAX_CLAIM = 300  # characters of a claim's text
MAX_STAMPS = 256  # files stamped or approved at once in force
MAX_ARGV = 4000  # characters of a receipt's command line kept (the rest cut, and said)
LOOKUP_BYTES = 64 << 20  # how far back `checkpoint --receipt ID` looks for the receipt
HASH_LIMIT = 1 << 30  # the largest file stamped (its hash is read in full at every check)
_CHUNK = 1 << 20
APPROVAL_FIELDS = ("sha256", "transcript", "transcript_sha256", "harness", "session")


def receipt_id(rec: Record) -> str:
    return PREFIX + str(rec["h"])[:ID_HEX]


def parse_id(text: str) -> str:
    """A receipt id as given (rc-<hex>, or its hex alone, at least 8 digits): the hex, lower case."""
    raw = text.strip().lower()
    raw = raw[len(PREFIX) :] if raw.startswith(PREFIX) else raw
    if not 8 <= len(raw) <= 64 or any(c not in "0123456789abcdef" for c in raw):
        raise UsageError(f"{text!r} is not a receipt id", "a receipt id is what `rehydrate run` printed: rc-<hex>")
    return raw


# ------------------------------------------------------------------------------------------------ paths and hashes


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
    import stat

    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{given} is a symbolic link", "name the file it points to")
    if os.path.realpath(full) != os.path.join(os.path.realpath(project), rel):
        raise UsageError(f"{given} is reached through a symbolic link", "name the file by its own path")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{given} is not a regular file")
    if st.st_size > HASH_LIMIT:
        raise UsageError(f"{given} is larger than {HASH_LIMIT >> 20:,} MiB", "stamp smaller files")
    return rel.replace(os.sep, "/")


def safe_rel(path: object) -> str | None:
    """A recorded path (untrusted) when it is a plain relative path inside the project, else None: no absolute
    path, no `..`, no empty or `.` part, no NUL or control character, at most 4,096 characters."""
    if not isinstance(path, str) or not 0 < len(path) <= 4096 or path.startswith("/"):
        return None
    if any(ord(c) < 32 or c == "\x7f" for c in path):
        return None
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    return path


def file_sha(full: str, limit: int = HASH_LIMIT) -> str | None:
    """The sha256 of a regular file (not following a symlink, never blocking on a FIFO), None when it is absent, not
    a regular file, or larger than limit."""
    import hashlib
    import stat

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


# ------------------------------------------------------------------------------------------------ the tree


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
    from rehydrate.store.git.plumb import Git, GitFailed
    from rehydrate.store.local import place as local

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
    from rehydrate.store.git import index as gitindex

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
    from rehydrate.store.git.plumb import Git, GitFailed
    from rehydrate.store.local import place as local

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


def is_hex(text: object) -> bool:
    """A git or sha256 hash in lower-case hex."""
    return isinstance(text, str) and len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _first_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace").strip().split("\n")
    return text[0][:200] if text and text[0] else "no message"


# ------------------------------------------------------------------------------------------------ what is in force


def empty() -> dict[str, Any]:
    return {"stamps": {}, "approvals": {}}


def in_force(value: object) -> dict[str, Any]:
    """A record's `data.evidence` (untrusted) as {"stamps": {path: sha}, "approvals": {path: {...}}}: entries whose
    path is not safe_rel or whose hash is not a hash are left out."""
    out = empty()
    if not isinstance(value, dict):
        return out
    stamps, approvals = value.get("stamps"), value.get("approvals")
    if isinstance(stamps, dict):  # at most MAX_STAMPS in all, as a write allows: a planted record cannot ask for more
        out["stamps"] = dict(
            itertools.islice(((p, s) for p, s in stamps.items() if safe_rel(p) and is_hex(s)), MAX_STAMPS)
        )
    if isinstance(approvals, dict):
        left = MAX_STAMPS - len(out["stamps"])
        found = (
            (p, a) for p, a in approvals.items() if safe_rel(p) and isinstance(a, dict) and is_hex(a.get("sha256"))
        )
        out["approvals"] = dict(itertools.islice(found, max(left, 0)))
    return out


def carried(value: dict[str, Any]) -> dict[str, Any] | None:
    """What a record carries: the set, or None when nothing is stamped or approved (records stay as they were)."""
    return value if value["stamps"] or value["approvals"] else None


class Gathered:
    """What a write needs from the log since the last checkpoint: the evidence in force, the receipts with a claim
    written since (each text's newest, as claims), and the receipts looked up by id."""

    def __init__(self) -> None:
        self.evidence = empty()
        self.pending: dict[str, dict[str, Any]] = {}
        self.found: dict[str, Record] = {}
        self.complete = False


def current(after: list[Record], found: Record | None) -> Any:
    """The evidence in force (untrusted, as recorded) from the records after the last checkpoint (newest first) and
    the record the checkpoint was found in: the newest stamp or accept record's, else the rotate record's (what was
    in force when its log was archived), else the checkpoint's. Shared by since.py and gather."""
    from rehydrate.store.wal.since import anchor_of

    for rec in after:
        if rec["op"] in ("stamp", "accept"):
            return rec["data"].get("evidence")
    if found is None:
        return None
    if found["op"] == "rotate" and "evidence" in found["data"]:
        return found["data"]["evidence"]
    anchor = anchor_of(found)
    data = anchor.get("data") if anchor is not None else None
    return data.get("evidence") if isinstance(data, dict) else None


def pending(after: list[Record]) -> dict[str, dict[str, Any]]:
    """The claims of the `receipt` records after the last checkpoint (newest first), oldest text first, each text's
    newest receipt winning: {text: claim}."""
    out: dict[str, dict[str, Any]] = {}
    for rec in reversed(after):
        text = rec["data"].get("claim") if rec["op"] == "receipt" else None
        if isinstance(text, str):
            out.pop(text, None)
            out[text] = claim_of(text, rec)
    return out


def gather(state: State, snap: Snapshot, wanted: list[str] | None = None) -> Gathered:
    """Read my log back (my line of work, after a merge) to the last checkpoint (or init, join, rotate), and on while
    a wanted receipt id (hex) is not found, at most LOOKUP_BYTES. When the last record is the checkpoint (or carries
    one) and no id is wanted, nothing is read."""
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal.since import anchor_of

    got = Gathered()
    want = set(wanted or [])
    after: list[Record] = []
    found: Record | None = None
    one_line = len(snap.heads) <= 1 and not snap.merged
    if not want and one_line and anchor_of(snap.last) is not None:
        found = snap.last
    else:
        back = walback.Back(state.wal_path, LOOKUP_BYTES)
        for _, rec in walback.along(back, snap.last["h"]) if not one_line else _needed(back):
            if rec["op"] == "receipt":
                for w in [w for w in want if str(rec["h"]).startswith(w)]:
                    got.found[w] = rec
                    want.discard(w)
            if found is None:
                if anchor_of(rec) is not None:
                    found = rec
                else:
                    after.append(rec)
            if found is not None and not want:
                break
    if want:
        missing = ", ".join(PREFIX + w for w in sorted(want))
        raise UsageError(
            f"no receipt {missing} in {state.wal_rel} (its last {LOOKUP_BYTES >> 20} MiB)",
            "a receipt is what `rehydrate run` printed as `receipt: rc-...`, in this actor's own log",
        )
    got.complete = found is not None
    got.evidence = in_force(current(after, found))
    got.pending = pending(after)
    return got


_OPS = ("receipt", "stamp", "accept", "checkpoint", "init", "join", "rotate")
_NEEDLES = tuple(f'"op":"{op}"'.encode() for op in _OPS)


def _needed(back: Any) -> Any:
    """The records read back that can matter here, decoded: a line whose bytes name none of these ops (an entry, a
    compaction, a mail record) is skipped undecoded, as since.py skips resume records: its cost is the bytes read."""
    from rehydrate.store.wal import back as walback

    for offset, raw in back.lines():
        if any(n in raw for n in _NEEDLES):
            yield offset, walback.decode(raw, offset)


def claim_of(text: str, receipt: Record | None) -> dict[str, Any]:
    """A claim as a checkpoint records it: its text and its receipt's facts."""
    claim: dict[str, Any] = {"text": text}
    if receipt is not None:
        data = receipt["data"]
        facts = {"id": receipt_id(receipt), "h": receipt["h"], "ts": receipt["ts"]}
        for key in ("exit", "tree", "tree_after", "argv"):
            if key in data:
                facts[key] = data[key]
        claim["receipt"] = facts
    return claim


def claims_for(gathered: Gathered, given: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """The claims a checkpoint records: those given (text, receipt id's hex or None), then the receipts with a claim
    written since the last checkpoint whose text was not given (each text's newest receipt)."""
    claims = [claim_of(text, gathered.found.get(rid) if rid else None) for text, rid in given]
    named = {c["text"] for c in claims}
    claims += [claim for text, claim in gathered.pending.items() if text not in named]
    if len(claims) > MAX_CLAIMS:
        raise UsageError(f"{len(claims)} claims on one checkpoint, more than {MAX_CLAIMS}", "claim what matters")
    return claims


def clean_claim(text: str) -> str:

    claim = clean(text, one_line=True)
    if not claim:
        raise UsageError("a claim is empty", "say what is claimed, for example `tests pass`", field="claim")
    if len(claim) > MAX_CLAIM:
        raise UsageError(f"a claim is {len(claim)} characters, more than {MAX_CLAIM}", field="claim")
    return claim


def prepare(state: State, snap: Snapshot, op: str, data: dict[str, Any]) -> None:
    """Under the lock, before a stamp, accept or checkpoint record is sealed: the evidence in force carried forward
    (with this record's files added), and a checkpoint's claims resolved."""
    given = data.pop("_claims", None) or []
    wanted = [rid for _, rid in given if rid]
    got = gather(state, snap, wanted)
    force = got.evidence
    if op == "stamp":
        for path in data.get("dropped", []):
            if path not in force["stamps"] and path not in force["approvals"]:
                raise UsageError(f"{path} is not stamped or approved", "`rehydrate status` lists what is")
            force["stamps"].pop(path, None)
            force["approvals"].pop(path, None)
        force["stamps"].update(data["files"])
    elif op == "accept":
        force["approvals"][data["file"]] = {k: data[k] for k in APPROVAL_FIELDS if k in data}
    if len(force["stamps"]) + len(force["approvals"]) > MAX_STAMPS:
        raise UsageError(
            f"more than {MAX_STAMPS} files stamped or approved at once",
            "drop the stamps that no longer matter with `rehydrate stamp --drop FILE`",
        )
    if op == "checkpoint":
        claims = claims_for(got, given)
        if claims:
            data["claims"] = claims
    kept = carried(force)
    if kept is not None or op != "checkpoint":
        data["evidence"] = kept if kept is not None else empty()


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
