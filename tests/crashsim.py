"""A crash simulator for the state store, in the manner of SQLite's test6.c.

`Recorder` replaces `rehydrate.fs.write.calls`: it performs every system call for real and logs it. `Model` replays a
prefix of the log and rebuilds the disk as a crash at that point could leave it:

- ``keep``: every call so far reached the disk (the process was killed; the kernel survived);
- ``drop``: only what was synced survived (power loss): file data up to its last fsync, folder entries up to the
  folder's last fsync; a renamed or created file whose folder was not synced is not there;
- ``torn-keep`` / ``torn-drop`` with a byte count: as above, but the last write reached the disk only in part.

A sync point can be switched off in the model (its fsyncs do nothing), to show that the tests notice.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rehydrate.fs import write as fsio

Op = tuple[Any, ...]


class Recorder(fsio.Calls):
    """The real system calls, logged with paths relative to `base`."""

    def __init__(self, base: str) -> None:
        self.base = os.path.realpath(base)
        self.ops: list[Op] = []
        self.fds: dict[int, list[Any]] = {}  # fd -> [kind, relpath, append, position]

    def rel(self, path: str) -> str:
        return os.path.relpath(os.path.realpath(os.path.abspath(path)), self.base)

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        existed = os.path.lexists(path)
        fd = super().open(path, flags, mode)
        rel = self.rel(path)
        if flags & getattr(os, "O_DIRECTORY", 0):
            self.fds[fd] = ["dir", rel, False, 0]
        else:
            if not existed and flags & os.O_CREAT:
                self.ops.append(("create", rel))
            elif flags & os.O_TRUNC:
                self.ops.append(("truncate", rel, 0))
            self.fds[fd] = ["file", rel, bool(flags & os.O_APPEND), 0]
        return fd

    def write(self, fd: int, data: bytes) -> int:
        n = super().write(fd, data)
        entry = self.fds[fd]
        self.ops.append(("write", entry[1], None if entry[2] else entry[3], bytes(data[:n])))
        entry[3] += n
        return n

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        n = super().pwrite(fd, data, offset)
        self.ops.append(("write", self.fds[fd][1], offset, bytes(data[:n])))
        return n

    def fsync(self, fd: int, point: str) -> None:
        super().fsync(fd, point)
        kind, rel = self.fds[fd][0], self.fds[fd][1]
        self.ops.append(("fsync_dir" if kind == "dir" else "fsync", rel, point))

    def close(self, fd: int) -> None:
        super().close(fd)
        self.fds.pop(fd, None)

    def replace(self, src: str, dst: str) -> None:
        super().replace(src, dst)
        self.ops.append(("replace", self.rel(src), self.rel(dst)))

    def link(self, src: str, dst: str) -> None:
        super().link(src, dst)
        self.ops.append(("link", self.rel(src), self.rel(dst)))

    def mkdir(self, path: str) -> None:
        super().mkdir(path)
        self.ops.append(("mkdir", self.rel(path)))

    def unlink(self, path: str) -> None:
        super().unlink(path)
        self.ops.append(("unlink", self.rel(path)))

    def ftruncate(self, fd: int, size: int) -> None:
        super().ftruncate(fd, size)
        self.ops.append(("truncate", self.fds[fd][1], size))


@dataclass
class _Inode:
    data: bytearray = field(default_factory=bytearray)
    synced: bytes = b""


@dataclass
class _Dir:
    names: dict[str, Any] = field(default_factory=dict)  # name -> inode number (file) or "dir"
    synced: dict[str, Any] = field(default_factory=dict)


class Model:
    """The disk after replaying ops on an empty, durable base folder."""

    def __init__(self, disabled: frozenset[str] = frozenset()) -> None:
        self.disabled = disabled
        self.inodes: dict[int, _Inode] = {}
        self.dirs: dict[str, _Dir] = {".": _Dir()}
        self.last_write: tuple[int, int, int] | None = None  # inode, length before, length after

    def _split(self, rel: str) -> tuple[str, str]:
        parent, name = os.path.split(rel)
        return parent or ".", name

    def _ino(self, rel: str) -> int:
        parent, name = self._split(rel)
        return int(self.dirs[parent].names[name])

    def apply(self, op: Op) -> None:
        kind = op[0]
        self.last_write = None
        if kind == "mkdir":
            parent, name = self._split(op[1])
            self.dirs[parent].names[name] = "dir"
            self.dirs[op[1]] = _Dir()
        elif kind == "create":
            parent, name = self._split(op[1])
            ino = len(self.inodes) + 1
            self.inodes[ino] = _Inode()
            self.dirs[parent].names[name] = ino
        elif kind == "write":
            node = self.inodes[self._ino(op[1])]
            before = len(node.data)
            pos = before if op[2] is None else op[2]
            node.data[pos : pos + len(op[3])] = op[3]
            self.last_write = (self._ino(op[1]), before, len(node.data))
        elif kind == "fsync":
            if op[2] not in self.disabled:
                node = self.inodes[self._ino(op[1])]
                node.synced = bytes(node.data)
        elif kind == "fsync_dir":
            if op[2] not in self.disabled:
                d = self.dirs[op[1]]
                d.synced = dict(d.names)
        elif kind == "replace":
            sp, sn = self._split(op[1])
            dp, dn = self._split(op[2])
            self.dirs[dp].names[dn] = self.dirs[sp].names.pop(sn)
        elif kind == "link":
            sp, sn = self._split(op[1])
            dp, dn = self._split(op[2])
            self.dirs[dp].names[dn] = self.dirs[sp].names[sn]
        elif kind == "unlink":
            parent, name = self._split(op[1])
            self.dirs[parent].names.pop(name)
        elif kind == "truncate":
            node = self.inodes[self._ino(op[1])]
            del node.data[op[2] :]
        else:  # pragma: no cover - a new system call in fsio must be modelled here
            raise AssertionError(f"unknown op {op!r}")

    def materialize(self, target: str, variant: str, cut: int = 0) -> None:
        """Write the disk as the variant leaves it into target (an empty folder)."""
        durable = variant in ("drop", "torn-drop")
        torn = self.last_write if variant.startswith("torn") else None

        def content(ino: int) -> bytes:
            node = self.inodes[ino]
            full = bytes(node.data)
            if torn and torn[0] == ino:
                _, before, after = torn
                partial = full[before : before + min(cut, after - before)]
                if not durable:
                    return full[:before] + partial
                if len(node.synced) == before:  # everything before the torn write was synced
                    return node.synced + partial
            return node.synced if durable else full

        def walk(rel: str, out: str) -> None:
            d = self.dirs[rel]
            for name, what in (d.synced if durable else d.names).items():
                child = name if rel == "." else os.path.join(rel, name)
                if what == "dir":
                    if child in self.dirs:
                        os.mkdir(os.path.join(out, name))
                        walk(child, os.path.join(out, name))
                else:
                    with open(os.path.join(out, name), "wb") as f:
                        f.write(content(int(what)))

        walk(".", target)


def replay(ops: list[Op], k: int, disabled: frozenset[str] = frozenset()) -> Model:
    model = Model(disabled)
    for op in ops[:k]:
        model.apply(op)
    return model


def variants(model: Model) -> list[tuple[str, int]]:
    """The crash images worth building at this point."""
    out: list[tuple[str, int]] = [("keep", 0), ("drop", 0)]
    if model.last_write:
        _, before, after = model.last_write
        n = after - before
        for cut in sorted({1, n // 2, n - 1}):
            if 0 < cut < n:
                out += [("torn-keep", cut), ("torn-drop", cut)]
    return out


def enumerate_cases(
    ops: list[Op],
    ends: list[int],
    names: list[str],
    snaps: list[Any],
    recover: Callable[[str], Any],
    disabled: frozenset[str],
    stop_at_first: bool,
    *,
    first: int = 0,
    extra: Callable[[int, int], list[Any]] | None = None,
) -> tuple[int, list[str]]:
    """Every crash point (from op `first`; 0 is before the first op) and every variant of each: the disk rebuilt
    as it could be, recovered, and compared with the states allowed there (the step's before and after; extra(c, k)
    adds more). names[c] labels step c, which ends at op ends[c]; snaps[c] is the state before step c. Returns
    (cases, failures)."""
    failures: list[str] = []
    cases = 0
    starts = [0, *ends[:-1]]
    for k in range(first, len(ops) + 1):
        if k == 0:
            allowed, label = [snaps[0]], "before init"
        else:
            c = next(i for i, (s, e) in enumerate(zip(starts, ends, strict=True)) if s < k <= e)
            label = f"{names[c]} #{c + 1}, op {k - starts[c]}/{ends[c] - starts[c]} {ops[k - 1][:2]}"
            allowed = [snaps[c + 1]] if k == ends[c] else [snaps[c], snaps[c + 1]]
            allowed += extra(c, k) if extra is not None else []
        model = replay(ops, k, disabled)
        for variant, cut in variants(model):
            cases += 1
            image = tempfile.mkdtemp(prefix="crash-")
            try:
                model.materialize(image, variant, cut)
                got = recover(image)
            finally:
                shutil.rmtree(image)
            if got not in allowed:
                detail = got[1] if isinstance(got, tuple) and got and got[0] == "problems" else "a different state"
                failures.append(f"{label} [{variant} {cut}]: {detail}")
                if stop_at_first:
                    return cases, failures
    return cases, failures
