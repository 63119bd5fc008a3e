"""What rehydrate does at a session's start (the brief, or a pointer to the one it was given), after a compaction
where the harness sends no event for it (GitHub Copilot CLI), and when the agent stops (the receipt of the last brief,
the reminder to checkpoint); the reduced brief where the state cannot be read. The compaction records and the brief a
model request carries are compaction/'s. Each handler takes the calling harness's module (its budget and answer
shapes), the event, and the state it found (base.Located).

The brief, the journal and the WAL's readers are loaded by the handler that reads them: the hook path loads what it
runs."""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.fs import lock as fslock
from rehydrate.harness.base import MAX_SESSION, Answer, Located, said, session_of
from rehydrate.store import WORDS, records
from rehydrate.store.local import journal
from rehydrate.store.locate import resolve_actor
from rehydrate.store.wal import back as walback
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from rehydrate.harness.base import Harness
    from rehydrate.store.state import State

# Worded for wherever the harness puts it: Claude Code puts the brief before the summary, in the same message.
COMPACTED = (
    "A context compaction just happened; the summary of the conversation is lossy. The brief below was read from disk "
    "and is the ground truth: where the summary and this brief disagree, trust this brief. Re-read it, then restate "
    "your reading before acting: run `rehydrate ack --next '<the next action>' --rejected <the rejected approaches' "
    "ids>`, which checks it against the state, or write it as one line of your reply: `rehydrate ack: next: <the next "
    "action>; rejected: <ids>`."
)


def budget(harness: Harness) -> tuple[int, int | None]:
    """The brief's bound for this harness: (characters, UTF-8 bytes or None): the default budget, and the harness's
    cap in bytes where it counts bytes (its BRIEF_BYTES)."""
    from rehydrate import brief  # the brief: loaded by the calls that give one

    return brief.DEFAULT_BUDGET, harness.BRIEF_BYTES


def session_start(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """The brief, or a pointer to the one this resumed session was given."""
    source = event.get("source")
    preface = COMPACTED if source == "compact" else None
    state = here.state
    session = session_of(event)
    if source == "resume" and session and getattr(harness, "START_CONTEXT_KEPT", True):
        given = _already_given(state, session)
        if given is not None:
            return Answer(stdout=said(harness, str(event.get("hook_event_name")), _pointer(*given)))
    text = render(harness, event, state, session, preface)
    return Answer(stdout=said(harness, str(event.get("hook_event_name")), text))


def render(
    harness: Harness,
    event: dict[str, Any],
    state: State,
    session: str | None,
    preface: str | None,
    carried: dict[str, Any] | None = None,
) -> str:
    """The brief a hook gives (brief.resume) within the harness's bound, logged with the event's transcript; a brief
    carried by one request (carried: its record's fields) names no transcript, since it is in none."""
    from rehydrate import brief  # the brief: loaded by the calls that give one

    chars, size = budget(harness)
    path = event.get("transcript_path") if isinstance(event.get("transcript_path"), str) and not carried else None
    result = brief.resume(
        state,
        chars,
        preface=preface,
        session_id=session,
        max_bytes=size,
        transcript=path,
        harness=harness.NAME,
        carried=carried,
    )
    return result.text


def _history(state: State, count: int) -> Iterator[tuple[dict[str, Any], bool]]:
    """The WAL's last records and this worktree's journal's (the `resume` records, store/local/journal.py), newest
    first, merged by time, at most count; each with whether it is the journal's (decoded as the caller goes on). At the
    same millisecond the WAL's record counts as the newer: a write or a compaction then takes a brief away rather
    than leave a stale one."""
    logged = walback.recent_records(state.wal_path, count)
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


def _already_given(state: State, session: str) -> tuple[dict[str, Any], bool] | None:
    """The `resume` record of the brief this session was given since its last compaction (and whether it is the
    journal's; an old one may still be in the WAL), if nothing was written since: a resumed conversation still
    holds that brief (after `/compact` then `--resume`, Claude Code's next
    request would otherwise carry two). None if the session had no brief since its last compaction (one without a
    session id counts for every session), or any record but another brief or another session's compaction came
    after it (the brief in the conversation may be stale), or the WAL's recent tail does not tell. A compaction's
    start (PreCompact, phase pre) is what takes a brief away; its end (PostCompact) comes after the brief that
    SessionStart compact gives (Claude Code 2.1: PreCompact, SessionStart compact, PostCompact)."""

    for rec, journaled in _history(state, 64):
        data, op = records.data_of(rec), records.op_of(rec)
        if op is records.RESUME:
            if data.get("session_id") == session and data.get("via") != "request":
                return rec, journaled
            continue  # another session's brief, one printed by `rehydrate resume`, or one a request carried (it is
            # not in the conversation: Gemini CLI keeps nothing BeforeModel adds): it changed nothing
        if op.journal:
            continue  # a note that a compression may follow, a delivery receipt, a restatement: they changed nothing
        other = data.get("session_id")
        if op is records.COMPACTION and isinstance(other, str) and other[:MAX_SESSION] != session:
            continue  # another session's compaction leaves this conversation as it was
        if op is records.COMPACTED or (op is records.COMPACTION and data.get("phase") == "post"):
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


def after_compaction(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """The brief with the compaction notice, once, at the first prompt or tool result after a compaction of this
    session (a `compaction` record newer than this session's last brief), for a harness that drops the start's
    context at a compaction and sends no event after one (GitHub Copilot CLI: its preCompact only observes). What
    it answers stays in the conversation (appended to the prompt or to the tool's result); anything else: nothing."""
    session = session_of(event)
    if session is None:
        return Answer()
    from rehydrate.harness.compaction import marks  # GitHub Copilot CLI's alone: a session start never loads it

    mark = marks.unseen(here.root, event)  # (compaction/marks.py: the WAL is read only after a compaction)
    if mark is None:
        return Answer()
    state = here.state
    for rec, _ in _history(state, 64):
        other = records.data_of(rec).get("session_id")
        if not isinstance(other, str) or other[:MAX_SESSION] != session:
            continue
        if records.op_of(rec) is records.RESUME:
            marks.seen(here.root, event, mark)
            return Answer()  # the brief since
        if records.op_of(rec) is records.COMPACTION:
            break
    else:
        marks.seen(here.root, event, mark)
        return Answer()
    text = render(harness, event, state, session, COMPACTED)
    marks.seen(here.root, event, mark)
    return Answer(stdout=said(harness, str(event.get("hook_event_name")), text))


def reduced(harness: Harness, event: dict[str, Any] | None, problem: str, here: Located | None) -> Answer:
    """The brief as far as the files can be read, and the problem, as SessionStart context."""
    problem = problem if len(problem) <= 2000 else problem[:2000] + "…"
    name = str(event.get("hook_event_name") or "SessionStart") if event else "SessionStart"
    return Answer(stdout=said(harness, name, reduced_text(harness, event, problem, here)), stderr=problem + "\n")


def reduced_text(harness: Harness, event: dict[str, Any] | None, problem: str, here: Located | None) -> str:
    """The brief as far as the files can be read, and the problem.

    The compaction notice goes in as the brief's preface (after a compaction: a SessionStart of source compact, or a
    compressed request), inside its budget: the rendered brief is never cut afterwards (that would chop its ledger or
    its next action). here: the state the event found (None: it could not be located, which is tried again)."""
    from rehydrate import brief  # the brief: loaded by the calls that give one

    problem = problem if len(problem) <= 2000 else problem[:2000] + "…"
    try:
        here = here if here is not None else Located.find(event)
        root = here.root
        if not os.path.isdir(root):
            where = here.start or os.getcwd()
            text = f"{problem}\n(no state folder found from {where}: `rehydrate init --goal ...` creates one)"
        else:
            after = event is not None and (event.get("source") == "compact" or bool(event.get("llm_request")))
            chars, size = budget(harness)
            text = brief.reduced(
                root, resolve_actor(None), problem, chars, preface=COMPACTED if after else None, max_bytes=size
            )
    except Exception as e:
        text = f"{problem}\n(and the state could not be read: {type(e).__name__}: {str(e)[:1000]})"
    return text


def _settle(here: Located) -> None:
    """The end of a turn: the last brief a hook gave is in the transcript by now, or it never will be. Its receipt
    is judged and recorded (brief/receipt.py); nothing is said: the next brief's ledger says it."""
    try:
        from rehydrate.brief import ack, receipt  # the brief's: loaded by the calls that judge or give one

        state = here.state
        with fslock.locked(state.root, words=WORDS):  # the journal is appended under the state's lock, as resume does
            recent = journal.recent(state, receipt.LOOK_BACK)
            receipt.settle(state, recent=recent)
            ack.from_reply(state, recent)  # a restatement in the reply's marked line, checked and recorded
    except Exception:
        pass


def stop(harness: Harness, event: dict[str, Any], here: Located, whole: bool = True) -> Answer:
    """Never blocks and never adds a model turn unless the user asked for the reminder where a harness has no other
    way to show it. With `stop_reminder_after: N` in state/config.json, reminds the agent to checkpoint when the
    transcript shows N tool calls or more since the last checkpoint (the harness's tool_calls_since, else Claude
    Code's transcript format).

    The reminder is a plain `systemMessage` (shown, no new turn): Claude Code feeds a Stop hook's `additionalContext`
    to the model as a new turn and then fires Stop again (`stop_hook_active: true`), a loop. A harness that shows
    nothing a stop hook says but a block (GitHub Copilot CLI) gets its stop_reminder: one block, whose reason is the
    next prompt. While a stop hook keeps the agent going (`stop_hook_active`), it says nothing at all."""
    if event.get("stop_hook_active"):
        return Answer()
    _settle(here)
    limit = here.config.get("stop_reminder_after")
    transcript = event.get("transcript_path")
    if not isinstance(limit, int) or limit < 1 or not isinstance(transcript, str):
        return Answer()
    since = ""
    for rec in reversed(walback.recent_records(here.state.wal_path, 256)):
        if records.op_of(rec) is records.CHECKPOINT:
            since = rec["ts"]
    counter = getattr(harness, "tool_calls_since", None)
    if counter is None:
        # Claude Code's transcript reader: only for a harness without its own
        from rehydrate.transcripts.claude.read import tool_calls_since

        counter = tool_calls_since
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
    return Answer(stdout=safejson.dumps({"systemMessage": text}))
