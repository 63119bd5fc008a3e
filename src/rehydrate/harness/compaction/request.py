"""The brief a model request carries (Gemini CLI's BeforeModel): after a compression, with the compaction notice and
the compaction recorded at its first sight; after `/clear`, at the start of the conversation's history."""

from __future__ import annotations

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.harness.base import Answer, session_of
from rehydrate.harness.compaction.records import add_ref, capture_of
from rehydrate.harness.events import COMPACTED, reduced_text, render
from rehydrate.store import records
from rehydrate.store.local import journal
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.harness.base import Harness, Located
    from rehydrate.store.state import State


def model_request(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """Gemini CLI's BeforeModel: the brief into a request whose history lost it, or nothing (and nothing read beyond
    the request's first messages).

    Gemini has no event after a compression, and drops SessionStart's context after `/clear`: the request is the
    first place either shows. A compressed history (its summary and the model's fixed reply: harness.gemini
    .summary_at) gets the brief after the summary, with the compaction notice; the first request that carries a
    summary not seen before records the compaction in the WAL, once (its fingerprint: the summary's hash), with the
    capture of what the transcript says happened since the last checkpoint. A conversation's history that holds no
    brief at its start (after `/clear`: harness.gemini.lacks_brief) gets it in its first message, without the notice.
    What BeforeModel adds goes into that one request, not into the conversation: the brief rides in every such
    request, once in each."""
    gemini: Any = harness  # its request readers: Gemini CLI's alone
    wanted = gemini.wants_brief(event)
    session = session_of(event)
    if wanted is None or session is None:
        return Answer()
    messages, at = wanted
    if at is None:
        text = _request_brief(harness, event, here, session, None)
        return Answer(stdout=safejson.dumps(gemini.with_brief(messages, 0, text)))
    summary = gemini.summary_of(messages[at]["content"])
    mark = wal.sha256(summary.encode("utf-8", "replace"))
    return Answer(
        stdout=safejson.dumps(
            gemini.with_brief(messages, at, _request_brief(harness, event, here, session, summary, mark))
        )
    )


def _request_brief(
    harness: Harness, event: dict[str, Any], here: Located, session: str, summary: str | None, mark: str = ""
) -> str:
    """The brief a request carries (after a compression: with the notice, and the compaction recorded at its first
    sight); for a state that cannot be read or written (a conflicted log), the brief as far as the files can be read,
    and the problem."""
    try:
        return _carried_brief(harness, event, here, session, summary, mark)
    except RehydrateError as e:
        problem = f"rehydrate hook {harness.NAME}: {e}"
        return reduced_text(harness, event if summary is not None else {**event, "llm_request": None}, problem, here)


def _carried_brief(
    harness: Harness, event: dict[str, Any], here: Located, session: str, summary: str | None, mark: str
) -> str:
    """The brief a request carries; after a compression (a summary), the compaction recorded at its first sight."""
    state = here.state
    if summary is not None and not _compression_known(state, session, mark):
        data: dict[str, Any] = {"phase": "request", "trigger": _trigger(state, session), "session_id": session}
        data["summary_chars"] = len(summary)
        data["summary_sha256"] = mark
        add_ref(data, harness, event)
        captured = capture_of(here, event, data["harness"])
        if captured is not None:
            data["capture"] = captured
        state.record("compaction", data)
    if summary is None:
        return render(harness, event, state, session, None, {"via": "request"})
    return render(harness, event, state, session, COMPACTED, {"via": "request", "summary_sha256": mark})


def _trigger(state: State, session: str) -> str:
    """What started the compression a request shows, as this session's PreCompress notes since its last brief tell
    it: "manual" when one of them is `/compress`'s (the requests after it note "auto" too, and compress nothing),
    else "auto" when there is one, else "unknown". A `/compress` that found nothing to compress, followed by an
    automatic compression before any brief, reads as manual."""
    seen = "unknown"
    for rec in journal.tail(state, 64):
        data = records.data_of(rec)
        if data.get("session_id") != session:
            continue
        if records.op_of(rec) is not records.PRECOMPRESS:
            break  # this session's last brief (or a receipt of it): the notes before it are of an earlier compression
        if data.get("trigger") == "manual":
            return "manual"
        if data.get("trigger") == "auto":
            seen = "auto"
    return seen


def _compression_known(state: State, session: str, mark: str) -> bool:
    """A brief was carried with this summary (the journal's last records: one per request since), or its compaction
    is in the WAL's recent records: the compression was recorded."""

    def ours(rec: dict[str, Any]) -> bool:
        data = records.data_of(rec)
        return data.get("summary_sha256") == mark and data.get("session_id") == session

    if any(records.op_of(rec) is records.RESUME and ours(rec) for rec in journal.tail(state, 16)):
        return True
    return any(
        records.op_of(rec) is records.COMPACTION and ours(rec) for rec in walback.recent_records(state.wal_path, 256)
    )
