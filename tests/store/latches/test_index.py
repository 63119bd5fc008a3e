"""store/latches/index.py: one bounded pass over 10_invariants.md finds every rejected approach (its id, line and
offset, the start of the newest kept) and the file's end; its summary, checked against the bytes, stands in for the
pass. (The cache of summaries across commands: tests/brief/test_brief_scan_cache.py.)"""

from __future__ import annotations

from pathlib import Path

from rehydrate.store.latches import binding, index

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


def test_a_summary_stands_in_for_the_pass_only_over_the_bytes_it_was_made_for() -> None:
    inv = index.scan_invariants(index.Source(DATA), keep=2, tail_room=1 << 10)
    bound = binding.lines_of(DATA)
    text = index.summary(inv, bound.text(), 2)
    assert text is not None and text.startswith(f"{bound.text()} 5 2 ")
    got = index.from_summary(index.Source(DATA), text, bound.text(), bound.n, 2, 1 << 10)
    assert got is not None and (got.ids, got.lines, got.offsets) == (inv.ids, inv.lines, inv.offsets)
    other = DATA.replace(b"R-00000b", b"D-00000b")
    assert index.from_summary(index.Source(other), text, bound.text(), bound.n, 2, 1 << 10) is None
    assert index.from_summary(index.Source(DATA), text, "another binding", bound.n, 2, 1 << 10) is None
