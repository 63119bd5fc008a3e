"""recency's shortcut at the session start after a compaction: the compaction's capture stands for the transcript
up to where it read it, and only what was written after is read.

Contract: `usable(since, path, own, size)` gives the newest capture when it may stand for the hook event's own
transcript (own: hook scope and the event's own path): recorded on this host for that path, read back to this
checkpoint, not cut, and showing changes (files edited or commands failed, fewer failed than a capture keeps, no
edited path left out); else None, and recency reads the file as usual. `after(cap, path, since_ts, project,
harness)` gives what recency reports (the shape of transcripts.model.Recent it reads): the capture's counts, files,
failed commands and user messages, plus what the lines after its read.to hold. The capture arrived with the WAL:
every field's type is checked; a forged one can only make the ledger degraded, never recovered.
"""

from __future__ import annotations

from rehydrate import safejson
from rehydrate.store.wal import since as wal_since  # host() looked up at each call
from rehydrate.transcripts.model import inside, roots_of
from rehydrate.transcripts.recent import read_since

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.wal.since import Since

CAPTURED_FAILED = 3  # the failed commands a capture keeps (harness/compaction/capture.MAX_FAILED)


class _Seen:
    """What recency reports, made from a capture and what was written after it (the shape of Recent it reads)."""

    def __init__(self, harness: str, size: int, read_from: int) -> None:
        self.harness, self.size, self.read_from = harness, size, read_from
        self.cut = False
        self.tool_calls = self.changing_calls = 0
        self.edited: list[str] = []
        self.failed: list[Any] = []
        self.user: list[Any] = []
        self.compacted_at: list[str] = []


class _Said:
    """A captured failed command or user message, with the fields _work reads."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.tool = entry.get("tool") if isinstance(entry.get("tool"), str) else ""
        self.exit = entry.get("exit") if _int(entry.get("exit")) else None
        self.later_ok = entry.get("later_ok") is True
        self.ts = entry.get("ts") if isinstance(entry.get("ts"), str) else None
        self.text = entry.get("text") if isinstance(entry.get("text"), str) else ""


def after(cap: dict[str, Any], path: str, size: int, since_ts: str | None, project: str, harness: str | None) -> _Seen:
    """The capture's facts, then what the transcript gained after its read.to (read alone, when it grew)."""
    read = cap["read"]
    harness = cap.get("harness")
    seen = _Seen(harness if isinstance(harness, str) else harness or "?", 0, read["from"])
    seen.size = size  # as recency's stat found it
    seen.tool_calls = cap["tool_calls"]
    seen.changing_calls = 1  # files edited or a command failed: the capture showed a change
    seen.edited = [f for f in cap["edited"]["files"] if isinstance(f, str)]
    seen.failed = [_Said(f) for f in cap["failed"] if isinstance(f, dict)]
    users = cap.get("user")
    seen.user = [_Said(u) for u in users if isinstance(u, dict)] if isinstance(users, list) else []
    if seen.size > read["to"]:
        new = read_since(
            path, since_ts, loads=safejson.loads, max_bytes=seen.size - read["to"] + 1, harness=harness, todos_back=0
        )
        seen.tool_calls += new.tool_calls
        seen.changing_calls += new.changing_calls
        roots = roots_of(project)
        seen.edited = list(dict.fromkeys([*seen.edited, *(inside(p, roots) for p in new.edited)]))
        seen.failed += new.failed
        seen.user += new.user
        seen.compacted_at = new.compacted_at
    return seen


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def usable(since: Since, path: str, own: bool, size: int) -> dict[str, Any] | None:
    """In hook scope, for the hook event's own transcript: this compaction's capture when it read that file on
    this host back to this checkpoint, uncut, and shows changes (files edited or commands failed, fewer than the
    capture keeps); else None (the transcript is read as usual). The session start after a compaction then reads
    only what was written after the capture (its read.to), not the whole tail again."""
    cap = since.capture
    if not own or not isinstance(cap, dict) or cap.get("v") not in (1, 2) or cap.get("error"):
        return None

    rec = next(
        (r for r in since.compactions if isinstance(r.get("data"), dict) and r["data"].get("capture") is cap), None
    )
    data = rec.get("data") if rec is not None else None
    if not isinstance(data, dict) or data.get("transcript_path") != path or data.get("host") != wal_since.host():
        return None
    read, seen = cap.get("read"), cap.get("since")
    if not isinstance(read, dict) or read.get("cut") is not False or not isinstance(seen, dict):
        return None
    start, to = read.get("from"), read.get("to")
    if seen.get("seq") != since.seq or not (isinstance(start, int) and isinstance(to, int)):
        return None
    if isinstance(start, bool) or isinstance(to, bool) or not 0 <= start <= to <= size:
        return None
    edited, failed = cap.get("edited"), cap.get("failed")
    files = edited.get("files") if isinstance(edited, dict) else None
    if not isinstance(files, list) or not isinstance(failed, list) or not _int(cap.get("tool_calls")):
        return None
    if (not files and not failed) or len(failed) >= CAPTURED_FAILED or (edited or {}).get("more"):
        return None  # nothing it shows changed (read-only calls?), or it may have left some out: read it all
    return cap
