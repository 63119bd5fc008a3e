"""The delivery receipt of the last brief a hook gave: found in the journal, judged from the harness's transcript
(transcripts/delivery.py), recorded once in the journal as a `delivery` record, and said in the ledger.

The `resume` record of a brief given by a hook carries what to look for (`brief`: its token, its length from the
token to its end, the end of its last line) and where (the transcript's path and its size then). The next brief,
the Stop hook, `recover` and `status` settle it: a verdict other than pending is recorded and never judged again.
The journal is this worktree's own (never pulled by git): the path it names is the one the harness gave the hook.
"""

from __future__ import annotations

from rehydrate.checks import DEGRADED, OK, Finding
from rehydrate.store import records
from rehydrate.store.local import journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rehydrate.checks import Finding
    from rehydrate.store.local.journal import Recent
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

LOOK_BACK = 16  # journal records read back for the last brief a hook gave (one per brief, receipt and ack)
LAST_CHARS = 60  # letters and digits of the brief's last line the receipt looks for
CHECK = "recency"  # the ledger's check that says it: the actor's own last turns


def brief_fields(text: str, token: str) -> dict[str, Any]:
    """What a `resume` record keeps for the receipt: the token, the characters from its first place to the end, and
    the end of the last line: its letters and digits after the last character a harness may escape (<, >, &: Gemini
    CLI writes them as entities)."""
    at = text.find(token)
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    tail = last
    for c in "<>&":
        tail = tail.rsplit(c, 1)[-1]
    key = "".join(c for c in tail if c.isalnum()) or "".join(c for c in last if c.isalnum())
    return {"token": token, "after": len(text) - at if at >= 0 else 0, "last": key[-LAST_CHARS:]}


def settle(state: State, *, record: bool = True, recent: Recent | None = None) -> dict[str, Any] | None:
    """The receipt of the last brief a hook gave ({"verdict", "detail", "ts", "session_id", ...}), judged now when
    no verdict was recorded yet, and recorded (with record, unless still pending); None when no hook gave a brief
    (in the last LOOK_BACK records of the journal; recent: those records, read once by a caller that reads them for
    more)."""
    given, known = last_given(journal.recent(state, LOOK_BACK) if recent is None else recent)
    if given is None:
        return None
    if known is not None:
        return known
    data = given["data"]
    brief = data["brief"]
    path, size = data.get("transcript_path"), data.get("transcript_size")
    out: dict[str, Any] = {"of": given["h"], "ts": given["ts"], "session_id": data.get("session_id")}
    if size is None:  # the transcript was not there yet when the brief was given: all of it came after
        size = 0
    if not isinstance(path, str) or not isinstance(size, int):
        out.update(verdict="pending", detail="the hook's event named no transcript to look in")
        return out
    from rehydrate.transcripts.delivery import judge  # the transcripts' readers: only when there is one to read

    after = brief.get("after")
    receipt = judge(
        path, size, str(brief.get("token")), after if isinstance(after, int) else 0, str(brief.get("last") or "")
    )
    out.update(receipt.as_dict())
    if record and receipt.verdict != "pending":
        journal.append(state, "delivery", out)
    return out


def last_given(recs: Iterable[Record]) -> tuple[Record | None, dict[str, Any] | None]:
    """(the newest `resume` record a hook gave with a brief to look for, its recorded receipt or None), from the
    journal's records newest first (read no further than that record: journal.Recent decodes no more)."""
    receipts: dict[str, dict[str, Any]] = {}
    for rec in recs:
        data, op = records.data_of(rec), records.op_of(rec)
        if op is records.DELIVERY and isinstance(data.get("of"), str):
            receipts.setdefault(data["of"], data)
        elif op is records.RESUME and isinstance(data.get("brief"), dict):
            return rec, receipts.get(str(rec.get("h")))
    return None, None


def finding(receipt: dict[str, Any] | None) -> Finding | None:
    """The ledger's line for a receipt (None: nothing to say). Computed words only: the verdict, when, and counts."""
    if receipt is None:
        return None
    when = str(receipt.get("ts", ""))[:16] + "Z"
    verdict = receipt.get("verdict")
    said = f"the brief a hook gave at {when}"
    if verdict == "delivered":
        return Finding(
            CHECK,
            OK,
            f"{said} reached the model whole (delivery receipt: its token and last line are in the transcript)",
        )
    if verdict == "pending":  # nothing to say yet: the harness has not written the turn
        return None
    kept = receipt.get("kept")
    what = (
        f"was cut: the transcript holds {kept:,} characters of it"
        if verdict == "truncated" and isinstance(kept, int)
        else "did not reach the model: its token is not in the transcript after it"
    )
    return Finding(
        CHECK,
        DEGRADED,
        f"{said} {what} (delivery receipt)",
        "read the whole brief now: run `rehydrate resume` (what the hook gave was not all read)",
    )
