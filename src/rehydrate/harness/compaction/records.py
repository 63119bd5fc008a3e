"""A compaction's records: PreCompact's `compaction` (with the capture of what the transcript says happened since the
last checkpoint), PostCompact's `compacted`, and Gemini CLI's PreCompress note. Each carries the transcript's
reference (store.wal.since.ref_fields), so that recency and `recover` can read it later."""

from __future__ import annotations

import os

from rehydrate.fs import lock as fslock
from rehydrate.harness.base import Answer
from rehydrate.harness.compaction import marks
from rehydrate.store import WORDS
from rehydrate.store.local import journal
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import since
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.base import Harness, Located


def precompress(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """Gemini CLI's PreCompress, logged as a `precompress` note that is not a compaction: no notice, no brief follow.

    Gemini fires it inside its compression service before deciding whether to compress: on every model request
    (trigger auto), and for `/compress` (manual) also when there turns out to be nothing to compress or the summary
    fails. Nothing a hook sees confirms a compression afterwards (0.61: no post-compression event; the summary is not
    written to the session file; PreCompress carries only its trigger). The note carries the transcript's reference
    (store.wal.since.ref_fields), so that recency can read the chat file at the next brief or in `recover`. It goes to
    this worktree's journal, never to the committed log: Gemini fires it before every model request."""
    data = _event_fields(event)
    add_ref(data, harness, event)
    state = here.state
    with fslock.locked(state.root, words=WORDS):  # the journal is appended under the state's lock, as resume does
        journal.append(state, "precompress", data)
    return Answer()


def _event_fields(event: dict[str, Any]) -> dict[str, Any]:
    """The event's trigger, session id and transcript path, each one clean line of at most 1,000 characters."""
    data: dict[str, Any] = {}
    for key in ("trigger", "session_id", "transcript_path"):
        if isinstance(event.get(key), str):
            data[key] = clean(event[key], one_line=True)[:1000]
    return data


def _ref(harness: Harness, event: dict[str, Any]) -> dict[str, Any]:
    """harness, host, transcript_path and transcript_size (store.wal.since.ref_fields) for the event's own transcript.
    The path is the harness's, as it sent it (a path cleaned for display would not open); None-valued fields are
    kept, so that a recovery tells a file never written (size None) from one gone since."""
    return since.ref_fields(harness.NAME, event.get("transcript_path"))


def add_ref(data: dict[str, Any], harness: Harness, event: dict[str, Any]) -> None:
    """data with the transcript's reference (_ref). A path ref_fields refuses (a NUL in it) is dropped altogether:
    its cleaned form would name another file."""
    ref = _ref(harness, event)
    if "transcript_path" not in ref:
        data.pop("transcript_path", None)
    data.update(ref)


def compaction_start(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    return _record_compaction(event, "pre", harness, here)


def compaction_end(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """The end of the compaction PreCompact recorded: one compaction, one `compaction` record."""
    return _record_compaction(event, "post", harness, here)


def _record_compaction(event: dict[str, Any], phase: str, harness: Harness, here: Located) -> Answer:
    """PreCompact: a `compaction` record (phase pre), with the capture of what the transcript says happened since the
    last checkpoint (capture.py). PostCompact: a `compacted` record, the end of that same compaction with its
    summary's length and hash, so that one compaction appends exactly one `compaction`. Both carry the transcript's
    reference (store.wal.since.ref_fields)."""
    data: dict[str, Any] = {"phase": phase} if phase == "pre" else {}
    data.update(_event_fields(event))
    summary = event.get("compact_summary")
    if summary is None and phase == "post":  # Codex sends none: its rollout's last compaction holds it
        summary = _summary_of(harness, event, data)
    if isinstance(summary, str):  # its length and hash, never its text
        data["summary_chars"] = len(summary)
        data["summary_sha256"] = wal.sha256(summary.encode("utf-8", "replace"))
    instructions = event.get("custom_instructions")
    if isinstance(instructions, str) and instructions:
        data["custom_instructions_chars"] = len(instructions)
    add_ref(data, harness, event)
    state = here.state
    if phase == "pre":
        captured = capture_of(here, event, data["harness"])
        if captured is not None:
            data["capture"] = captured
        marks.compacted(here.root, event)  # before the record: no compaction of a session goes unmarked
    state.record("compaction" if phase == "pre" else "compacted", data)
    return Answer()


def _summary_of(harness: Harness, event: dict[str, Any], data: dict[str, Any]) -> str | None:
    """The summary of the compaction that just ended, from the harness's transcript where its event carries none
    (its module's compacted_summary: Codex's rollout); where it was found goes into data as summary_source."""
    read = getattr(harness, "compacted_summary", None)
    path = event.get("transcript_path")
    if read is None or not isinstance(path, str) or not path:
        return None
    found = read(path)
    if found is None:
        return None
    text, where = found
    data["summary_source"] = where
    return str(text)


def capture_of(here: Located, event: dict[str, Any], name: str) -> dict[str, Any] | None:
    """capture.capture for this compaction, or None when it is off. It runs after the WAL was read back (the lock
    released: the transcript read may take a while) and before the record is written. A capture that raises never
    costs the compaction its record: the record then carries {"v": 2, ..., "error": why}."""
    found: Any = None
    try:
        from rehydrate.harness.compaction import capture  # the transcripts' readers: a compaction's start loads them

        state = here.state
        with state.reading() as snap:
            found = since.find(state, snap)
        return capture.capture(os.path.dirname(state.root), {**event, "harness": name}, found, here.config)
    except Exception as e:
        seq, ts = (found.seq, found.ts) if found is not None else (None, None)
        why = clean(f"{type(e).__name__}: {e}", one_line=True)[:200]
        return {"v": 2, "harness": name, "since": {"seq": seq, "ts": ts}, "error": "the capture failed: " + why}
