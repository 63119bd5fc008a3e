"""What rehydrate does on each hook event but the guard: the brief at a session's start (or a pointer to the one it
was given), after a compression (Gemini CLI), the compaction records, and the Stop reminder. Each handler takes the
calling harness's module (rehydrate.harness.<name>: its budget and answer shapes) and the event."""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.harness.hook import COMPACTED, Answer, config, said
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType
    from typing import Any

MAX_SESSION = 200  # the most characters of a harness's session id kept in a record


def open_state(event: dict[str, Any] | None) -> Any:
    """The State of the folder found from the event's cwd."""
    from rehydrate.store.locate import locate
    from rehydrate.store.state import State

    cwd = event.get("cwd") if event else None
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    return State.open(locate(None, start))


def _budget(harness: ModuleType) -> tuple[int, int | None]:
    """The brief's bound for this harness: (characters, UTF-8 bytes or None): the default budget, and the harness's
    cap in bytes where it counts bytes (its BRIEF_BYTES)."""
    from rehydrate import brief

    return brief.DEFAULT_BUDGET, harness.BRIEF_BYTES


def session_of(event: dict[str, Any]) -> str | None:
    """The harness's session id, cleaned as the resume record keeps it; None if the event has none."""
    sid = event.get("session_id")
    if not isinstance(sid, str):
        return None
    return clean(sid, one_line=True)[:MAX_SESSION] or None


def session_start(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
    """The brief, or a pointer to the one this resumed session was given."""
    source = event.get("source")
    preface = COMPACTED if source == "compact" else None
    state = open_state(event)
    session = session_of(event)
    if source == "resume" and session and getattr(harness, "START_CONTEXT_KEPT", True):
        given = _already_given(state, session)
        if given is not None:
            return Answer(stdout=said(harness, str(event.get("hook_event_name")), _pointer(*given)))
    text = _render(harness, event, state, session, preface)
    return Answer(stdout=said(harness, str(event.get("hook_event_name")), text))


def _render(
    harness: ModuleType,
    event: dict[str, Any],
    state: Any,
    session: str | None,
    preface: str | None,
    carried: dict[str, Any] | None = None,
) -> str:
    """The brief a hook gives (brief.resume) within the harness's bound, logged with the event's transcript; a brief
    carried by one request (carried: its record's fields) names no transcript, since it is in none."""
    from rehydrate import brief

    chars, size = _budget(harness)
    path = event.get("transcript_path") if isinstance(event.get("transcript_path"), str) and not carried else None
    name = harness.__name__.rsplit(".", 1)[-1]
    result = brief.resume(
        state,
        chars,
        preface=preface,
        session_id=session,
        max_bytes=size,
        transcript=path,
        harness=name,
        carried=carried,
    )
    return result.text


def recent_records(wal_path: str, count: int) -> list[dict[str, Any]]:
    """The WAL's last records, newest first; none when its tail cannot be read (a conflicted or damaged log): the
    caller then does what it does without them, and `State` names the problem where a brief is given."""
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal import record as wal

    try:
        return [rec for _, rec in reversed(walback.read_tail(wal_path, count).records)]
    except wal.BadRecord:
        return []


def _history(state: Any, count: int) -> Iterator[tuple[dict[str, Any], bool]]:
    """The WAL's last records and this worktree's journal's (the `resume` records, store/local/journal.py), newest
    first, merged by time, at most count; each with whether it is the journal's (decoded as the caller goes on). At the
    same millisecond the WAL's record counts as the newer: a write or a compaction then takes a brief away rather
    than leave a stale one."""
    from rehydrate.store.local import journal

    logged = recent_records(state.wal_path, count)
    read = journal.records(state)
    try:
        mine = next(read, None)
        i = 0
        for _ in range(count):
            if i < len(logged) and (mine is None or str(logged[i].get("ts", "")) >= str(mine.get("ts", ""))):
                yield logged[i], False
                i += 1
            elif mine is not None:
                yield mine, True
                mine = next(read, None)
            else:
                return
    finally:
        read.close()  # the journal's descriptor, now rather than when the generator is collected


def _already_given(state: Any, session: str) -> tuple[dict[str, Any], bool] | None:
    """The `resume` record of the brief this session was given since its last compaction (and whether it is the
    journal's; an old one may still be in the WAL), if nothing was written since: a resumed conversation still
    holds that brief (after `/compact` then `--resume`, Claude Code's next
    request would otherwise carry two). None if the session had no brief since its last compaction (one without a
    session id counts for every session), or any record but another brief or another session's compaction came
    after it (the brief in the conversation may be stale), or the WAL's recent tail does not tell. A compaction's
    start (PreCompact, phase pre) is what takes a brief away; its end (PostCompact) comes after the brief that
    SessionStart compact gives (Claude Code 2.1: PreCompact, SessionStart compact, PostCompact)."""

    for rec, journaled in _history(state, 64):
        data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
        assert isinstance(data, dict)
        if rec.get("op") == "resume":
            if data.get("session_id") == session and data.get("via") != "request":
                return rec, journaled
            continue  # another session's brief, one printed by `rehydrate resume`, or one a request carried (it is
            # not in the conversation: Gemini CLI keeps nothing BeforeModel adds): it changed nothing
        if rec.get("op") in ("precompress", "delivery", "ack"):
            continue  # a note that a compression may follow, a delivery receipt, a restatement: they changed nothing
        other = data.get("session_id")
        if rec.get("op") == "compaction" and isinstance(other, str) and other[:MAX_SESSION] != session:
            continue  # another session's compaction leaves this conversation as it was
        if rec.get("op") == "compacted" or (rec.get("op") == "compaction" and data.get("phase") == "post"):
            continue  # PostCompact ends a compaction: Claude Code runs it after SessionStart compact gave the brief
        return None
    return None


def _pointer(given: dict[str, Any], journaled: bool = False) -> str:
    ts = clean(str(given.get("ts", "")), one_line=True)[:24]
    where = "journal" if journaled else "WAL"
    return (
        f"rehydrate: this session was given the brief at {ts} ({where} record {given.get('seq')}) and nothing was "
        "written since: it is earlier in this conversation. `rehydrate resume` prints it again."
    )


def model_request(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
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
    request = event.get("llm_request")
    messages = request.get("messages") if isinstance(request, dict) else None
    session = session_of(event)
    if not isinstance(messages, list) or session is None:
        return Answer()
    at = harness.summary_at(messages)
    from rehydrate import safejson

    if at is None:
        if (isinstance(request, dict) and request.get("cut")) or not harness.lacks_brief(
            messages
        ):  # a message not read whole may hold the brief
            return Answer()
        text = _request_brief(harness, event, session, None)
        return Answer(stdout=safejson.dumps(harness.with_brief(messages, 0, text)))
    from rehydrate.store.wal import record as wal

    summary = harness.summary_of(messages[at]["content"])
    mark = wal.sha256(summary.encode("utf-8", "replace"))
    return Answer(
        stdout=safejson.dumps(harness.with_brief(messages, at, _request_brief(harness, event, session, summary, mark)))
    )


def _request_brief(
    harness: ModuleType, event: dict[str, Any], session: str, summary: str | None, mark: str = ""
) -> str:
    """The brief a request carries (after a compression: with the notice, and the compaction recorded at its first
    sight); for a state that cannot be read or written (a conflicted log), the brief as far as the files can be read,
    and the problem."""
    try:
        return _carried_brief(harness, event, session, summary, mark)
    except RehydrateError as e:
        problem = f"rehydrate hook {harness.__name__.rsplit('.', 1)[-1]}: {e}"
        return reduced_text(harness, event if summary is not None else {**event, "llm_request": None}, problem)


def _carried_brief(harness: ModuleType, event: dict[str, Any], session: str, summary: str | None, mark: str) -> str:
    """The brief a request carries; after a compression (a summary), the compaction recorded at its first sight."""
    state = open_state(event)
    if summary is not None and not _compression_known(state, session, mark):
        data: dict[str, Any] = {"phase": "request", "trigger": _trigger(state, session), "session_id": session}
        data["summary_chars"] = len(summary)
        data["summary_sha256"] = mark
        _add_ref(data, harness, event)
        captured = _capture(state, event, data["harness"])
        if captured is not None:
            data["capture"] = captured
        state.record("compaction", data)
    if summary is None:
        return _render(harness, event, state, session, None, {"via": "request"})
    return _render(harness, event, state, session, COMPACTED, {"via": "request", "summary_sha256": mark})


def _trigger(state: Any, session: str) -> str:
    """What started the compression a request shows, as this session's PreCompress notes since its last brief tell
    it: "manual" when one of them is `/compress`'s (the requests after it note "auto" too, and compress nothing),
    else "auto" when there is one, else "unknown". A `/compress` that found nothing to compress, followed by an
    automatic compression before any brief, reads as manual."""
    from rehydrate.store.local import journal

    seen = "unknown"
    for rec in journal.tail(state, 64):
        data = rec.get("data")
        if not isinstance(data, dict) or data.get("session_id") != session:
            continue
        if rec.get("op") != "precompress":
            break  # this session's last brief (or a receipt of it): the notes before it are of an earlier compression
        if data.get("trigger") == "manual":
            return "manual"
        if data.get("trigger") == "auto":
            seen = "auto"
    return seen


def _compression_known(state: Any, session: str, mark: str) -> bool:
    """A brief was carried with this summary (the journal's last records: one per request since), or its compaction
    is in the WAL's recent records: the compression was recorded."""
    from rehydrate.store.local import journal

    def ours(rec: dict[str, Any]) -> bool:
        data = rec.get("data")
        return isinstance(data, dict) and data.get("summary_sha256") == mark and data.get("session_id") == session

    if any(rec.get("op") == "resume" and ours(rec) for rec in journal.tail(state, 16)):
        return True
    return any(rec.get("op") == "compaction" and ours(rec) for rec in recent_records(state.wal_path, 256))


def after_compaction(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
    """The brief with the compaction notice, once, at the first prompt or tool result after a compaction of this
    session (a `compaction` record newer than this session's last brief), for a harness that drops the start's
    context at a compaction and sends no event after one (GitHub Copilot CLI: its preCompact only observes). What
    it answers stays in the conversation (appended to the prompt or to the tool's result); anything else: nothing."""
    session = session_of(event)
    if session is None:
        return Answer()
    state = open_state(event)
    for rec, _ in _history(state, 64):
        data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
        assert isinstance(data, dict)
        other = data.get("session_id")
        if not isinstance(other, str) or other[:MAX_SESSION] != session:
            continue
        if rec.get("op") == "resume":
            return Answer()  # the brief since
        if rec.get("op") == "compaction":
            break
    else:
        return Answer()
    text = _render(harness, event, state, session, COMPACTED)
    return Answer(stdout=said(harness, str(event.get("hook_event_name")), text))


def reduced(harness: ModuleType, event: dict[str, Any] | None, problem: str) -> Answer:
    """The brief as far as the files can be read, and the problem, as SessionStart context."""
    problem = problem if len(problem) <= 2000 else problem[:2000] + "…"
    name = str(event.get("hook_event_name") or "SessionStart") if event else "SessionStart"
    return Answer(stdout=said(harness, name, reduced_text(harness, event, problem)), stderr=problem + "\n")


def reduced_text(harness: ModuleType, event: dict[str, Any] | None, problem: str) -> str:
    """The brief as far as the files can be read, and the problem.

    The compaction notice goes in as the brief's preface (after a compaction: a SessionStart of source compact, or a
    compressed request), inside its budget: the rendered brief is never cut afterwards (that would chop its ledger or
    its next action)."""
    from rehydrate import brief
    from rehydrate.store.locate import locate, resolve_actor

    problem = problem if len(problem) <= 2000 else problem[:2000] + "…"
    cwd = event.get("cwd") if event else None
    start = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None
    try:
        root = locate(None, start)
        if not os.path.isdir(root):
            where = start or os.getcwd()
            text = f"{problem}\n(no state folder found from {where}: `rehydrate init --goal ...` creates one)"
        else:
            after = event is not None and (event.get("source") == "compact" or bool(event.get("llm_request")))
            chars, size = _budget(harness)
            text = brief.reduced(
                root, resolve_actor(None), problem, chars, preface=COMPACTED if after else None, max_bytes=size
            )
    except Exception as e:
        text = f"{problem}\n(and the state could not be read: {type(e).__name__}: {str(e)[:1000]})"
    return text


def precompress(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
    """Gemini CLI's PreCompress, logged as a `precompress` note that is not a compaction: no notice, no brief follow.

    Gemini fires it inside its compression service before deciding whether to compress: on every model request
    (trigger auto), and for `/compress` (manual) also when there turns out to be nothing to compress or the summary
    fails. Nothing a hook sees confirms a compression afterwards (0.61: no post-compression event; the summary is not
    written to the session file; PreCompress carries only its trigger). The note carries the transcript's reference
    (store.since.ref_fields), so that recency can read the chat file at the next brief or in `recover`. It goes to
    this worktree's journal, never to the committed log: Gemini fires it before every model request."""
    from rehydrate.fs import write as fsio
    from rehydrate.store import WORDS
    from rehydrate.store.local import journal

    data = _event_fields(event)
    _add_ref(data, harness, event)
    state = open_state(event)
    with fsio.locked(state.root, words=WORDS):  # the journal is appended under the state's lock, as resume does
        journal.append(state, "precompress", data)
    return Answer()


def _event_fields(event: dict[str, Any]) -> dict[str, Any]:
    """The event's trigger, session id and transcript path, each one clean line of at most 1,000 characters."""
    data: dict[str, Any] = {}
    for key in ("trigger", "session_id", "transcript_path"):
        if isinstance(event.get(key), str):
            data[key] = clean(event[key], one_line=True)[:1000]
    return data


def _ref(harness: ModuleType, event: dict[str, Any]) -> dict[str, Any]:
    """harness, host, transcript_path and transcript_size (store.since.ref_fields) for the event's own transcript.
    The path is the harness's, as it sent it (a path cleaned for display would not open); None-valued fields are
    kept, so that a recovery tells a file never written (size None) from one gone since."""
    from rehydrate.store.wal import since

    return since.ref_fields(harness.__name__.rpartition(".")[2], event.get("transcript_path"))


def _add_ref(data: dict[str, Any], harness: ModuleType, event: dict[str, Any]) -> None:
    """data with the transcript's reference (_ref). A path ref_fields refuses (a NUL in it) is dropped altogether:
    its cleaned form would name another file."""
    ref = _ref(harness, event)
    if "transcript_path" not in ref:
        data.pop("transcript_path", None)
    data.update(ref)


def compaction_start(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
    return _record_compaction(event, "pre", harness)


def compaction_end(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
    """The end of the compaction PreCompact recorded: one compaction, one `compaction` record."""
    return _record_compaction(event, "post", harness)


def _record_compaction(event: dict[str, Any], phase: str, harness: ModuleType) -> Answer:
    """PreCompact: a `compaction` record (phase pre), with the capture of what the transcript says happened since the
    last checkpoint (harness/capture.py). PostCompact: a `compacted` record, the end of that same compaction with its
    summary's length and hash, so that one compaction appends exactly one `compaction`. Both carry the transcript's
    reference (store.since.ref_fields)."""
    data: dict[str, Any] = {"phase": phase} if phase == "pre" else {}
    data.update(_event_fields(event))
    summary = event.get("compact_summary")
    if summary is None and phase == "post":  # Codex sends none: its rollout's last compaction holds it
        summary = _summary_of(harness, event, data)
    if isinstance(summary, str):  # its length and hash, never its text
        from rehydrate.store.wal import record as wal

        data["summary_chars"] = len(summary)
        data["summary_sha256"] = wal.sha256(summary.encode("utf-8", "replace"))
    instructions = event.get("custom_instructions")
    if isinstance(instructions, str) and instructions:
        data["custom_instructions_chars"] = len(instructions)
    _add_ref(data, harness, event)
    state = open_state(event)
    if phase == "pre":
        captured = _capture(state, event, data["harness"])
        if captured is not None:
            data["capture"] = captured
    state.record("compaction" if phase == "pre" else "compacted", data)
    return Answer()


def _summary_of(harness: ModuleType, event: dict[str, Any], data: dict[str, Any]) -> str | None:
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


def _capture(state: Any, event: dict[str, Any], name: str) -> dict[str, Any] | None:
    """harness.capture.capture for this PreCompact, or None when it is off. It runs after the WAL was read back
    (the lock released: the transcript read may take a while) and before the record is written. A capture that
    raises never costs the compaction its record: the record then carries {"v": 2, ..., "error": why}."""
    from rehydrate.store.wal import since as since_mod

    found: Any = None
    try:
        from rehydrate.harness import capture
        from rehydrate.store import config

        with state.reading() as snap:
            found = since_mod.find(state, snap)
        return capture.capture(os.path.dirname(state.root), {**event, "harness": name}, found, config.read(state.root))
    except Exception as e:
        seq, ts = (found.seq, found.ts) if found is not None else (None, None)
        why = clean(f"{type(e).__name__}: {e}", one_line=True)[:200]
        return {"v": 2, "harness": name, "since": {"seq": seq, "ts": ts}, "error": "the capture failed: " + why}


def _settle(event: dict[str, Any]) -> None:
    """The end of a turn: the last brief a hook gave is in the transcript by now, or it never will be. Its receipt
    is judged and recorded (brief/receipt.py); nothing is said: the next brief's ledger says it."""
    from rehydrate.brief import ack, receipt
    from rehydrate.fs import write as fsio
    from rehydrate.store import WORDS
    from rehydrate.store.local import journal

    try:
        state = open_state(event)
        with fsio.locked(state.root, words=WORDS):  # the journal is appended under the state's lock, as resume does
            recent = journal.tail(state, receipt.LOOK_BACK)
            receipt.settle(state, recent=recent)
            ack.from_reply(state, recent)  # a restatement in the reply's marked line, checked and recorded
    except Exception:
        pass


def stop(harness: ModuleType, event: dict[str, Any], whole: bool = True) -> Answer:
    """Never blocks and never adds a model turn unless the user asked for the reminder where a harness has no other
    way to show it. With `stop_reminder_after: N` in state/config.json, reminds the agent to checkpoint when the
    transcript shows N tool calls or more since the last checkpoint (the harness's tool_calls_since, else Claude
    Code's transcript format).

    The reminder is a plain `systemMessage` (shown, no new turn): Claude Code feeds a Stop hook's `additionalContext`
    to the model as a new turn and then fires Stop again (`stop_hook_active: true`), a loop. A harness that shows
    nothing a stop hook says but a block (GitHub Copilot CLI) gets its stop_reminder: one block, whose reason is the
    next prompt. While a stop hook keeps the agent going (`stop_hook_active`), it says nothing at all."""
    from rehydrate.store.locate import locate

    if event.get("stop_hook_active"):
        return Answer()
    _settle(event)
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    root = locate(None, cwd if cwd and os.path.isdir(cwd) else None)
    limit = config(root).get("stop_reminder_after")
    transcript = event.get("transcript_path")
    if not isinstance(limit, int) or limit < 1 or not isinstance(transcript, str):
        return Answer()
    state = open_state(event)
    since = ""
    for rec in reversed(recent_records(state.wal_path, 256)):
        if rec["op"] == "checkpoint":
            since = rec["ts"]
    counter = getattr(harness, "tool_calls_since", None)
    if counter is None:
        from rehydrate.transcripts import claude

        counter = claude.tool_calls_since
    calls = counter(transcript, since)
    if calls < limit:
        return Answer()
    what = f"since the last checkpoint ({since[:16]}Z)" if since else "and no checkpoint in the WAL's recent records"
    text = (
        f"rehydrate: {calls} tool calls {what}. Before you stop, record where you are: "
        "rehydrate checkpoint --done 'WHAT' --next 'NEXT ACTION'"
    )
    remind = getattr(harness, "stop_reminder", None)
    if remind is not None:
        return Answer(stdout=remind(text))
    from rehydrate import safejson  # json.dumps, without loading json on the hook path

    return Answer(stdout=safejson.dumps({"systemMessage": text}))
