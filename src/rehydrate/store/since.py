"""What the WAL holds since the last checkpoint: the records a recovery reads back to, newest first.

Contract of `find(state, snap, max_bytes=HOOK_BYTES) -> Since` (WP-A builds it on `wal.read_back(path, max_bytes)`,
which yields strictly decoded records newest first; until then find() returns an empty Since, `complete` False):
- Reads back from the WAL's end to the last `checkpoint` record (or `init`, or a `rotate` record's
  `data.checkpoint`), at most max_bytes: the cost follows what was written since the checkpoint, not the history.
- Built once per command by its face (brief.resume, cli/recover.py, harness/capture.py) and handed to the checks in
  `Context.since`; checks never read the WAL or import the harness themselves.
- When max_bytes is reached first, the checkpoint's fields come from state/99_next.md's header (seq, minute, 7-char
  HEAD, as reconciliation verified it), `complete` is False, and the checks that need the exact record say so.
- Every field is untrusted (the WAL arrived by git pull): strings are used as data, paths as candidates that must
  pass their reader's tests (checks/recency.py), never trusted as this host's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.reconcile import Snapshot
    from rehydrate.store.state import State

HOOK_BYTES = 4 << 20  # the most the back-scan reads on the hook path (and in recover)
MAX_TRANSCRIPTS = 3  # the most transcript references kept, newest first


class TranscriptRef:
    """A transcript a hook recorded after the checkpoint: its path (untrusted), harness (claude, codex, gemini),
    session id, size in bytes when recorded (None: the file did not exist yet), host (os.uname().nodename, cleaned),
    and the record's seq, ts and op (compaction, precompress or resume)."""

    __slots__ = ("harness", "host", "op", "path", "seq", "session_id", "size", "ts")

    def __init__(
        self,
        path: str,
        harness: str | None,
        session_id: str | None,
        size: int | None,
        host: str | None,
        seq: int,
        ts: str,
        op: str,
    ) -> None:
        self.path = path
        self.harness = harness
        self.session_id = session_id
        self.size = size
        self.host = host
        self.seq = seq
        self.ts = ts
        self.op = op


class Since:
    """The WAL since the last checkpoint. checkpoint: that record (None: none found, or only 99's header known).
    seq, ts: its seq and timestamp (None: no checkpoint). next, done: its next step and what it finished. git: its
    `{"head", "branch", "dirty"[, "dirty_count"]}` (None: not recorded, not a repository then). handoff: the last
    `handoff` record after it, else None. compactions: the `compaction` records after it, newest first. capture: the
    newest one's `data.capture` (schema v1, harness/capture.py), else None. transcripts: the TranscriptRefs from
    compaction, precompress and resume records after it, deduplicated by path, newest first, at most
    MAX_TRANSCRIPTS. records: how many records were read after it. complete: whether the back-scan reached it."""

    def __init__(self) -> None:
        self.checkpoint: dict[str, Any] | None = None
        self.seq: int | None = None
        self.ts: str | None = None
        self.next: str | None = None
        self.done: str | None = None
        self.git: dict[str, Any] | None = None
        self.handoff: dict[str, Any] | None = None
        self.compactions: list[dict[str, Any]] = []
        self.capture: dict[str, Any] | None = None
        self.transcripts: list[TranscriptRef] = []
        self.records = 0
        self.complete = False


def find(state: State, snap: Snapshot | None, max_bytes: int = HOOK_BYTES) -> Since:
    """The WAL since the last checkpoint (see the module's docstring). snap: the reading snapshot the caller holds
    (None when the state did not load). Until WP-A: an empty Since."""
    return Since()
