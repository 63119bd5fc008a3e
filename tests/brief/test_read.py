"""The brief reads only what it can show, whatever the size of the views: 10_invariants.md and
20_handoff.md past the 4 MiB that reconciliation reads are briefed (the newest decisions, every rejected approach's
id, the handoff's start and end), and the bytes the brief reads are counted: the scan of 10 for its rejected
approaches, its end, and the handoff's start and end, not the handoff.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.brief.test_brief_budget import TOKEN, assert_every_rejected_id_named_or_covered, parse

from conftest import git_repo, record_lines
from rehydrate import brief
from rehydrate.store import layout
from rehydrate.store.state import State

MIB = 1 << 20


@pytest.fixture(autouse=True)
def _pinned_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brief, "new_token", lambda: TOKEN, raising=False)


def grow(state: State, decisions: int, rejected_every: int, handoff: int, recorded: bool = False) -> tuple[str, str]:
    """Lines appended to 10 (a rejected approach every rejected_every lines; by hand, or with their records) and a
    handoff written by hand of about `handoff` bytes, starting and ending with a marker; returns the newest
    decision's and rejected's ids."""
    lines = []
    for i in range(decisions):
        if i % rejected_every == rejected_every - 1:
            lines.append(layout.entry_line("R", f"R-{i:06x}", "2026-11-30", f"retry {i} the old way", "slow", None))
        else:
            text = f"decision {i}: keep the cache keyed by path and mtime"
            lines.append(layout.entry_line("D", f"D-{i:06x}", "2026-11-30", text, "a rebuild is slow", None))
    if recorded:
        record_lines(state, lines)
    else:
        with open(state.path(layout.INVARIANTS), "a") as f:
            f.write("\n".join(lines) + "\n")
    step = "- step {:07d}: measured the cache, kept the keys by path, wrote down what to check next\n"
    body = "".join(step.format(i) for i in range(handoff // len(step.format(0))))
    Path(state.path(layout.HANDOFF)).write_text("HANDOFF START\n" + body + "HANDOFF END\n")
    newest_d = next(ln for ln in reversed(lines) if ln.startswith("- D-"))
    newest_r = next(ln for ln in reversed(lines) if ln.startswith("- R-"))
    return newest_d[2:10], newest_r[2:10]


@pytest.fixture
def short_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[State]:
    """The `state` fixture's state in a folder with a short path: the brief's header names the state folder, and at
    6,000 bytes the tens of bytes of a deep temporary folder (pytest's basetemp differs between runs and machines)
    decide whether the handoff's quotes still fit. The test is about the views, not the header."""
    with tempfile.TemporaryDirectory(prefix="rh-") as top:
        root = git_repo(Path(top) / "repo")
        monkeypatch.chdir(root)
        st, _ = State.init(root / "state", "Ship the parser", "all tests pass")
        st.invariant("Write the WAL before any view", because="a crash between the two must be redoable")
        st.reject("Edit db/schema.sql directly", because="every schema change needs a migration", guard="db/schema.sql")
        st.checkpoint(done="wrote the lexer", next="write the parser")
        yield st


@pytest.mark.slow  # version-independent and long: on the main Python only (.ci/run)
def test_views_past_4_mib_are_briefed(short_state: State) -> None:
    state = short_state
    newest_d, newest_r = grow(state, 200_000, 5_000, 5_000_000, recorded=True)
    inv, ho = Path(state.path(layout.INVARIANTS)), Path(state.path(layout.HANDOFF))
    assert inv.stat().st_size > 4 * layout.MAX_VIEW and ho.stat().st_size > layout.MAX_VIEW
    for max_bytes in (None, 6000):
        r = brief.resume(State.open(state.root), max_bytes=max_bytes)
        assert len(r.text) <= brief.DEFAULT_BUDGET and (max_bytes is None or len(r.text.encode()) <= max_bytes)
        b = parse(r.text)
        quotes = b["quotes"]
        if max_bytes is None:  # (in 6,000 bytes, the 40 rejected approaches whole outrank the decisions)
            decisions = quotes["state/10_invariants.md, decisions"][0]  # type: ignore[index]
            assert decisions[-1].startswith(f"- {newest_d} ")  # the newest decisions, from the end of the file
        assert quotes["state/20_handoff.md, start"][0][0] == "HANDOFF START"  # type: ignore[index]
        assert quotes["state/20_handoff.md, end"][0][-1] == "HANDOFF END"  # type: ignore[index]
        assert newest_r in r.text
        assert_every_rejected_id_named_or_covered(inv.read_text(), r.text)
        left = str(b["left"])
        if max_bytes is None:  # sizes named
            assert f"older decision(s) in state/10_invariants.md ({inv.stat().st_size:,} bytes in all)" in left
            assert f"the middle of state/20_handoff.md ({ho.stat().st_size:,} bytes in all)" in left
        assert "confidence: " in r.text and "next safe action: " in r.text


class ReadsByFile:
    """Bytes read through os.read and os.pread, by the file's name (the descriptor's path when it was opened)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.by_name: dict[str, int] = {}
        names: dict[int, str] = {}
        real_open, real_read, real_pread = os.open, os.read, os.pread

        def opener(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
            fd = real_open(path, flags, mode, dir_fd=dir_fd)
            names[fd] = os.path.basename(path)
            return fd

        def count(fd: int, data: bytes) -> bytes:
            name = names.get(fd, "?")
            self.by_name[name] = self.by_name.get(name, 0) + len(data)
            return data

        monkeypatch.setattr(os, "open", opener)
        monkeypatch.setattr(os, "read", lambda fd, n: count(fd, real_read(fd, n)))
        monkeypatch.setattr(os, "pread", lambda fd, n, off: count(fd, real_pread(fd, n, off)))


@pytest.mark.parametrize("handoff", [3 * MIB, 5_000_000])
def test_the_brief_reads_what_it_can_show_and_the_scan_for_rejected_approaches(
    state: State, monkeypatch: pytest.MonkeyPatch, handoff: int
) -> None:
    """The brief's own reads (no reconciliation: as `reduced` reads, and as resume reads a view reconciliation did
    not keep): of a 20 MB 10, one scan and its end; of the handoff, its start and end. The old code read views of
    up to 4 MiB whole (3 MiB of handoff here) and showed nothing of larger ones."""
    grow(state, 200_000, 5_000, handoff)
    inv_size = os.path.getsize(state.path(layout.INVARIANTS))
    assert inv_size > 19_000_000
    budget = brief.DEFAULT_BUDGET
    st = State.open(state.root)
    with monkeypatch.context() as m:
        reads = ReadsByFile(m)
        text = brief.reduced(st.root, st.actor, "the state could not be opened", budget)
    assert "HANDOFF START" in text and "HANDOFF END" in text and "decision 199998" in text
    room = 4 * budget  # a character is at most 4 bytes: what a brief of this budget could show of one text
    assert reads.by_name.get(layout.HANDOFF, 0) <= 2 * room, reads.by_name  # its start and its end
    # the scan of 10 (every byte once) and its end (at most 16 times the room, when rejected approaches fill it)
    assert inv_size <= reads.by_name.get(layout.INVARIANTS, 0) <= inv_size + 16 * room, reads.by_name
