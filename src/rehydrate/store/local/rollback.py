"""A rollback of the log found: what one pass over the whole log learned (ScanInfo), the records the rollback cache
(store/local/seen.py) saw that the log no longer holds (rolled_back), and how that is said (lost_message).
"""

from __future__ import annotations

from rehydrate.store import records
from rehydrate.store.local.seen import RING, Seen
from rehydrate.store.wal import scan as walscan
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.latches.order import Collector
    from rehydrate.store.wal.record import Record


def lost_message(lost: dict[str, Any]) -> str:
    n = lost["count"]
    count = f"{'' if lost['exact'] else 'at least '}{n} record{'s' if n != 1 else ''}"
    nxt = lost.get("next")
    was = clean(str(lost.get("from") or ""), one_line=True)[:120]
    if lost.get("kind") == "switched":
        now = clean(str(lost.get("branch") or "a detached HEAD"), one_line=True)[:120]
        after = f'its last next action was "{nxt[:160]}"' if nxt else "none of them was a checkpoint"
        return (
            f"the state now stands on {now} (was {was}): {count} of {was}'s line are not here; {after}; "
            f"`git switch {was}` brings them back. Reported until the next checkpoint, which records it"
        )
    after = f"their last checkpoint's next action: {nxt[:160]}" if nxt else "none of them was a checkpoint"
    return (
        f"rolled back: {count} this clone saw are gone (the newest: record {lost['to']}·{str(lost['h'])[:6]}; "
        f"the log's head is record {lost['end']}); {after}. "
        "A branch switch or a restore of state/ from git (`git reset`, `git stash`) does this; otherwise records "
        "were deleted. "
        "Reported until the next checkpoint, which records it"
    )


_TRACKED = frozenset(op.name for op in (records.CHECKPOINT, records.MERGE, records.ROTATE))  # what Seen.track reads


class ScanInfo:
    """What one pass over the whole log learned, in memory that does not grow with the log: the heads, this actor's
    recorded lines of 10_invariants.md while the log is one line (order.Collector: latch.READ), and for the
    rollback check which of the records the cache remembers are still there (by h)."""

    def __init__(self, want: set[str]) -> None:
        from rehydrate.store.latches.order import Collector  # it loads collections: off the hook path's cheap read

        self.want = want  # the h16s the cache remembers
        self.lines = Collector(linear_only=True)  # while the log is one line
        self.full: Collector | None = None  # from the pass's read-back on, when it is not (load)
        self.present: set[str] = set()
        self.first: int | None = None
        self.merges = 0  # merge records seen
        self.archived: set[str] = set()  # the h16 of each rotate's prev: the last record it archived
        self.heads = walscan.Heads()
        self._seen = Seen()  # the log as it is now, in the cache's terms (its ring filled from recent when read)
        self.recent: list[tuple[int, str]] = []  # the last records' (seq, h16), at least RING of them

    @property
    def seen(self) -> Seen:
        """The log as it is now, in the cache's terms: its last records (the ring) and what they carried."""
        seen = self._seen
        for seq, h16 in self.recent[-RING:]:
            seen.ring_add(seq, h16)
        self.recent.clear()
        seen.dirty = True
        return seen

    @classmethod
    def of(cls, seen: Seen | None) -> ScanInfo:
        """A pass that looks for what the cache remembers."""
        want = {h for _, h in seen.ring} if seen is not None else set()
        if seen is not None and seen.lost is not None:
            want.add(str(seen.lost["h"])[:16])
        return cls(want)

    def add(self, rec: Record) -> None:
        if self.first is None:
            self.first = rec["seq"]
        h16 = str(rec["h"])[:16]
        if h16 in self.want:
            self.present.add(h16)
        op = rec["op"]
        kind = records.of(op)
        if kind is records.MERGE:
            self.merges += 1
        elif kind is records.ROTATE and isinstance(rec["prev"], str):
            self.archived.add(rec["prev"][:16])
        self.recent.append((rec["seq"], h16))
        if len(self.recent) > 4 * RING:
            del self.recent[:-RING]
        if op in _TRACKED:
            self._seen.track(rec)
        self.lines.add(rec)
        if self.full is not None:
            self.full.add(rec)

    def load(self, rec: Record) -> None:
        """A record the pass read back once (the log is not one line: wal/scan.py), in order, before the one that
        made it: the recorded lines collected as a graph from here on (order.Collector)."""
        if self.full is None:
            from rehydrate.store.latches.order import Collector  # (see __init__)

            self.full = Collector()
        self.full.add(rec)

    def collected(self) -> Collector:
        """This actor's recorded lines as the pass collected them (broken: not collected)."""
        return self.full if self.full is not None else self.lines


def rolled_back(seen: Seen, info: ScanInfo, last: Record, branch: str | None) -> dict[str, Any] | None:
    """The records the cache saw that the log no longer holds (by h), or None. Records older than the log's first
    (archived by a rotate) are not lost. With the branch changed since the cache was written, a switch."""
    if seen.end is None:
        return None
    first = info.first if info.first is not None else last["seq"]
    ring = seen.ring
    # a rotate in the log archived the records up to its prev (a union can put the base's init before it): the
    # cache's records up to that one are archived, not lost
    cut = max((i + 1 for i, (_, h) in enumerate(ring) if h in info.archived), default=0)
    missing = [(seq, h) for seq, h in ring[cut:] if h not in info.present and seq >= first]
    if not missing:
        return None
    gone = {h for _, h in missing}
    exact = ring[0][1] not in gone
    newest = max(missing)
    nxt = seen.cp[1] if seen.cp and (seen.cp_h in gone or (not seen.cp_h and seen.cp[0] >= min(missing)[0])) else None
    switched = branch is not None and seen.branch is not None and branch != seen.branch
    return {
        "count": len(missing),
        "exact": exact,
        "to": newest[0],
        "h": newest[1],
        "end": int(last["seq"]),
        "next": nxt,
        "kind": "switched" if switched else "rolled-back",
        "from": seen.branch if switched else None,
        "branch": branch if switched else None,
    }
