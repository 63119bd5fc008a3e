"""A file created once, whole or not at all, never over another: a message file, a joining actor's first log.

(fs/write.py's other writes replace or append; this one must never replace. Its system calls are fsio's `calls`, so that
the crash simulator sees them.)
"""

from __future__ import annotations

import os

from rehydrate.fs import write as fsio
from rehydrate.fs.read import ANY, Words, failing


def create_new(path: str, data: bytes, point: str, words: Words = ANY) -> None:
    """Create path holding data: a temporary file in the same folder, synced (sync point point.file), hard-linked
    to path without replacing (a file already there is an error), then the folder synced (point.dir)."""
    calls = fsio.calls
    tmp = fsio.temp_name(path)
    with failing(path, "create", words):
        fd = calls.open(tmp, fsio.CREATE_FLAGS, 0o644)
        try:
            view = memoryview(data)
            while view:  # one write in practice; a short write is finished
                view = view[calls.write(fd, bytes(view)) :]
            calls.fsync(fd, point + ".file")
            calls.link(tmp, path)
        finally:
            calls.close(fd)
            try:
                calls.unlink(tmp)
            except OSError:
                pass
    fsio.fsync_dir(os.path.dirname(path), point + ".dir", words)
