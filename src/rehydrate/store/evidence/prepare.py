"""The write's side: under the lock, before a stamp, accept or checkpoint record is sealed, the log read back to
the last checkpoint (and on to the receipts a claim names), the evidence in force carried forward with this record's
files, and a checkpoint's claims resolved."""

from __future__ import annotations

from rehydrate.errors import UsageError
from rehydrate.store import records
from rehydrate.store.evidence.inforce import (
    MAX_STAMPS,
    PREFIX,
    carried,
    claim_of,
    current,
    empty,
    in_force,
    pending,
)
from rehydrate.store.wal import back as walback
from rehydrate.store.wal.back import anchor_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

MAX_CLAIMS = 16  # claims on one checkpoint
LOOKUP_BYTES = 64 << 20  # how far back `checkpoint --receipt ID` looks for the receipt
MAX_ARGV = 4000  # characters of a receipt's command line kept (the rest cut, and said)
APPROVAL_FIELDS = ("sha256", "transcript", "transcript_sha256", "harness", "session")


class Gathered:
    """What a write needs from the log since the last checkpoint: the evidence in force, the receipts with a claim
    written since (each text's newest, as claims), and the receipts looked up by id."""

    def __init__(self) -> None:
        self.evidence = empty()
        self.pending: dict[str, dict[str, Any]] = {}
        self.found: dict[str, Record] = {}
        self.complete = False


def gather(state: State, snap: Snapshot, wanted: list[str] | None = None) -> Gathered:
    """Read my log back (my line of work, after a merge) to the last checkpoint (or init, join, rotate), and on while
    a wanted receipt id (hex) is not found, at most LOOKUP_BYTES. When the last record is the checkpoint (or carries
    one) and no id is wanted, nothing is read."""
    got = Gathered()
    want = set(wanted or [])
    after: list[Record] = []
    found: Record | None = None
    one_line = len(snap.heads) <= 1 and not snap.merged
    if not want and one_line and anchor_of(snap.last) is not None:
        found = snap.last
    else:
        back = walback.Back(state.wal_path, LOOKUP_BYTES)
        for _, rec in walback.along(back, snap.last["h"]) if not one_line else _needed(back):
            if records.op_of(rec) is records.RECEIPT:
                for w in [w for w in want if str(rec["h"]).startswith(w)]:
                    got.found[w] = rec
                    want.discard(w)
            if found is None:
                if anchor_of(rec) is not None:
                    found = rec
                else:
                    after.append(rec)
            if found is not None and not want:
                break
    if want:
        missing = ", ".join(PREFIX + w for w in sorted(want))
        raise UsageError(
            f"no receipt {missing} in {state.wal_rel} (its last {LOOKUP_BYTES >> 20} MiB)",
            "a receipt is what `rehydrate run` printed as `receipt: rc-...`, in this actor's own log",
        )
    got.complete = found is not None
    got.evidence = in_force(current(after, found))
    got.pending = pending(after)
    return got


# the ops that bear on the evidence (a receipt, a stamp or an accept record) and the recovery points that carry it
_NEEDLES = tuple(f'"op":"{name}"'.encode() for name, op in records.OPS.items() if op.evidence or op.recovery)


def _needed(back: Any) -> Any:
    """The records read back that can matter here, decoded: a line whose bytes name none of these ops (an entry, a
    compaction, a mail record) is skipped undecoded, as since.py skips resume records: its cost is the bytes read."""
    for offset, raw in back.lines():
        if any(n in raw for n in _NEEDLES):
            yield offset, walback.decode(raw, offset)


def prepare(state: State, snap: Snapshot, op: records.Op, data: dict[str, Any]) -> None:
    """Under the lock, before a stamp, accept or checkpoint record is sealed: the evidence in force carried forward
    (with this record's files added), and a checkpoint's claims resolved."""
    given = data.pop("_claims", None) or []
    wanted = [rid for _, rid in given if rid]
    got = gather(state, snap, wanted)
    force = got.evidence
    if op is records.STAMP:
        for path in data.get("dropped", []):
            if path not in force["stamps"] and path not in force["approvals"]:
                raise UsageError(f"{path} is not stamped or approved", "`rehydrate status` lists what is")
            force["stamps"].pop(path, None)
            force["approvals"].pop(path, None)
        force["stamps"].update(data["files"])
    elif op is records.ACCEPT:
        force["approvals"][data["file"]] = {k: data[k] for k in APPROVAL_FIELDS if k in data}
    if len(force["stamps"]) + len(force["approvals"]) > MAX_STAMPS:
        raise UsageError(
            f"more than {MAX_STAMPS} files stamped or approved at once",
            "drop the stamps that no longer matter with `rehydrate stamp --drop FILE`",
        )
    if op is records.CHECKPOINT:
        claims = claims_for(got, given)
        if claims:
            data["claims"] = claims
    kept = carried(force)
    if kept is not None or op is not records.CHECKPOINT:
        data["evidence"] = kept if kept is not None else empty()


def claims_for(gathered: Gathered, given: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """The claims a checkpoint records: those given (text, receipt id's hex or None), then the receipts with a claim
    written since the last checkpoint whose text was not given (each text's newest receipt)."""
    claims = [claim_of(text, gathered.found.get(rid) if rid else None) for text, rid in given]
    named = {c["text"] for c in claims}
    claims += [claim for text, claim in gathered.pending.items() if text not in named]
    if len(claims) > MAX_CLAIMS:
        raise UsageError(f"{len(claims)} claims on one checkpoint, more than {MAX_CLAIMS}", "claim what matters")
    return claims
