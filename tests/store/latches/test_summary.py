"""store/latches/summary.py: a scan's summary, checked against the bytes, stands in for the scan only over the bytes
it was made for; a line that takes an entry out of force is named in it and read back. (The cache of summaries
across commands: tests/brief/test_read_scan_cache.py.)"""

from __future__ import annotations

from tests.store.latches.test_index import DATA

from rehydrate.store.latches import binding, index, summary


def test_a_summary_stands_in_for_the_pass_only_over_the_bytes_it_was_made_for() -> None:
    inv = index.scan_invariants(index.Source(DATA), keep=2, tail_room=1 << 10)
    bound = binding.lines_of(DATA)
    text = summary.summary(inv, bound.text(), 2)
    assert text is not None and text.startswith(f"{bound.text()} 5 2 ")
    got = summary.from_summary(index.Source(DATA), text, bound.text(), bound.n, 2, 1 << 10)
    assert got is not None and (got.ids, got.lines, got.offsets) == (inv.ids, inv.lines, inv.offsets)
    other = DATA.replace(b"R-00000b", b"D-00000b")
    assert summary.from_summary(index.Source(other), text, bound.text(), bound.n, 2, 1 << 10) is None
    assert summary.from_summary(index.Source(DATA), text, "another binding", bound.n, 2, 1 << 10) is None
