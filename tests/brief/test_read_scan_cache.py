"""The brief's scan of 10_invariants.md, summarized in the clone's cache: a resume on an unchanged
10 reads only what it shows (the rejected approaches it could name, the end of the file), an append extends the
summary, and a summary that is stale or does not hold (forged, garbage) never shows a wrong line or drops a rejected
approach: it is checked against the file where it points, and dropped for a whole scan when it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.brief.test_brief_budget import TOKEN, assert_every_rejected_id_named_or_covered
from tests.brief.test_read import ReadsByFile

from conftest import record_lines
from rehydrate import brief
from rehydrate.brief import read
from rehydrate.store import layout
from rehydrate.store.latches import binding, index, summary
from rehydrate.store.local import seen
from rehydrate.store.state import State

KEEP, ROOM = brief.DEFAULT_BUDGET // 12, 4 * brief.DEFAULT_BUDGET


@pytest.fixture(autouse=True)
def _pinned_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brief, "new_token", lambda: TOKEN, raising=False)


def _line(kind: str, i: int, long: int = 0) -> str:
    text = f"retry {i} the old way" + " and more" * long
    return layout.entry_line(kind, f"{kind}-{i:06x}", "2026-11-30", text, "slow", None)


def _shown(inv: index.Invariants, keep: int) -> tuple[object, ...]:
    """What a brief can show of a scan: counts, the first and the newest keep + 1 rejected approaches, the end, and
    what is out of force."""
    k = min(len(inv.ids), keep + 1)
    first = (inv.ids[:1], inv.lines[:1], inv.offsets[:1])
    newest = (inv.ids[len(inv.ids) - k :], inv.lines[len(inv.ids) - k :], inv.offsets[len(inv.ids) - k :])
    return len(inv.ids), inv.dashes, first, newest, inv.heads, inv.tail, inv.tail_start, inv.size, inv.out


PIECES = [
    "- D", "- R", "- R", "- Rlong", "", "# a heading", "- R-abcdef rejected", "- R-ABCDEF not one", "plain text",
    "\r", "- R-12345 short", "- W", "- Dsup",
]  # fmt: skip


def _file(pieces: list[str], end: bool) -> bytes:
    out = [layout.INVARIANTS_HEADER.rstrip("\n")]
    for i, p in enumerate(pieces):
        if p in ("- D", "- R"):
            out.append(_line(p[2], i))
        elif p == "- Rlong":
            out.append(_line("R", i, long=700))  # longer than index.HEAD
        elif p == "- W":  # withdraws the line before, if it is a rejected approach
            out.append(layout.entry_line("W", f"W-{i:06x}", "2026-11-30", f"R-{i - 1:06x}", "a mistake", None))
        elif p == "- Dsup":  # supersedes the rejected approach two lines before, if there is one
            out.append(layout.entry_line("D", f"D-{i:06x}", "2026-11-30", "anew", "why", None, None, f"R-{i - 2:06x}"))
        else:
            out.append(p)
    return ("\n".join(out) + ("\n" if end else "")).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=60), st.booleans(), st.sampled_from([1, 3, 750]))
def test_the_summary_shows_what_the_whole_scan_shows(pieces: list[str], end: bool, keep: int) -> None:
    data = _file(pieces, end)
    lines = binding.lines_of(data)
    full = index.scan_invariants(index.Source(data), keep, 4 * 64)
    text = summary.summary(full, lines.text(), keep)
    assert text is not None
    got = summary.from_summary(index.Source(data), text, lines.text(), lines.n, keep, 4 * 64)
    assert got is not None and _shown(got, keep) == _shown(full, keep)
    assert len(got.ids) == len(full.ids) and len(got.lines) == len(full.lines)
    # extended line by line from the header's summary: the same as the summary of a whole scan
    parts = data.split(b"\n")
    parts = parts[:-1] if end else parts
    head = b"\n".join(parts[:2]) + b"\n"
    now = binding.lines_of(head)
    ext = summary.summary(index.scan_invariants(index.Source(head), keep, 64), now.text(), keep)
    for part in parts[2:]:
        after = now.add(part)
        ext = summary.extend_summary(ext or "", now.text(), after.text(), part) if ext else None
        now = after
    if end and ext is not None:  # (an unterminated last line is not what an append writes)
        got = summary.from_summary(index.Source(data), ext, lines.text(), lines.n, keep, 4 * 64)
        assert got is not None and _shown(got, keep) == _shown(full, keep)


def _big(state: State, n: int, every: int) -> None:
    record_lines(state, [_line("R" if i % every == every - 1 else "D", i) for i in range(n)])


def _summary(state: State) -> str:
    cache = seen.Seen.load(state.seen_path)
    assert cache is not None
    return cache.scan


def _brief(state: State) -> str:
    """The brief as resume renders it, without the record resume appends (the same text every time)."""
    st = State.open(state.root)
    with st.reading() as snap:
        sizes: dict[str, int] = {}
        parts: dict[str, object] = {}
        shown = read.read_views(st, snap, brief.DEFAULT_BUDGET, sizes, parts)
        inp = brief._input(st, shown, [], "recovered", snap.last, None, sizes, parts)
        return brief.render(inp).text


class _Scans:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = index.scan_invariants

        def counted(src: index.Source, keep: int, room: int) -> index.Invariants:
            self.calls += src.size > ROOM  # the whole file (from_summary scans nothing this big)
            return real(src, keep, room)

        monkeypatch.setattr(index, "scan_invariants", counted)


@pytest.mark.parametrize("every", [40, 2])
def test_a_resume_on_an_unchanged_10_reads_only_what_it_shows(
    state: State, monkeypatch: pytest.MonkeyPatch, every: int
) -> None:
    """The first resume scans 10 whole and keeps its summary; the next reads the rejected approaches a brief could
    name and the end of the file (not its 1.4 MB), and briefs the same."""
    _big(state, 20_000, every)
    size = os.path.getsize(state.path(layout.INVARIANTS))
    assert size > 1_000_000
    brief.resume(State.open(state.root))  # scans, keeps the summary
    assert _summary(state).startswith("lines-sha256:")
    scans = _Scans(monkeypatch)
    with monkeypatch.context() as m:
        reads = ReadsByFile(m)
        cached = _brief(state)
    assert scans.calls == 0
    read_bytes = reads.by_name.get(layout.INVARIANTS, 0)
    assert read_bytes <= 16 * ROOM + (KEEP + 2) * summary.PEEK * 2, (read_bytes, size)
    monkeypatch.setattr(summary, "from_summary", lambda *a: None)  # the whole scan, for comparison
    assert _brief(state) == cached
    assert scans.calls == 1
    assert_every_rejected_id_named_or_covered(Path(state.path(layout.INVARIANTS)).read_text(), cached)


def test_an_append_extends_the_summary_and_a_change_by_hand_is_scanned(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    _big(state, 3_000, 3)
    brief.resume(State.open(state.root))
    before = _summary(state)
    State.open(state.root).reject("the newest way", because="it failed")
    State.open(state.root).invariant("a newer decision", because="it holds")
    after = _summary(state)
    assert (
        after != before
        and after.split(" ")[0] == binding.lines_of(Path(state.path(layout.INVARIANTS)).read_bytes()).text()
    )
    State.open(state.root).checkpoint("rejected one more", "brief again")  # 10 not written: the summary kept
    assert _summary(state) == after
    scans = _Scans(monkeypatch)
    text = _brief(state)
    newest = [ln for ln in Path(state.path(layout.INVARIANTS)).read_text().split("\n") if ln.startswith("- R-")][-1]
    assert scans.calls == 0 and "the newest way" in newest and newest[2:10] in text
    with monkeypatch.context() as m:
        m.setattr(summary, "from_summary", lambda *a: None)
        assert _brief(state) == text
    scans.calls = 0
    # a change by hand: the binding no longer matches, the file is scanned whole and the brief shows the change
    with open(state.path(layout.INVARIANTS), "a") as f:
        f.write(_line("R", 999_999) + "\n")
    text = _brief(state)
    assert scans.calls == 1 and "R-0f423f" in text
    assert_every_rejected_id_named_or_covered(Path(state.path(layout.INVARIANTS)).read_text(), text)


def _forgeries(real: str, data: bytes) -> dict[str, str]:
    """Summaries that do not hold for this file, each in a way the checks must catch."""
    b, dashes, n, first, newest, lifted = real.split(" ")
    pairs = newest.split(",")
    o, ln = (int(x) for x in pairs[-1].split("."))
    before = sum(int(p.split(".")[0]) for p in pairs[:-1])  # the offset of the newest but one
    second = data.find(b"\n- R-", int(first.split(".")[0])) + 1  # the second rejected approach
    decision = data.rfind(b"\n- D-") + 1  # the last decision: after the newest rejected approach
    second_line = data.count(b"\n", 0, second) + 1
    return {
        "stale binding": " ".join([b[:-4] + "0000", dashes, n, first, newest, lifted]),
        "garbage": "lines-sha256 x y z",
        "points at a decision": _newest(real, f"{decision - before}.{ln}"),
        "mid-line": _newest(real, f"{o + 5}.{ln}"),
        "newest left out": " ".join([b, dashes, str(int(n) - 1), first, ",".join(pairs[:-1]), lifted]),
        "line number off": _newest(real, f"{o}.{ln + 1}"),
        "first is the second": " ".join([b, dashes, n, f"{second}.{second_line}", newest, lifted]),
        "too many": " ".join([b, dashes, str(int(n) + 5000), first, newest, lifted]),
        # a rejected approach (the newest) or a decision named as a line that takes an entry out of force
        "a lift that is none": " ".join([b, dashes, n, first, newest, f"o:{before + o}"]),
        "a lift at a decision": " ".join([b, dashes, n, first, newest, f"o:{decision}"]),
        "no lifts part": " ".join([b, dashes, n, first, newest]),
        "an older one mid-line": _oldest(real, 5, 0),
        "an older one a line off": _oldest(real, 0, 1),
    }


def _oldest(real: str, by: int, lines: int) -> str:
    """The summary with the oldest of its newest rejected approaches moved by `by` bytes and `lines` lines (the
    others left where they are)."""
    b, dashes, n, first, newest, lifted = real.split(" ")
    pairs = [[int(x) for x in p.split(".")] for p in newest.split(",")]
    pairs[0] = [pairs[0][0] + by, pairs[0][1] + lines]
    pairs[1] = [pairs[1][0] - by, pairs[1][1] - lines]
    return " ".join([b, dashes, n, first, ",".join(f"{o}.{ln}" for o, ln in pairs), lifted])


def _newest(real: str, pair: str) -> str:
    """The summary with its newest rejected approach's "offset delta.line delta" replaced."""
    b, dashes, n, first, newest, lifted = real.split(" ")
    return " ".join([b, dashes, n, first, ",".join([*newest.split(",")[:-1], pair]), lifted])


@pytest.mark.parametrize(
    "kind",
    ["stale binding", "garbage", "points at a decision", "mid-line", "newest left out", "line number off",
     "first is the second", "too many", "an older one mid-line", "an older one a line off", "a lift that is none",
     "a lift at a decision", "no lifts part"],
)  # fmt: skip
@pytest.mark.parametrize("every", [40, 7, 3])  # 75 or 430 rejected approaches (all named), 1,001 (more than named)
def test_a_forged_or_stale_summary_shows_nothing_wrong(
    state: State, monkeypatch: pytest.MonkeyPatch, kind: str, every: int
) -> None:
    _big(state, 3_000, every)
    brief.resume(State.open(state.root))
    honest = _brief(state)
    data = Path(state.path(layout.INVARIANTS)).read_bytes()
    forged = _forgeries(_summary(state), data)[kind]
    real_load = seen.Seen.load

    def load(path: str) -> seen.Seen | None:
        cache = real_load(path)
        if cache is not None:
            cache.scan = forged
        return cache

    monkeypatch.setattr(seen.Seen, "load", staticmethod(load))
    scans = _Scans(monkeypatch)
    assert _brief(state) == honest
    assert scans.calls == 1, "the forged summary was used"


def _mutate(text: str, which: int, by: int) -> str:
    """The summary with its which-th number (counting every number in it) moved by `by`."""
    out, seen_numbers, digits = [], 0, ""
    for ch in text + " ":
        if ch.isdigit():
            digits += ch
            continue
        if digits:
            out.append(str(max(0, int(digits) + by)) if seen_numbers == which else digits)
            seen_numbers += 1
            digits = ""
        out.append(ch)
    return "".join(out)[:-1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=40), st.sampled_from([1, 3]), st.integers(0, 400),
    st.sampled_from([-7, -2, -1, 1, 2, 5, 120]),
)  # fmt: skip
def test_a_summary_moved_anywhere_never_shows_a_line_that_is_not_a_rejected_approach(
    pieces: list[str], keep: int, which: int, by: int
) -> None:
    """Any number of a summary moved (after its binding's hex digits: those make it stale): it is dropped, or every
    rejected approach it has read is one, its id and start as in the file, the newest keep all there. (Line numbers
    are checked where the lines between are read: see the forgeries above; elsewhere they are the summary's.)"""
    data = _file(pieces, True)
    lines = binding.lines_of(data)
    full = index.scan_invariants(index.Source(data), keep, 256)
    text = summary.summary(full, lines.text(), keep) or ""
    b, _, rest = text.partition(" ")
    forged = b + " " + _mutate(rest, which % max(1, sum(c.isdigit() for c in rest)), by)
    got = summary.from_summary(index.Source(data), forged, lines.text(), lines.n, keep, 256)
    if got is None:
        return
    for i, (ident, at) in enumerate(zip(got.ids, got.offsets, strict=True)):
        if ident:  # (the placeholders of those named by the id range only are empty)
            assert data[at : at + 11] == b"- " + ident + b" " and (at == 0 or data[at - 1] == 10), (i, forged)
    assert got.ids[-keep:] == full.ids[-keep:] and got.heads == full.heads, forged
    newest = got.lines[-keep - 1 :]
    assert got.tail == full.tail and newest == sorted(set(newest)), forged


@pytest.mark.parametrize("scan", [7, ["x"], "x" * (41 << 10)])
def test_a_cache_whose_summary_is_not_a_short_text_reads_as_absent(state: State, scan: object) -> None:
    brief.resume(State.open(state.root))
    cache = seen.Seen.load(state.seen_path)
    assert cache is not None and cache.scan
    cache.scan = scan  # type: ignore[assignment]
    if isinstance(scan, str):
        cache.save(state.seen_path, cache.dirs)  # (written as the cache writes itself: its checksum holds)
    else:
        from rehydrate.store.wal import record as wal

        body = cache.dump()[17:]
        Path(state.seen_path).write_bytes(wal.sha256(body).encode()[:16] + b" " + body)
    assert seen.Seen.load(state.seen_path) is None
    assert "R-" in brief.resume(State.open(state.root)).text  # briefed all the same (the log's chain checked)
