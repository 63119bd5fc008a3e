"""store/evidence/prepare.py: before a stamp or checkpoint is sealed, the evidence in force carried forward with the
record's files, and a checkpoint's claims resolved; a receipt that is not in the log is refused."""

from __future__ import annotations

import pytest

from rehydrate.errors import UsageError
from rehydrate.store import records
from rehydrate.store.evidence import prepare
from rehydrate.store.state import State

SHA = "a" * 64


def test_a_stamp_carries_its_files_and_refuses_to_drop_one_not_stamped(state: State) -> None:
    with state.reading() as snap:
        got = prepare.gather(state, snap)
        assert got.complete and got.evidence == {"stamps": {}, "approvals": {}} and got.pending == {}
        data = {"files": {"src/app.py": SHA}}
        prepare.prepare(state, snap, records.STAMP, data)
        assert data["evidence"] == {"stamps": {"src/app.py": SHA}, "approvals": {}}
        with pytest.raises(UsageError, match=r"src/other\.py is not stamped or approved"):
            prepare.prepare(state, snap, records.STAMP, {"files": {}, "dropped": ["src/other.py"]})


def test_a_checkpoints_claims_are_resolved_and_a_missing_receipt_refused(state: State) -> None:
    with state.reading() as snap:
        data = {"done": "x", "next": "y", "_claims": [("tests pass", None)]}
        prepare.prepare(state, snap, records.CHECKPOINT, data)
        assert data["claims"] == [{"text": "tests pass"}] and "_claims" not in data
        assert "evidence" not in data  # nothing in force: the record stays as it was
        with pytest.raises(UsageError, match=r"no receipt rc-0123456789ab in state/wal/agent\.jsonl"):
            prepare.prepare(state, snap, records.CHECKPOINT, {"_claims": [("tests pass", "0123456789ab")]})
    many = [(f"claim {n}", None) for n in range(prepare.MAX_CLAIMS + 1)]
    with pytest.raises(UsageError, match=f"{prepare.MAX_CLAIMS + 1} claims on one checkpoint"):
        prepare.claims_for(prepare.Gathered(), many)
