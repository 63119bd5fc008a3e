"""The agent's restatement after a compaction, checked: `rehydrate ack --next TEXT --rejected IDS` compares what the
agent says it will do, and which rejected approaches it will not retry, with the state, says the verdict to the agent
at once (the command's output is its tool result), records it in this worktree's journal as an `ack` record, and the
next ledger names a mismatch.

The checks are deterministic: the restated next action must hold at least half of the words of the state's next
action (words of three characters or more, common words left out), every id named must be a rejected approach's,
and the newest NEWEST rejected approaches must be named. A wrong reading shows on every compaction, not once a day.
"""

from __future__ import annotations

from rehydrate import safejson
from rehydrate.brief.receipt import LOOK_BACK, last_given
from rehydrate.checks import DEGRADED, OK, Finding
from rehydrate.errors import RehydrateError
from rehydrate.fs import lock as fslock
from rehydrate.store import WORDS, layout, records, views
from rehydrate.store.latches import lifts
from rehydrate.store.local import journal
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import record as wal
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.checks import Finding
    from rehydrate.store.local.journal import Recent
    from rehydrate.store.state import State

NEWEST = 3  # the newest rejected approaches a restatement must name
COVER = 0.5  # the share of the state's next action's words the restatement must hold
MAX_SAID = 500  # characters of the restatement kept in the record
CHECK = "recency"
_COMMON = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "then",
        "that",
        "this",
        "from",
        "into",
        "its",
        "all",
        "are",
        "was",
        "will",
        "not",
        "but",
        "you",
        "your",
        "can",
        "has",
        "have",
        "had",
        "any",
        "out",
        "our",
        "one",
        "two",
        "now",
        "next",
        "step",
    ]
)


def words(text: str) -> set[str]:
    import re  # off the hook path, which loads this module for the brief's ledger line: only a comparison needs it

    return {w for w in re.findall(r"[a-z0-9_./-]+", text.lower()) if len(w) >= 3 and w not in _COMMON}


def rejected_ids(text: str) -> list[str]:
    """The ids of the rejected approaches in force in 10_invariants.md's text, in file order."""
    out = lifts.out_of_force(text.encode("utf-8", "replace"))
    found = (layout.entry_id(line) for line in text.split("\n"))
    return [i for i in found if i is not None and i.startswith("R-") and i not in out]


def compare(said_next: str, named: list[str], state_next: str, rejected: list[str]) -> dict[str, Any]:
    """The verdict on a restatement: {"matches", "covered" (share of the next action's words), "missing" (newest
    rejected ids not named), "unknown" (ids named that are no rejected approach's)}."""
    want = words(state_next)
    covered = len(want & words(said_next)) / len(want) if want else 1.0
    known = set(rejected)
    unknown = [i for i in dict.fromkeys(named) if i not in known]
    missing = [i for i in rejected[-NEWEST:] if i not in named]
    return {
        "matches": covered >= COVER and not unknown and not missing,
        "covered": round(covered, 2),
        "missing": missing,
        "unknown": unknown,
    }


def ack(state: State, said_next: str, named: list[str]) -> dict[str, Any]:
    """Check a restatement against the state (its next action, its rejected approaches) and record it in the
    journal; the record's data."""
    data = _check(state, said_next, named)
    with fslock.locked(state.root, words=WORDS):  # the journal is appended under the state's lock, as resume does
        journal.append(state, "ack", data)
    return data


def _check(state: State, said_next: str, named: list[str]) -> dict[str, Any]:
    """The comparison's record. Reads the views as they are, without the state's lock: a brief calls it while it
    holds the lock (a second lock in the same process would wait for ever), and a comparison needs no repair."""
    try:
        tail = walback.read_tail(state.wal_path, 1).records
    except (wal.BadRecord, OSError, RehydrateError):
        tail = []
    try:
        nxt = views.parse_next(state.view_text(state.pc(tail[-1][1] if tail else None)[0]) or "").get("next", "")
    except RehydrateError:  # unreadable: the restatement is compared with nothing, and says so by its cover
        nxt = ""
    try:  # the file as the brief bounds it (4 MiB); past that, the ids are not checked
        rejected = rejected_ids(state.view_text(layout.INVARIANTS) or "")
    except RehydrateError:
        rejected = []
    said = clean(said_next, one_line=True)[:MAX_SAID]
    data = {"next": said, "rejected": named, "state_next": clean(nxt, one_line=True)[:MAX_SAID]}
    data.update(compare(said, named, nxt, rejected))
    return data


MARK = "rehydrate ack:"  # the marked line of a reply: `rehydrate ack: next: TEXT; rejected: R-xxxxxx, R-yyyyyy`
READ_BYTES = 8 << 20  # the most of a transcript read after the brief for a marked line


def from_reply(state: State, recent: Recent | None = None) -> dict[str, Any] | None:
    """A marked line in the model's replies since the last brief a hook gave, checked and recorded like `rehydrate
    ack` (once per line: the record keeps its hash); None when there is none, or it is recorded already. Only the
    model's own records count (the brief that asks for the line holds the words too). recent: the journal's last
    records, as the caller read them."""
    recent = journal.recent(state, LOOK_BACK) if recent is None else recent
    given, _ = last_given(recent)
    if given is None:
        return None
    path, size = given["data"].get("transcript_path"), given["data"].get("transcript_size")
    if size is None:  # the transcript was not there yet when the brief was given: all of it came after
        size = 0
    if not isinstance(path, str) or not isinstance(size, int):
        return None
    line = _marked(path, size)
    if line is None:
        return None
    digest = wal.sha256(line.encode())
    if any(records.data_of(r).get("line") == digest for r in recent.of(records.ACK.name)):
        return None
    said, named = parse(line)
    data = _check(state, said, named)
    data.update(via="reply", line=digest)
    rec = journal.append(state, "ack", data)[0]
    return {**data, "ts": rec["ts"]}


def parse(line: str) -> tuple[str, list[str]]:
    """(the next action, the ids) of a marked line: `next: TEXT; rejected: IDS` after the mark, either part absent."""
    rest = line.split(MARK, 1)[1]
    said, _, rejected = rest.partition("rejected:")
    said = said.strip().removeprefix("next:").strip().rstrip(";").strip()
    named = [w.strip(",;.`*") for w in rejected.replace(",", " ").split()]
    return said, [w for w in named if layout.entry_id(f"- {w} ") is not None]


def _marked(path: str, start: int) -> str | None:
    """The last marked line in the model's own records of the transcript after start (Claude Code's assistant
    records, Codex's assistant messages)."""
    from rehydrate.transcripts.jsonl import open_regular  # the transcripts' readers: only when there is one to read

    try:
        with open_regular(path) as f:
            f.seek(start)
            data = f.read(READ_BYTES)
    except (OSError, ValueError):
        return None
    if MARK.encode() not in data:  # the usual case at each Stop: no line split, nothing parsed
        return None
    found = None
    for raw in data.split(b"\n"):
        if MARK.encode() not in raw:
            continue
        try:
            rec = safejson.loads(raw)
        except ValueError:
            continue
        for text in _reply_texts(rec):
            for line in text.split("\n"):
                if MARK in line:
                    found = line.strip()[:2000]
    return found


def _reply_texts(rec: Any) -> list[str]:
    """The text the model wrote in a record, and nothing else (not a tool's input, not its thinking): Claude Code's
    assistant `text` blocks, Codex's assistant `output_text`, Gemini CLI's reply content."""
    if not isinstance(rec, dict):
        return []
    if rec.get("type") == "gemini":
        return [rec["content"]] if isinstance(rec.get("content"), str) else []
    if rec.get("type") == "assistant":
        message = rec.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        kind = "text"
    else:
        payload = rec.get("payload")
        if not isinstance(payload, dict) or payload.get("role") != "assistant":
            return []
        blocks, kind = payload.get("content"), "output_text"
    if isinstance(blocks, str):
        return [blocks]
    if not isinstance(blocks, list):
        return []
    return [
        b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == kind and isinstance(b.get("text"), str)
    ]


def last(state: State, since: str | None, recent: Recent | None = None) -> dict[str, Any] | None:
    """The newest `ack` record's data and time in the journal's last records (receipt.LOOK_BACK; recent: those, as
    the caller read them), if it is newer than since (the last checkpoint's time)."""
    for rec in (journal.recent(state, LOOK_BACK) if recent is None else recent).of(records.ACK.name):
        if isinstance(rec.get("data"), dict):
            if since is not None and str(rec.get("ts", "")) < since:
                return None
            return {**rec["data"], "ts": rec.get("ts")}
    return None


def problems(data: dict[str, Any]) -> list[str]:
    """What did not match, in words computed here (the ids are checked names; no restated text)."""
    out = []
    if not data.get("covered", 0) >= COVER:
        out.append(f"the next action restated holds {int(100 * float(data.get('covered', 0)))}% of the state's")
    if data.get("missing"):
        out.append("the newest rejected approaches not named: " + ", ".join(map(str, data["missing"])))
    if data.get("unknown"):
        out.append("ids named that are no rejected approach: " + ", ".join(map(str, data["unknown"][:10])))
    return out


def finding(data: dict[str, Any] | None) -> Finding | None:
    """The ledger's line for the last restatement since the checkpoint (None: there is none)."""
    if data is None:
        return None
    when = str(data.get("ts", ""))[:16] + "Z"
    if data.get("matches") is True:
        return Finding(CHECK, OK, f"the agent's restatement at {when} (rehydrate ack) matches the state")
    why = "; ".join(problems(data)) or "it did not match"
    return Finding(
        CHECK,
        DEGRADED,
        f"the agent's restatement at {when} (rehydrate ack) does not match the state: {why}",
        "re-read the brief's Next and rejected approaches, then `rehydrate ack` again",
    )
