"""What this actor's log says of mail and promises (the ids its `read` records name, its promises), read through a
per-worktree cache (`mail.<actor>.json` in this worktree's local folder): only the part of the log after what the cache
covered is read, and the whole log when the log was replaced, cut or changed before that point."""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, records
from rehydrate.store.local import place as local
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.state import State


class Known:
    """What this actor's log says of mail and promises: the ids its `read` records name, its promises by id, in the
    order made ({"text", "ts", "done"})."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.promises: dict[str, dict[str, Any]] = {}

    def add(self, rec: dict[str, Any]) -> None:
        data = rec["data"]
        if (
            records.op_of(rec) is records.ROTATE
        ):  # the log before it archived: what it knew of mail and promises, carried
            self.read, self.promises = set(), {}
            carried = data.get("mail")
            if isinstance(carried, dict):
                read, promised = carried.get("read"), carried.get("promises")
                if isinstance(read, list):
                    self.read.update(i for i in read if isinstance(i, str))
                if isinstance(promised, dict):
                    self.promises.update(
                        (k, {"text": v["text"], "ts": v.get("ts"), "done": False})
                        for k, v in promised.items()
                        if isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("text"), str)
                    )
            return
        if records.op_of(rec) is records.READ:
            names = data.get("mail")
            if isinstance(names, list):
                self.read.update(i for i in names if isinstance(i, str))
            return
        ident = data.get("id")
        if not isinstance(ident, str):
            return
        if data.get("done") is True:
            if ident in self.promises:
                self.promises[ident]["done"] = True
        elif isinstance(data.get("text"), str) and ident not in self.promises:
            self.promises[ident] = {"text": data["text"], "ts": rec.get("ts"), "done": False}


def _tells(op: records.Op) -> bool:
    """Whether a record of op tells what its actor knows of its mail: a read or a promise, or a rotate (carrying
    what the archived log knew)."""
    return op.known or op is records.ROTATE


_MARKS = tuple(f'"op":"{name}"'.encode() for name, op in records.OPS.items() if _tells(op))


_MARK = 32  # bytes before the cached end that must still be there for the cache to hold


def known(state: State) -> Known:
    """This actor's read set and promises: from a per-worktree cache (store/local/place.py) and the part of the log
    after what it covered, or the whole log when the log was replaced, cut or changed before that point. Only the lines
    that name a read or promise op are decoded; a line that does not decode is left out (`rehydrate verify` names
    it)."""
    found = Known()
    opened = fsio.open_stat(state.wal_path, WORDS) if fsio.lstat(state.wal_path) is not None else None
    if opened is None:
        return found
    fd, st = opened
    try:
        cache_path, start = _load(state, st, fd, found)
        data = os.pread(fd, st.st_size - start, start)
    finally:
        os.close(fd)
    end = data.rfind(b"\n") + 1
    for line in data[:end].split(b"\n"):
        if any(m in line for m in _MARKS):
            try:
                rec = wal.decode(line)
            except wal.BadRecord:
                continue
            if _tells(records.op_of(rec)) and isinstance(rec.get("data"), dict):
                found.add(rec)
    if cache_path is not None and end > 0:
        _save(cache_path, st, start + end, data[:end][-_MARK:] if end >= _MARK else None, found)
    return found


def _cache_path(state: State) -> str | None:
    try:
        folder = local.local_dir(state.root)
        for path in (os.path.dirname(folder), folder):  # not state: created without a sync
            fsio.ensure_dir(path, None, WORDS)
        return os.path.join(folder, f"mail.{state.actor}.json")
    except (OSError, ValueError, RehydrateError):
        return None


def _load(state: State, st: os.stat_result, fd: int, found: Known) -> tuple[str | None, int]:
    """(the cache's path, the offset the scan starts from), found filled from the cache when it holds."""
    path = _cache_path(state)
    if path is None:
        return None, 0
    try:
        raw, _ = fsio.read_small(path, 16 << 20)
        cache = safejson.loads(raw) if raw else None
        if not isinstance(cache, dict):
            return path, 0
        body = cache.get("body")
        if not isinstance(body, dict) or wal.sha256(safejson.dumps_canonical(body)) != cache.get("sum"):
            return path, 0
        size, mark = body["size"], body["mark"]
        if body["ino"] != st.st_ino or not 0 < size <= st.st_size or not isinstance(mark, str):
            return path, 0
        if os.pread(fd, _MARK, size - _MARK).hex() != mark:
            return path, 0
        found.read = set(body["read"])
        found.promises = dict(body["promises"])
        return path, size
    except Exception:  # a cache that is not ours: the whole log is read
        found.read, found.promises = set(), {}
        return path, 0


def _save(path: str, st: os.stat_result, size: int, mark: bytes | None, found: Known) -> None:
    if mark is None:
        return
    body = {
        "ino": st.st_ino,
        "size": size,
        "mark": mark.hex(),
        "read": sorted(found.read),
        "promises": found.promises,
    }
    text = safejson.dumps_canonical({"body": body, "sum": wal.sha256(safejson.dumps_canonical(body))})
    fsio.write_hint(path, text)


def carried(state: State) -> dict[str, Any]:
    """What a rotate record carries of this actor's mail and promises: the ids read, the promises still open."""
    found = known(state)
    open_ = {k: {"text": v["text"], "ts": v.get("ts")} for k, v in found.promises.items() if not v.get("done")}
    return {"read": sorted(found.read), "promises": open_}


def read_set(state: State) -> set[str]:
    """The ids this actor's `read` records name."""
    return known(state).read
