"""store/latches/lifts.py: the lines that take an entry out of force, found in a file's bytes by where their marks
stand, whatever the text around them says; what is out of force is a property of the set of lines."""

from __future__ import annotations

import itertools

from rehydrate.store import layout
from rehydrate.store.latches import lifts

DAY = "2026-12-02"
SUPERSEDING = layout.entry_line("D", "D-00000c", DAY, "Use postgres", "joins", None, None, "D-00000a")
REJECTING = layout.entry_line("R", "R-00000d", DAY, "Use sqlite", "no joins", "*.db", None, "D-00000a")
WITHDRAWAL = layout.entry_line("W", "W-00000e", DAY, "R-00000b", "recorded by mistake", None)
LINES = [
    layout.INVARIANTS_HEADER.rstrip("\n"),
    layout.entry_line("D", "D-00000a", DAY, "Use sqlite", "one file", None),
    layout.entry_line("R", "R-00000b", DAY, "Use redis", "ops", "*redis*"),
    SUPERSEDING,
    # text that reads like a mark, in the wrong place: none of these takes anything out of force
    layout.entry_line("D", "D-00000f", DAY, "x, superseding R-00000b: y", "withdrawn: R-00000b", None),
    "- W-00000g 2026-12-02 withdrawn: R-00000b because: not hex, not a line rehydrate writes",
    "  - W-000001 2026-12-02 withdrawn: R-00000b because: indented",
    "- W-000002 2026-12-02 withdrawn: W-00000e because: a withdrawal is not an entry",
    "- W-000003 20261202xx withdrawn: R-00000b because: no date",
    "- D-000004 2026-12-02 decision, superseding R-00000b because: no colon after the id",
    "- D-000005 2026-12-02 decision, superseding D-000005: itself because: an entry cannot take itself out",
    WITHDRAWAL,
    REJECTING,
]


def test_each_line_is_read_by_its_marks_fixed_place() -> None:
    assert layout.entry_lifts(SUPERSEDING) == "D-00000a"
    assert layout.entry_lifts(REJECTING) == "D-00000a"
    assert layout.entry_lifts(WITHDRAWAL) == "R-00000b"
    assert layout.entry_id(WITHDRAWAL) == "W-00000e"
    assert SUPERSEDING.startswith("- D-00000c 2026-12-02 decision, superseding D-00000a: Use postgres because: joins")
    assert WITHDRAWAL == "- W-00000e 2026-12-02 withdrawn: R-00000b because: recorded by mistake"
    assert layout.entry_guard(REJECTING) == ("*.db", None)  # a superseding rejected approach keeps its watch
    for line in LINES[4:11]:
        assert layout.entry_lifts(line) is None, line


def test_found_in_the_bytes_in_file_order_with_offsets() -> None:
    data = ("\n".join(LINES) + "\n").encode()
    found = lifts.found(data, len(data))
    assert [(ident, target) for _, ident, target in found] == [
        ("D-00000c", "D-00000a"),
        ("W-00000e", "R-00000b"),
        ("R-00000d", "D-00000a"),
    ]
    for at, ident, _ in found:
        assert data[at : at + 10] == f"- {ident}".encode() and data[at - 1 : at] == b"\n"
    # the first wins for what took an entry out; a file without a newline at its end is read to its end
    assert lifts.out_of_force(data.rstrip(b"\n")) == {"D-00000a": "D-00000c", "R-00000b": "W-00000e"}
    assert lifts.found(WITHDRAWAL.encode(), len(WITHDRAWAL)) == [(0, "W-00000e", "R-00000b")]
    assert lifts.found(data, data.index(SUPERSEDING.encode())) == []  # only whole lines before end


def test_what_is_out_of_force_does_not_depend_on_the_order_of_the_lines() -> None:
    entries = [*LINES[1:3], SUPERSEDING, WITHDRAWAL, REJECTING]
    seen = set()
    for order in itertools.permutations(entries):
        data = ("\n".join(order) + "\n").encode()
        seen.add(frozenset(lifts.out_of_force(data)))
    assert seen == {frozenset({"D-00000a", "R-00000b"})}
