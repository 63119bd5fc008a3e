"""store/latches/index.py: one bounded pass over 10_invariants.md finds every rejected approach (its id, line and
offset, the start of the newest kept) and the file's end. (Its summary: tests/store/latches/test_summary.py.)"""

from __future__ import annotations

from pathlib import Path

from rehydrate.store.latches import index

LINES = [
    b"# Invariants",
    b"",
    b"- D-000001 2026-11-29 decision: one because: a",
    b"- R-00000a 2026-11-29 rejected: two because: b",
    b"- D-000002 2026-11-29 decision: three because: c",
    b"- R-00000b 2026-11-29 rejected: four because: d",
    b"- R-zzzzzz 2026-11-29 rejected: not an id because: e",
]
DATA = b"\n".join(LINES) + b"\n"


def test_one_pass_finds_every_rejected_approach_with_its_line_and_offset(tmp_path: Path) -> None:
    inv = index.scan_invariants(index.Source(DATA), keep=1, tail_room=1 << 10)
    assert inv.ids == [b"R-00000a", b"R-00000b"]
    assert inv.lines == [4, 6]
    assert inv.offsets == [DATA.index(b"- R-00000a"), DATA.index(b"- R-00000b")]
    assert inv.heads == [(LINES[5], False)]  # the newest one only (keep=1), whole
    assert inv.dashes == 5 and inv.tail == DATA and inv.tail_start == 0
    (tmp_path / "10_invariants.md").write_bytes(DATA)
    src = index.open_view(str(tmp_path / "10_invariants.md"), None, "10_invariants.md")
    assert src is not None
    try:
        on_disk = index.scan_invariants(src, keep=1, tail_room=1 << 10)
    finally:
        src.close()
    assert (on_disk.ids, on_disk.lines, on_disk.offsets) == (inv.ids, inv.lines, inv.offsets)
    assert index.open_view(str(tmp_path / "missing.md"), None, "x") is None


def test_what_is_out_of_force_is_left_out_and_the_newest_in_force_read_again(tmp_path: Path) -> None:
    """The newest rejected approach withdrawn and another superseded: the scan names only those in force, its
    newest kept as if the others had never been written (read again at its offset), and counts no decision for the
    entries out of force nor for the withdrawal."""
    lines = [
        *LINES[:6],
        b"- R-00000c 2026-11-29 rejected: five because: e",
        b"- D-00000d 2026-11-29 decision, superseding R-00000a: six because: f",
        b"- W-00000e 2026-11-29 withdrawn: R-00000c because: a mistake",
        b"- W-00000f 2026-11-29 withdrawn: D-000001 because: a mistake",
    ]
    data = b"\n".join(lines) + b"\n"
    (tmp_path / "10.md").write_bytes(data)
    for keep in (1, 3):
        src = index.open_view(str(tmp_path / "10.md"), None, "x")
        assert src is not None
        try:
            for inv in (index.scan_invariants(index.Source(data), keep, 1 << 10), index.scan_invariants(src, keep, 9)):
                assert inv.ids == [b"R-00000b"] and inv.lines == [6]
                assert inv.heads == [(LINES[5], False)] and inv.head_at == [data.index(LINES[5])]
                assert inv.out == {b"R-00000a", b"R-00000c", b"D-000001"}
                assert [lift[1:] for lift in inv.lifts] == [
                    ("D-00000d", "R-00000a"),
                    ("W-00000e", "R-00000c"),
                    ("W-00000f", "D-000001"),
                ]
                # `- ` lines: 8, less two withdrawals, two rejected approaches and a decision out of force
                assert inv.dashes == 3
        finally:
            src.close()


def test_a_line_that_names_an_entry_not_there_takes_nothing_out(tmp_path: Path) -> None:
    """Withdrawals of ids the file does not hold (by hand, or from another project) count as lines, not as
    decisions, and take nothing out: the counts stay true, and nothing is named out of force."""
    phantom = [f"- W-00010{i} 2026-11-29 withdrawn: D-99999{i} because: not here".encode() for i in range(3)]
    data = b"\n".join([*LINES, b"- W-000110 2026-11-29 withdrawn: R-999990 because: not here", *phantom]) + b"\n"
    (tmp_path / "10.md").write_bytes(data)
    src = index.open_view(str(tmp_path / "10.md"), None, "x")
    assert src is not None
    try:
        for inv in (index.scan_invariants(index.Source(data), 2, 1 << 10), index.scan_invariants(src, 2, 9)):
            assert inv.out == set() and len(inv.lifts) == 4
            assert inv.ids == [b"R-00000a", b"R-00000b"] and inv.dashes == 5  # the entries of LINES, no more
    finally:
        src.close()
    assert index.present(index.Source(data), {b"D-000001", b"D-999990", b"R-00000b"}) == {b"D-000001", b"R-00000b"}
