"""What this process last wrote of a state, kept in its State object from one command to the next (a loop of
checkpoints, an MCP server, a test), so that the next command neither reads back nor decodes it: the rollback cache
(wal/.<actor>.seen) as it was saved, the log's last record as it was appended, a replaceable view's bytes as they
were written.

Everything in state/ may have changed between two commands (another process, an editor, a `git pull`): an entry is
used only while its file's fingerprint (seen.fingerprint: device, inode, size, mtime, ctime) is the one the file had
right after this process wrote it, checked with one lstat (or with the stat the command makes of the log anyway),
exactly as the .seen cache trusts a view it wrote. Any other fingerprint, and the file is read as if nothing were
known. The memo holds nothing the files do not: losing it costs a read.
"""

from __future__ import annotations

import os
import stat

from rehydrate.fs import write as fsio
from rehydrate.store.local.seen import Seen, fingerprint
from rehydrate.store.wal import back as walback

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from rehydrate.store.wal.record import Record

_VIEW_MAX = 64 << 10  # a view's bytes are kept up to this size (99_next.md is far smaller; a long handoff is not kept)


class Memo:
    """One State object's memory of its own writes, each entry with its file's fingerprint after the write."""

    __slots__ = ("last", "seen", "teammates", "views", "wal_dir")

    def __init__(self) -> None:
        self.seen: tuple[str, Seen] | None = None  # the .seen file's fingerprint once saved, and the cache saved
        self.last: tuple[str, int, Record] | None = None  # the log's fingerprint after an append, the offset and
        # the record of its last line
        self.views: dict[str, tuple[str, bytes]] = {}  # a view's fingerprint after it was replaced, and its bytes
        self.wal_dir = ""  # wal/'s fingerprint as this command found it
        self.teammates = ""  # wal/'s fingerprint when this process last found the teammates' logs as it saw them
        # (store/local/teamseen.py): while it holds, no log was created, replaced or removed there since

    def load_seen(self, path: str, old: str | None = None) -> Seen | None:
        """The rollback cache: a copy of the one this process saved while the file is still that one, else read;
        while there is no file at path, the one at `old` (where earlier versions kept it) is read instead."""
        known = self.seen
        if known is not None and _same(path, known[0]):
            return known[1].copy()
        self.seen = None
        seen = Seen.load(path)
        if seen is None and old is not None and not os.path.lexists(path):
            seen = Seen.load(old)
        return seen

    def saved_seen(self, st: os.stat_result | None, seen: Seen) -> None:
        """The cache was written (st: the file's fstat after the write; None: not written). Kept as it is, not
        copied: flush, which saves it, is a command's last step; load_seen hands out copies."""
        self.seen = (fingerprint(st), seen) if st is not None else None

    def appended(self, log_fp: str, offset: int, rec: Record) -> None:
        """rec was appended to the log as its last line, at offset; log_fp: the log's fingerprint after the write."""
        self.last = (log_fp, offset, rec)

    def tail(self, log_fp: str, size: int, seen: Seen) -> walback.Tail | None:
        """The log's last record without reading it: the log is as this process left it after an append (its
        fingerprint log_fp, from the stat reconciliation makes), and the cache ends with that same record."""
        known = self.last
        if known is None or known[0] != log_fp or known[1] != seen.at:
            return None
        rec = known[2]
        if (rec["seq"], str(rec["h"])[:16]) != seen.end:
            return None
        return walback.Tail([(known[1], rec)], b"", size, "")

    def wrote_view(self, name: str, st: os.stat_result, data: bytes) -> None:
        """A view was replaced by data (st: the new file's fstat after the rename)."""
        if len(data) <= _VIEW_MAX:
            self.views[name] = (fingerprint(st), data)
        else:
            self.views.pop(name, None)

    def view(self, name: str, path: str, found: str | None = None) -> bytes | None:
        """A view's bytes as this process wrote them, while the file at path is still that one; else None. found:
        the fingerprint this command found the file with (under its lock), if it looked: then it is not looked at
        again."""
        known = self.views.get(name)
        if known is None:
            return None
        if found == known[0] or _same(path, known[0]):
            return known[1]
        del self.views[name]
        return None


def _same(path: str, fp: str) -> bool:
    """Whether the regular file at path (never followed if a link) has the fingerprint fp."""
    st = fsio.lstat(path)
    return st is not None and stat.S_ISREG(st.st_mode) and fingerprint(st) == fp
