"""The log as a graph: heads, this worktree's head, each line of work's last checkpoint, and the merge record.

git's union merge keeps both sides' new lines of a log (base, then ours, then theirs), so after a merge a log holds
several lines of work: records that no later record names as a parent (its heads). A record names its parents by
hash (`prev`, and a merge record's `parents`), and a parent always comes before its child in the file (wal._Scan).

- My head: the record this worktree's next write follows: the end of this worktree's seen cache if it is a head,
  else the head that comes first in the file (union puts the receiving side first).
- The join: the first write while there are several heads appends a `merge` record first (prev: my head,
  parents: the other heads, seq: 1 + the highest), whose data lists each line of work (its head, its branch, its
  last checkpoint), then its own record. The merge record renders 99_next.md (render_merged): the lines of work are
  shown until a checkpoint chooses the next action.

Not on the hook path's cheap start: loaded only when a log changed outside rehydrate and holds several heads, or
when a write joins them.
"""

from __future__ import annotations

import os

from rehydrate.errors import RehydrateError
from rehydrate.store import records
from rehydrate.store.layout import HANDOFF, NEXT
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import scan as walscan
from rehydrate.store.wal.scan import Node
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.session import Snapshot
    from rehydrate.store.state import State
    from rehydrate.store.wal.record import Record

_NEXT_CAP = 300  # the most characters of a line's next action a merge record carries
_MAX_LINES = 16  # the most lines of work one merge record lists
_MAX_RENDERS = 64  # the most renderings of a view per line of work that a union-merged view is checked against


class Graph:
    """Every record's place in a log (offset, seq, op, parents), by h, and the heads in file order: as the chain
    check held them (`of`), else from one read of the log that trusts what a pass under the same lock verified
    (wallines.parsed: each line parsed, not hashed again); a line that is not a whole record, or repeats one, is left
    out."""

    def __init__(self, path: str, end: int | None = None) -> None:
        self.path = path
        self.index: dict[str, Node] = {}
        heads = walscan.Heads()
        for offset, rec in wallines.parsed(path, end):
            h = rec["h"]
            if h in self.index:
                continue
            parents = wal.parents_of(rec)
            self.index[h] = Node(offset, rec["seq"], rec["op"], parents)
            heads.add(offset, rec, parents)
        self.heads: list[tuple[int, Record]] = heads.records()

    @classmethod
    def of(cls, path: str, heads: walscan.Heads) -> Graph | None:
        """The graph the chain check already indexed (its Heads hold every record's place once the log was not one
        line: walscan._Known), nothing read; None if it did not."""
        if heads.index is None:
            return None
        g = cls.__new__(cls)
        g.path, g.index, g.heads = path, heads.index, heads.records()
        return g

    def read(self, h: str) -> Record | None:
        """The record h, read again at its offset (one line)."""
        node = self.index.get(h)
        return walback.read_at(self.path, node.offset) if node is not None else None

    def last_of(self, h: str, ops: tuple[str, ...]) -> Record | None:
        """The newest record of one of ops on h's line: h itself or the first found walking back along prev (the
        first parent: the line this worktree followed). A rotate stands in for what it carries."""
        found = self.producers(h, ops, 1)
        return found[0] if found else None

    def producers(self, h: str, ops: tuple[str, ...], limit: int) -> list[Record]:
        """The records of one of ops on h's line, newest first, at most limit (walking back along prev, as
        last_of); a rotate stands in for what it carries, and ends the line (what came before is archived)."""
        out: list[Record] = []
        seen: set[str] = set()
        at: str | None = h
        while at is not None and at not in seen and len(out) < limit:
            seen.add(at)
            node = self.index.get(at)
            if node is None:
                break
            if node.op in ops or records.of(node.op) is records.ROTATE:
                rec = walback.read_at(self.path, node.offset)
                if rec is None:
                    break
                if records.op_of(rec) is not records.ROTATE:
                    out.append(rec)
                else:
                    carried = rec["data"].get("checkpoint" if records.CHECKPOINT.name in ops else "handoff")
                    if isinstance(carried, dict) and carried.get("op") in ops:
                        out.append(carried)
                    break
            at = node.parents[0] if node.parents else None
        return out

    def last_producers(self, ops: tuple[str, ...], limit: int) -> list[Record]:
        """The log's last records of one of ops (a rotate's carried one for it), at most limit, newest first."""
        out: list[Record] = []
        for node in reversed(self.index.values()):
            if len(out) >= limit:
                break
            if node.op not in ops and records.of(node.op) is not records.ROTATE:
                continue
            rec = walback.read_at(self.path, node.offset)
            if rec is not None and records.op_of(rec) is records.ROTATE:
                rec = rec["data"].get("checkpoint" if records.CHECKPOINT.name in ops else "handoff")
            if isinstance(rec, dict) and rec.get("op") in ops:
                out.append(rec)
        return out

    def merged_since(self, h: str) -> Record | None:
        """The newest merge record on h's line not followed by a checkpoint (the lines of work still open), or None."""
        seen: set[str] = set()
        at: str | None = h
        while at is not None and at not in seen:
            seen.add(at)
            node = self.index.get(at)
            if node is None or records.of(node.op).recovery:
                return None
            if records.of(node.op) is records.MERGE:
                return walback.read_at(self.path, node.offset)
            at = node.parents[0] if node.parents else None
        return None


def my_head(
    heads: list[tuple[int, Record]], mine: str | None, graph: Graph | None = None, branch: str | None = None
) -> int:
    """The index in heads of this worktree's head: the one whose h starts with `mine` (the seen cache's end), else
    the first whose last checkpoint was made on `branch`, else the first in file order (union puts the receiving
    side first)."""
    if mine:
        for i, (_, rec) in enumerate(heads):
            if str(rec["h"]).startswith(mine):
                return i
    if graph is not None and branch:
        for i, (_, rec) in enumerate(heads):
            if _branch(graph.last_of(str(rec["h"]), (records.CHECKPOINT.name,))) == branch:
                return i
    return 0


def ordered(heads: list[tuple[int, Record]], mine: int) -> list[tuple[int, Record]]:
    """The heads, mine first, then the others in file order."""
    return [heads[mine], *heads[:mine], *heads[mine + 1 :]]


def _branch(rec: Record | None) -> str | None:
    git = rec.get("git") if rec is not None else None
    branch = git.get("branch") if isinstance(git, dict) else None
    return clean(branch, one_line=True)[:120] if isinstance(branch, str) and branch else None


def lines(graph: Graph, heads: list[tuple[int, Record]], my_branch: str | None = None) -> list[dict[str, Any]]:
    """Each line of work (one per head, mine first): its head, seq, branch and last checkpoint."""
    out: list[dict[str, Any]] = []
    for i, (_, head) in enumerate(heads[:_MAX_LINES]):
        cp = graph.last_of(str(head["h"]), (records.CHECKPOINT.name,))
        branch = _branch(cp) or _branch(head)
        if i == 0 and my_branch:
            branch = clean(my_branch, one_line=True)[:120]
        out.append({"head": head["h"], "seq": head["seq"], "branch": branch, "checkpoint": _checkpoint(cp)})
    return out


def _checkpoint(cp: Record | None) -> dict[str, Any] | None:
    if cp is None:
        return None
    data = records.data_of(cp)
    return {
        "seq": cp.get("seq"),
        "h": cp.get("h"),
        "ts": cp.get("ts"),
        "next": clean(str(data.get("next", "")))[:_NEXT_CAP],
        "done": clean(str(data.get("done", "")))[:_NEXT_CAP],
    }


def line_name(line: dict[str, Any], i: int) -> str:
    branch = line.get("branch")
    return clean(branch, one_line=True)[:120] if isinstance(branch, str) and branch else f"line {i + 1}"


def valid_lines(data: Any) -> list[dict[str, Any]]:
    """A merge record's data.lines, each a dict (the record is untrusted: anything else is left out)."""
    found = data.get("lines") if isinstance(data, dict) else None
    return [x for x in found if isinstance(x, dict)][:_MAX_LINES] if isinstance(found, list) else []


def render_merged(rec: Record) -> str:
    """99_next.md as a merge record renders it: how many lines of work were merged, then each line's branch, last
    checkpoint, done and next action."""
    found = valid_lines(records.data_of(rec))
    out = [f"# Next: {len(found)} lines of work were merged (a checkpoint chooses)", ""]
    for i, line in enumerate(found):
        cp = line.get("checkpoint")
        name = line_name(line, i)
        if not isinstance(cp, dict):
            out += [f"## {name}: no checkpoint yet", ""]
            continue
        ts = clean(str(cp.get("ts", "")), one_line=True)[:40]
        seq = cp.get("seq") if isinstance(cp.get("seq"), int) and not isinstance(cp.get("seq"), bool) else "?"
        out.append(f"## {name}: checkpoint {seq}, {ts}")
        out.append("")
        out.append(f"Done: {clean(str(cp.get('done', '')))[:_NEXT_CAP]}")
        out.append("")
        out.append(f"Next: {clean(str(cp.get('next', '')))[:_NEXT_CAP]}")
        out.append("")
    return "\n".join(out)


def join(state: State, snap: Snapshot, last: Record, bound: dict[str, str]) -> tuple[Record, bytes]:
    """The merge record (sealed, and its line) that the first write after a merge appends first: prev my head,
    parents the other heads, data.lines each line of work (mine first). It binds 99_next.md as render_merged
    renders it, and a 20_handoff.md that reconciliation found merge-shaped (view-merged) as it is."""
    if any(p.code == "view-merged" and p.file == state.rel(HANDOFF) for p in snap.problems):
        merged = state.view_bytes(HANDOFF, snap)  # 20_handoff.md as the union left it
        if merged is not None:
            bound[HANDOFF] = wal.sha256(merged)
    return state.seal(last, records.MERGE.name, {"lines": snap.merged or []}, dict(bound), None, snap.heads[1:])


# the ops whose records render 99 (a merge record too: it joins the heads' renderings) and 20
_VIEW_OPS = tuple((view, tuple(n for n, op in records.OPS.items() if op.moves == view)) for view in (NEXT, HANDOFF))


def head_views(graph: Graph, heads: list[Record]) -> dict[str, list[Record]]:
    """For 99_next.md and 20_handoff.md, the records that produced the view that a union merge may have made the
    file of (a merge record renders 99): on each head's line (the first _MAX_LINES heads), newest first, at most
    _MAX_RENDERS a line, then the log's last _MAX_RENDERS others and the newest archives' last ones. A merge joins
    the heads' last renderings; a rebase or a cherry-pick replays commits one by one, and each replay's union may
    keep a line of an earlier rendering of either side, or of one a replayed rotate then archived."""
    archived = _archived_producers(graph)
    out: dict[str, list[Record]] = {}
    for name, ops in _VIEW_OPS:
        found = {_key(rec): rec for r in heads[:_MAX_LINES] for rec in graph.producers(str(r["h"]), ops, _MAX_RENDERS)}
        for rec in [*graph.last_producers(ops, _MAX_RENDERS), *(r for r in archived if r.get("op") in ops)]:
            found.setdefault(_key(rec), rec)
        out[name] = list(found.values())
    return out


_MAX_ARCHIVES = 4  # the newest rotates of the log whose archives' last renderings count
_ARCHIVE_BYTES = 1 << 20  # the most bytes read back from the end of each


def _archived_producers(graph: Graph) -> list[Record]:
    """The last records that produced 99 or 20 in the archives the log's newest rotates name, newest first, at most
    _MAX_RENDERS of each view an archive. Read back from each archive's end, bounded; an archive name that is not
    a plain file of archive/ is skipped (the scan names it), as is any damage."""
    root = os.path.dirname(os.path.dirname(graph.path))
    rotates = [node for node in graph.index.values() if records.of(node.op) is records.ROTATE][-_MAX_ARCHIVES:]
    out: list[Record] = []
    for node in rotates:
        rec = walback.read_at(graph.path, node.offset)
        if rec is None or walscan.archive_error(rec) is not None:
            continue
        counts = dict.fromkeys((name for name, _ in _VIEW_OPS), 0)
        try:
            for _, old in walback.Back(os.path.join(root, rec["data"]["archive"]), _ARCHIVE_BYTES):
                name = next((n for n, ops in _VIEW_OPS if old.get("op") in ops), None)
                if name is not None and counts[name] < _MAX_RENDERS:
                    counts[name] += 1
                    out.append(old)
                if min(counts.values()) >= _MAX_RENDERS:
                    break
        except (OSError, RehydrateError, ValueError):
            continue
    return out


def _key(rec: Record) -> str:
    """A record's identity among renderings: its h (a rotate's carried record has none: what it carries)."""
    h = rec.get("h")
    return h if isinstance(h, str) else repr((rec.get("op"), rec.get("seq"), rec.get("ts"), rec.get("data")))


def heads_text(graph: Graph, heads: list[tuple[int, Record]]) -> str:
    """The heads as the seen cache keeps them: "seq:h16:offset:prev's offset" each (-1: no prev), mine first."""
    out = []
    for offset, rec in heads:
        node = graph.index.get(rec["prev"]) if isinstance(rec["prev"], str) else None
        out.append(f"{int(rec['seq'])}:{str(rec['h'])[:16]}:{offset}:{node.offset if node is not None else -1}")
    return " ".join(out)


def after_pass(
    path: str, snap: Snapshot, found: walscan.Heads, merges: int, hint: str | None, last_offset: int, end: int | None
) -> int:
    """After a whole pass over the log at path: its heads (found), this worktree's head (snap.last: the head hint
    names, else by snap.branch), the merged lines of work not yet chosen and each head's view producers. Returns my
    head's byte offset. A log that is one line and never merged costs nothing more; otherwise the pass held every
    record's place (Graph.of)."""
    heads = found.records()
    if len(heads) <= 1 and not merges:
        if heads and heads[0][1]["h"] != snap.last["h"]:  # the last line repeats an earlier record: the head is the
            return _one_head(path, snap, heads[0], end)  # record no later one follows (a signature check's too)
        return last_offset
    # several heads or a merge record: the chain check held every record's place from its read-back on (a fork or a
    # merge's parents sent it back); else (no such record seen: damage) the log is read once more, parsed
    g = Graph.of(path, found) or Graph(path, end)
    mine_first = ordered(heads, my_head(heads, hint, g, snap.branch)) if heads else []
    if mine_first:
        offset, rec = mine_first[0]
        if rec["h"] != snap.last["h"]:
            snap.last, last_offset = rec, offset
            snap.prev = g.read(rec["prev"]) if isinstance(rec["prev"], str) else None
        snap.heads = [r for _, r in mine_first]
    if len(mine_first) > 1:
        snap.merged = lines(g, mine_first, snap.branch)
        snap.head_views = head_views(g, snap.heads)
        snap.heads_text = heads_text(g, mine_first[:16])
    else:
        merge = g.merged_since(str(snap.last["h"]))
        snap.merged = valid_lines(merge["data"]) if merge is not None else None
    return last_offset


def _one_head(path: str, snap: Snapshot, head: tuple[int, Record], end: int | None) -> int:
    """The log is one line whose last record is not its last line (a line repeated after it, as a union merge can
    leave): that record is this worktree's head."""
    offset, rec = head
    g = Graph(path, end)
    snap.last, snap.heads = rec, [rec]
    snap.prev = g.read(rec["prev"]) if isinstance(rec["prev"], str) else None
    return offset
