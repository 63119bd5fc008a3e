"""What the WAL holds since the last checkpoint: the records a recovery reads back to, newest first.

Contract of `find(state, snap, max_bytes=HOOK_BYTES) -> Since`, built on `walback.Back(path, max_bytes)` (records
decoded strictly, newest first; store/wal/back.py):
- Reads back from the WAL's end to the last `checkpoint` record (or `init`, or a `rotate` record's
  `data.checkpoint`), at most max_bytes: the cost follows what was written since the checkpoint, not the history.
- Built once per command by its face (brief.resume, cli/recover.py, harness/compaction/capture.py) and handed to the
  checks in `Context.since`; checks never read the WAL or import the harness themselves.
- When max_bytes is reached first, or a record read back does not decode, the checkpoint's fields come from
  state/99_next.md's header (seq, minute; its next and done fields), as reconciliation verified it: `complete` is
  False, `checkpoint` and `git` stay None, and the checks that need the exact record are skipped (they could not
  look: an unknown HEAD is not an absent one). `problem` says why. `rehydrate recover` reads back RECOVER_BYTES.
- Every field is untrusted (the WAL arrived by git pull): strings are used as data, paths as candidates that must
  pass their reader's tests (checks/recency.py), never trusted as this host's.
"""

from __future__ import annotations

import os
import stat

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import records, views
from rehydrate.store.evidence import inforce
from rehydrate.store.local import journal
from rehydrate.store.wal import back as walback
from rehydrate.store.wal.record import BadRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

HOOK_BYTES = 4 << 20  # the most the back-scan reads on the hook path
RECOVER_BYTES = 64 << 20  # the most `rehydrate recover` reads back
MAX_TRANSCRIPTS = 3  # the most transcript references kept, newest first
MAX_READS = 64  # the most `resume` records read back from the journal since the checkpoint


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
    newest one's `data.capture` (schema v1, harness/compaction/capture.py), else None. transcripts: the TranscriptRefs
    from compaction, precompress and resume records after it (the resume records of this worktree's journal too, and the
    old ones still in the WAL), deduplicated by path, newest first, at most MAX_TRANSCRIPTS. records: how many WAL
    records were read after it. complete: whether the back-scan reached it."""

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
        self.claims: list[dict[str, Any]] = []  # the checkpoint's claims, and those of receipts since (newest wins)
        self.evidence: Any = None  # the stamps and approvals in force (data.evidence, untrusted; store/evidence/)
        self.records = 0
        self.complete = False
        self.problem: str | None = None  # why the back-scan did not reach the checkpoint (None when it did)


def find(state: State, snap: Snapshot | None, max_bytes: int = HOOK_BYTES) -> Since:
    """The WAL since the last checkpoint (see the module's docstring). snap: the reading snapshot the caller holds
    (None when the state did not load: an empty Since, nothing read)."""
    since = Since()
    if snap is None:
        return since
    after: list[Record] = []  # the records after the checkpoint, newest first (those decoded)
    back = walback.Back(state.wal_path, max_bytes)
    held = _Held()
    found: Record | None = None  # the record the checkpoint was found in (itself, or a rotate record carrying it)
    # lines of work merged and not yet chosen by a checkpoint: only my line's records count (walback.along: the
    # other line's interleave in the file), each line decoded to be told apart
    mine = snap.last["h"] if len(snap.heads) > 1 or snap.merged else None
    try:
        for offset, raw in back.lines():
            if mine is None and held.skip(raw):
                continue
            rec = walback.decode(raw, offset)
            if mine is not None:
                if rec["h"] != mine:
                    continue
                mine = rec["prev"] if isinstance(rec["prev"], str) else ""
            anchor = walback.anchor_of(rec)
            if anchor is not None:
                found = rec
                _set_checkpoint(since, anchor, rec)
                since.complete = True
                break
            after.append(rec)
            held.add(rec)
    except (BadRecord, RehydrateError) as e:
        since.problem = str(e)
    if not since.complete:
        since.problem = since.problem or (
            f"the last {back.read:,} bytes of the WAL hold no checkpoint" if back.cut else "the WAL holds no checkpoint"
        )
        _from_next(since, state)
    since.records = len(after) + held.skipped
    _collect(since, _with_reads(state, since.ts, after))
    _evidence(since, after, found)
    return since


def _with_reads(state: State, ts: str | None, after: list[Record]) -> list[Record]:
    """after (the WAL's records since the checkpoint, newest first) with this worktree's journal's `resume` and
    `precompress` records (Gemini CLI's notes: see harness/compaction/records.precompress)
    written since the checkpoint's time (store/local/journal.py: where a read is logged) merged in by time, at most
    MAX_READS of them; a WAL record counts as the newer at the same millisecond. A journal that cannot be read adds
    nothing. Only their transcript references count (_collect), and of each path only its newest record: a `resume`
    line that cannot add one is skipped undecoded (_Held, the journal's own), as the back-scan of the WAL skips
    them; it still counts among the MAX_READS. As in the back-scan, a skipped line is not checked: its damage, or a
    time before the checkpoint's (a clock set back), does not end the read there, as a decoded line's does."""
    held = _Held()
    read: list[Record] = []
    for rec in journal.read_since(state, ts, MAX_READS, skip=held.skip):
        held.add(rec)
        if records.op_of(rec).transcript and records.op_of(rec).journal:
            read.append(rec)
    if not read:
        return after
    merged: list[Record] = []
    i = j = 0
    while i < len(after) or j < len(read):
        if j >= len(read) or (i < len(after) and str(after[i]["ts"]) >= str(read[j]["ts"])):
            merged.append(after[i])
            i += 1
        else:
            merged.append(read[j])
            j += 1
    return merged


class _Held:
    """The `resume` records the back-scan need not decode. Each SessionStart writes one, so after one checkpoint they
    pile up with the sessions; only their transcript references matter here, and only the newest MAX_TRANSCRIPTS
    paths. A line is skipped when its bytes show it is a resume record (`"op":"resume"` is the only `"op":"` in it: a
    record's top-level op is always in its canonical line, and a nested one would show too) whose reference cannot
    count: MAX_TRANSCRIPTS paths are already held, or it names no transcript path, or the path it names is held. Damage
    in a skipped line goes unseen here (reconciliation checks the tail, `verify` the whole log); every other line is
    decoded strictly."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.needles: list[bytes] = []
        self.skipped = 0

    def add(self, rec: Record) -> None:
        if records.op_of(rec).transcript and len(self.paths) < MAX_TRANSCRIPTS:
            ref = _ref(rec)
            if ref is not None and ref.path not in self.paths:
                self.paths.add(ref.path)
                self.needles.append(b'"transcript_path":' + safejson.dumps_canonical(ref.path))

    def skip(self, raw: bytes) -> bool:
        # one `"op":"` in the line: the top-level op (nested ones would show too), and it is resume
        if b'"op":"resume"' not in raw or raw.count(b'"op":"') != 1:
            return False
        if len(self.paths) < MAX_TRANSCRIPTS and b'"transcript_path":' in raw:
            for needle in self.needles:
                if needle in raw:
                    break
            else:
                return False  # a path not held yet: decoded
        self.skipped += 1
        return True


def _set_checkpoint(since: Since, anchor: Record, found: Record) -> None:
    since.checkpoint = anchor
    seq, ts, data, git = anchor.get("seq"), anchor.get("ts"), records.data_of(anchor), anchor.get("git")
    since.seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
    since.ts = ts if isinstance(ts, str) else None
    since.next = _text(data.get("next"))
    since.done = _text(data.get("done"))
    since.git = git if isinstance(git, dict) else None
    if records.op_of(found) is records.ROTATE:  # the archived log's last handoff, if after the carried checkpoint
        carried = found["data"].get("handoff")
        if isinstance(carried, dict) and isinstance(carried.get("seq"), int) and since.seq is not None:
            since.handoff = carried if carried["seq"] > since.seq else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _from_next(since: Since, state: State) -> None:
    """The checkpoint as state/99_next.md's header and fields show it (reconciliation verified the file)."""
    from rehydrate.store import layout

    try:
        raw = fsio.read_bytes(state.path(layout.NEXT), 1 << 20)
    except RehydrateError:
        return
    text = (raw or b"").decode("utf-8", "replace")
    fields = views.parse_next(text)
    since.next, since.done = _text(fields.get("next")), _text(fields.get("done"))
    head = text.split("\n", 1)[0]
    if head.startswith("# Next (checkpoint "):
        seq, _, rest = head[len("# Next (checkpoint ") :].partition(", ")
        since.seq = int(seq) if seq.isdigit() and len(seq) < 19 else None
        since.ts = (rest.partition(", ")[0] or None) if since.seq is not None else None


def _collect(since: Since, after: list[Record]) -> None:
    """The handoff, compactions, capture and transcript references among the records after the checkpoint."""
    seen: set[str] = set()
    for rec in after:  # newest first
        op, data = records.op_of(rec), rec["data"]
        if op is records.HANDOFF_OP and since.handoff is None:
            since.handoff = rec
        elif op is records.COMPACTION:
            since.compactions.append(rec)
            capture = data.get("capture")
            if since.capture is None and isinstance(capture, dict):
                since.capture = capture
        if op.transcript:
            ref = _ref(rec)
            if ref is not None and ref.path not in seen and len(since.transcripts) < MAX_TRANSCRIPTS:
                seen.add(ref.path)
                since.transcripts.append(ref)


def _evidence(since: Since, after: list[Record], found: Record | None) -> None:
    """The claims to check (the checkpoint's, then those of `receipt` records since, a newer one of the same text
    replacing an older) and the evidence in force (store/evidence/inforce.py: current); untrusted: checks/claims.py
    reads them."""
    claims = records.data_of(since.checkpoint).get("claims")
    by_text: dict[str, dict[str, Any]] = {}
    for claim in claims if isinstance(claims, list) else []:
        if isinstance(claim, dict) and isinstance(claim.get("text"), str):
            by_text[claim["text"]] = claim
    for text, claim in inforce.pending(after).items():
        by_text.pop(text, None)
        by_text[text] = claim
    since.claims = list(by_text.values())
    since.evidence = inforce.current(after, found)


def _ref(rec: Record) -> TranscriptRef | None:
    data = rec["data"]
    path = data.get("transcript_path")
    if not isinstance(path, str) or not path or "\0" in path:
        return None
    size = data.get("transcript_size")
    size = size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None
    words = [data.get(k) if isinstance(data.get(k), str) else None for k in ("harness", "session_id", "host")]
    return TranscriptRef(path, words[0], words[1], size, words[2], rec["seq"], str(rec["ts"]), rec["op"])


def host() -> str:
    """This host's name as the hooks record it (os.uname().nodename, one printable line, at most 200 chars)."""
    name = "".join(c for c in os.uname().nodename if c.isprintable())
    return name[:200]


def ref_fields(harness: str | None, transcript_path: object) -> dict[str, Any]:
    """The fields a hook's record carries so that a later recovery can find its transcript (TranscriptRef):
    harness, host, transcript_path and transcript_size (bytes now; None when it is not a regular file yet). Used by
    the compaction, precompress and resume records alike. transcript_path is the harness's event field: kept only
    when it is a string (cut to 1,000 chars, no NUL)."""
    fields: dict[str, Any] = {"harness": harness, "host": host()}
    if not isinstance(transcript_path, str) or not transcript_path or "\0" in transcript_path:
        return fields
    path = transcript_path[:1000]
    try:
        st = os.stat(path)
        size: int | None = st.st_size if stat.S_ISREG(st.st_mode) else None
    except (OSError, ValueError):
        size = None
    fields.update(transcript_path=path, transcript_size=size)
    return fields
