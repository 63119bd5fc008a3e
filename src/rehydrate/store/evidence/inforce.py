"""What the records say, read without opening a file: a receipt's id, the claims a checkpoint binds to receipts,
and the set of stamps and approvals in force (untrusted as recorded, filtered by `in_force`: a recorded path must be
`safe_rel` before a file is opened, a hash `is_hex`)."""

from __future__ import annotations

import itertools

from rehydrate.errors import UsageError
from rehydrate.store import records
from rehydrate.store.wal.back import anchor_of
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.wal.record import Record

PREFIX = "rc-"  # a receipt's id: PREFIX and the first ID_HEX hex digits of its record's hash
ID_HEX = 12
MAX_CLAIM = 300  # characters of a claim's text
MAX_STAMPS = 256  # files stamped or approved at once in force


def receipt_id(rec: Record) -> str:
    return PREFIX + str(rec["h"])[:ID_HEX]


def parse_id(text: str) -> str:
    """A receipt id as given (rc-<hex>, or its hex alone, at least 8 digits): the hex, lower case."""
    raw = text.strip().lower()
    raw = raw[len(PREFIX) :] if raw.startswith(PREFIX) else raw
    if not 8 <= len(raw) <= 64 or any(c not in "0123456789abcdef" for c in raw):
        raise UsageError(f"{text!r} is not a receipt id", "a receipt id is what `rehydrate run` printed: rc-<hex>")
    return raw


def empty() -> dict[str, Any]:
    return {"stamps": {}, "approvals": {}}


def in_force(value: object) -> dict[str, Any]:
    """A record's `data.evidence` (untrusted) as {"stamps": {path: sha}, "approvals": {path: {...}}}: entries whose
    path is not safe_rel or whose hash is not a hash are left out."""
    out = empty()
    if not isinstance(value, dict):
        return out
    stamps, approvals = value.get("stamps"), value.get("approvals")
    if isinstance(stamps, dict):  # at most MAX_STAMPS in all, as a write allows: a planted record cannot ask for more
        out["stamps"] = dict(
            itertools.islice(((p, s) for p, s in stamps.items() if safe_rel(p) and is_hex(s)), MAX_STAMPS)
        )
    if isinstance(approvals, dict):
        left = MAX_STAMPS - len(out["stamps"])
        found = (
            (p, a) for p, a in approvals.items() if safe_rel(p) and isinstance(a, dict) and is_hex(a.get("sha256"))
        )
        out["approvals"] = dict(itertools.islice(found, max(left, 0)))
    return out


def carried(value: dict[str, Any]) -> dict[str, Any] | None:
    """What a record carries: the set, or None when nothing is stamped or approved (records stay as they were)."""
    return value if value["stamps"] or value["approvals"] else None


def current(after: list[Record], found: Record | None) -> Any:
    """The evidence in force (untrusted, as recorded) from the records after the last checkpoint (newest first) and
    the record the checkpoint was found in: the newest stamp or accept record's, else the rotate record's (what was
    in force when its log was archived), else the checkpoint's. Shared by since.py and gather."""
    for rec in after:
        if records.op_of(rec).evidence == "set":
            return rec["data"].get("evidence")
    if found is None:
        return None
    if records.op_of(found) is records.ROTATE and "evidence" in found["data"]:
        return found["data"]["evidence"]
    anchor = anchor_of(found)
    return records.data_of(anchor).get("evidence")


def pending(after: list[Record]) -> dict[str, dict[str, Any]]:
    """The claims of the `receipt` records after the last checkpoint (newest first), oldest text first, each text's
    newest receipt winning: {text: claim}."""
    out: dict[str, dict[str, Any]] = {}
    for rec in reversed(after):
        text = rec["data"].get("claim") if records.op_of(rec) is records.RECEIPT else None
        if isinstance(text, str):
            out.pop(text, None)
            out[text] = claim_of(text, rec)
    return out


def claim_of(text: str, receipt: Record | None) -> dict[str, Any]:
    """A claim as a checkpoint records it: its text and its receipt's facts."""
    claim: dict[str, Any] = {"text": text}
    if receipt is not None:
        data = receipt["data"]
        facts = {"id": receipt_id(receipt), "h": receipt["h"], "ts": receipt["ts"]}
        for key in ("exit", "tree", "tree_after", "argv"):
            if key in data:
                facts[key] = data[key]
        claim["receipt"] = facts
    return claim


def clean_claim(text: str) -> str:

    claim = clean(text, one_line=True)
    if not claim:
        raise UsageError("a claim is empty", "say what is claimed, for example `tests pass`", field="claim")
    if len(claim) > MAX_CLAIM:
        raise UsageError(f"a claim is {len(claim)} characters, more than {MAX_CLAIM}", field="claim")
    return claim


def safe_rel(path: object) -> str | None:
    """A recorded path (untrusted) when it is a plain relative path inside the project, else None: no absolute
    path, no `..`, no empty or `.` part, no NUL or control character, at most 4,096 characters."""
    if not isinstance(path, str) or not 0 < len(path) <= 4096 or path.startswith("/"):
        return None
    if any(ord(c) < 32 or c == "\x7f" for c in path):
        return None
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    return path


def is_hex(text: object) -> bool:
    """A git or sha256 hash in lower-case hex."""
    return isinstance(text, str) and len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
