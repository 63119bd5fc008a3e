"""What takes an entry of 10_invariants.md out of force: a later entry that supersedes it, or a withdrawal.

The file stays append-only and bound line by line: nothing is ever removed from it. What is in force is every entry
(a decision or a rejected approach) less those a line names as superseded or withdrawn (layout.entry_lifts reads
the id at its fixed place). That is a property of the set of lines, not of their order: two branches that merge
(git keeps both sides' lines) agree on it, whichever side took what out. Once out, an entry stays out: bringing it
back takes a new entry that says why.

Found by bytes.find over the file's bytes (the brief's scan, the guard's), and only the candidate lines decoded: the
hook path reads it, so it imports layout alone.
"""

from __future__ import annotations

from rehydrate.store import layout

_WITHDRAWAL = b"- W-"
SUPERSEDING = layout.SUPERSEDING.encode()
_BEFORE = layout.LIFT_AT - len(layout.SUPERSEDING)  # where SUPERSEDING stands in its line
PREFIX = layout.LIFT_AT + 16  # bytes of a line that hold what entry_lifts reads


Lift = tuple[int, str, str]  # (the line's offset, its own id, the id it takes out of force)


def found(buf: bytes, end: int) -> list[Lift]:
    """Each line in buf[:end] (buf starts a line) that takes an entry out of force, in file order."""
    starts: set[int] = set()
    if buf.startswith(_WITHDRAWAL) and end > 0:
        starts.add(0)
    at = buf.find(b"\n" + _WITHDRAWAL, 0, end)
    while at >= 0:
        starts.add(at + 1)
        at = buf.find(b"\n" + _WITHDRAWAL, at + 1, end)
    at = buf.find(SUPERSEDING, 0, end)
    while at >= 0:
        start = at - _BEFORE
        if start >= 0 and (start == 0 or buf[start - 1] == 10) and buf.startswith(b"- ", start):
            starts.add(start)
        at = buf.find(SUPERSEDING, at + 1, end)
    out: list[Lift] = []
    for start in sorted(starts):
        lift = at_line(buf[start : start + PREFIX])
        if lift is not None:
            out.append((start, *lift))
    return out


def at_line(head: bytes) -> tuple[str, str] | None:
    """(the line's id, the id it takes out of force) for a line that starts with head (its first bytes), else None."""
    line = head.split(b"\n", 1)[0].decode("ascii", "replace")
    target = layout.entry_lifts(line)
    return None if target is None else (line[2:10], target)


def out_of_force(buf: bytes) -> dict[str, str]:
    """The ids a file's bytes take out of force, each with the id of the first line that did."""
    out: dict[str, str] = {}
    for _, ident, target in found(buf, len(buf)):
        out.setdefault(target, ident)
    return out
