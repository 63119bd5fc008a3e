"""wal/.<actor>.seen: the rollback cache. What this clone last saw of its actor's log, so that a log that no longer
holds records this clone saw (a `git checkout` of state/, a branch switch, a deleted line) is named as rolled back:
the records' hashes still chain, so nothing else would notice. See `State._follow` in state.py for how it is used.
"""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.errors import RehydrateError
from rehydrate.store import WORDS, fsio, wal
from rehydrate.store.views import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

    from rehydrate.store.wal import Record

_SEEN_MAX = 16 << 10  # the cache is small; a bigger file is not ours
_RING = 64  # how many of the last records the cache remembers (seq and hash prefix)
_NEXT_CAP = 300  # the most characters of a checkpoint's next action the cache keeps


class Seen:
    """wal/.<actor>.seen: what this clone last saw of its actor's log. A cache, not state: it is git-ignored, never
    synced, and untrusted (missing, garbage, huge, a link or a FIFO all read as "nothing known").

    - fp: the log's identity (inode, size, mtime) after this clone last wrote or checked it: while it holds, nothing
      outside rehydrate touched the log and its tail is enough; otherwise the whole chain is checked once;
    - ring: (seq, first 16 hex digits of h) of the last records seen, oldest first; the last is the log's end;
    - cp: the last checkpoint seen: its seq and its next action;
    - lost: a rollback found and not yet acknowledged (see `State._follow` in state.py).
    """

    def __init__(self) -> None:
        self.fp = ""
        self.ring: list[tuple[int, str]] = []
        self.cp: tuple[int, str] | None = None
        self.lost: dict[str, Any] | None = None

    @classmethod
    def load(cls, path: str) -> Seen | None:
        try:
            data = fsio.read_bytes(path, _SEEN_MAX, WORDS)
            obj: Any = safejson.loads(data) if data else None
        except (RehydrateError, ValueError):
            return None
        if not isinstance(obj, dict):
            return None
        seen = cls()
        try:
            _need(isinstance(obj, dict) and obj.get("v") == 1)
            seen.fp = obj["fp"]
            seen.ring = [(int(x[0]), x[1]) for x in obj["ring"]]
            cp = obj.get("cp")
            seen.cp = (int(cp[0]), cp[1]) if cp is not None else None
            lost = obj.get("lost")
            _need(isinstance(seen.fp, str) and len(seen.fp) <= 100 and 0 < len(seen.ring) <= _RING)
            for _, h in [*seen.ring, *([seen.cp] if seen.cp else [])]:
                _need(isinstance(h, str) and len(h) <= _NEXT_CAP)
            _need(all(a[0] < b[0] for a, b in zip(seen.ring, seen.ring[1:], strict=False)))
            if lost is not None:
                _need(isinstance(lost, dict) and _lost_ok(lost))
                seen.lost = lost
        except (KeyError, TypeError, ValueError, IndexError, OverflowError):
            return None
        return seen

    def dump(self) -> bytes:
        return wal.canonical(
            {
                "v": 1,
                "fp": self.fp,
                "ring": [list(x) for x in self.ring[-_RING:]],
                "cp": [self.cp[0], clean(self.cp[1], one_line=True)[:_NEXT_CAP]] if self.cp else None,
                "lost": self.lost,
            }
        )

    def save(self, path: str, log: str) -> None:
        """Write the cache to path (a hint: never synced), with the log's identity if it has none yet."""
        if not self.fp:
            self.fp = fingerprint(log)
        fsio.write_hint(path, self.dump())

    @property
    def end(self) -> tuple[int, str] | None:
        return self.ring[-1] if self.ring else None

    def saw(self, rec: Record) -> None:
        """A record of the log, in order."""
        seq = rec["seq"]
        while self.ring and self.ring[-1][0] >= seq:
            self.ring.pop()
        self.ring.append((seq, str(rec["h"])[:16]))
        if len(self.ring) > 4 * _RING:
            del self.ring[:-_RING]
        data = rec["data"]
        if rec["op"] == "rotate" and isinstance(data.get("checkpoint"), dict):
            data, seq = data["checkpoint"].get("data"), data["checkpoint"].get("seq")
        elif rec["op"] != "checkpoint":
            return
        if isinstance(data, dict) and isinstance(seq, int) and isinstance(data.get("next"), str):
            self.cp = (seq, data["next"][: 4 * _NEXT_CAP])  # cleaned once, when written (a full pass sees many)


def fingerprint(log: str) -> str:
    """The log's identity (inode, size, mtime): while it matches the cache's, nothing outside rehydrate touched it."""
    st = os.stat(log)
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def _need(condition: bool) -> None:
    if not condition:
        raise ValueError("not a cache this version wrote")


def _lost_ok(lost: dict[str, Any]) -> bool:
    ints = all(isinstance(lost.get(k), int) and not isinstance(lost.get(k), bool) for k in ("count", "to", "end"))
    nxt = lost.get("next")
    return (
        ints
        and isinstance(lost.get("exact"), bool)
        and isinstance(lost.get("h"), str)
        and len(lost["h"]) <= 64
        and (nxt is None or (isinstance(nxt, str) and len(nxt) <= _NEXT_CAP))
    )


def lost_message(lost: dict[str, Any]) -> str:
    n = lost["count"]
    first = lost["to"] - n + 1
    span = f"record {lost['to']}" if n == 1 else f"records {first}-{lost['to']}"
    count = f"{'' if lost['exact'] else 'at least '}{n} record{'s' if n != 1 else ''} this clone saw"
    nxt = lost.get("next")
    after = f"their last checkpoint's next action: {nxt[:160]}" if nxt else "none of them was a checkpoint"
    return (
        f"rolled back: {count} are gone ({span}; the log ends at record {lost['end']}); {after}. "
        "A branch switch or a restore of state/ from git does this; otherwise records were deleted. "
        "Reported until the next checkpoint, which records it"
    )


class ScanInfo:
    """What one pass over the whole log learned for the rollback check."""

    def __init__(self, want: set[int]) -> None:
        self.want = want  # the seqs whose hashes the cache remembers
        self.present: dict[int, str] = {}
        self.first: int | None = None
        self.seen = Seen()  # the log as it is now, in the cache's terms

    @classmethod
    def of(cls, seen: Seen | None) -> ScanInfo:
        """A pass that looks for what the cache remembers."""
        want = {seq for seq, _ in seen.ring} if seen is not None else set()
        if seen is not None and seen.lost is not None:
            want.add(seen.lost["to"])
        return cls(want)

    def add(self, rec: Record) -> None:
        if self.first is None:
            self.first = rec["seq"]
        if rec["seq"] in self.want:
            self.present[rec["seq"]] = str(rec["h"])[:16]
        self.seen.saw(rec)


def rolled_back(seen: Seen, info: ScanInfo, last: Record) -> dict[str, Any] | None:
    """The records the cache saw that the log no longer holds, or None. The newest remembered record still in the
    log is where the histories part; records before the log's first (archived by a rotate) are not lost."""
    end = seen.end
    if end is None:
        return None
    first = info.first if info.first is not None else last["seq"]
    fork: int | None = None
    for seq, h in reversed(seen.ring):
        if seq < first or info.present.get(seq) == h:
            fork = seq
            break
    if fork == end[0]:
        return None
    exact = fork is not None
    if fork is None:  # the histories part before what the cache remembers
        fork = min(int(last["seq"]), seen.ring[0][0] - 1)
    nxt = seen.cp[1] if seen.cp and seen.cp[0] > fork else None
    return {"count": end[0] - fork, "exact": exact, "to": end[0], "h": end[1], "end": int(last["seq"]), "next": nxt}
