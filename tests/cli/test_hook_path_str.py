"""The hook path's regexes, done with str methods (so that `re`, and `enum` with it, is not loaded before the answer):
each gives what the regex it replaced gives, on any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rehydrate.brief import fence, plan
from rehydrate.store import layout
from rehydrate.store.latches import index

HEADER = sorted(plan._HEADER_LINES)
# the regexes as they were (store/latches/index.py, brief/plan.py, store/views.py, brief/fence.py)
REJECTED = re.compile(rb"\n- (R-[0-9a-f]{6}) ")  # store/latches/index.py's scan
DATE_WORD = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} (?:rejected|decision): ")
ID = r"^- ([DR]-[0-9a-f]{6}) "

piece = st.sampled_from(
    ["- R-", "- D-", "- ", "R-", "0a1b2c", "abcdeF", "12345", "9", " ", "\t", "\r", "\n", "#", "x", "é", "\u2028",
     "\x0b", "\x85", "2026-01-31", " rejected: ", " decision: ", "٣", "-", *HEADER]
)  # fmt: skip
texts = st.lists(piece, max_size=14).map("".join)


@pytest.mark.slow  # version-independent and long: on the main Python only (.ci/run)
@settings(max_examples=3000, deadline=None)
@given(texts, st.integers(min_value=0, max_value=60))
@example("- R-0a1b2c x\n- R-0a1b2c\n- R-0A1b2c y\n- R-0a1b2c z", 0)
@example("x\n- R-0a1b2c ", 13)
@example("x\n- R-0a1b2c ", 12)
def test_rejected_lines_are_the_regex_s(raw: str, cut: int) -> None:
    buf = raw.encode()
    end = min(cut, len(buf))
    first = REJECTED.match(b"\n" + buf[:11]) if buf.startswith(b"- R-") else None
    starts = ([0] if first else []) + [m.start() + 1 for m in REJECTED.finditer(buf, 0, end)]
    assert index.rejected_starts(buf, end) == starts


@pytest.mark.slow  # version-independent and long: on the main Python only (.ci/run)
@settings(max_examples=3000, deadline=None)
@given(texts)
@example("2026-01-31 rejected: x")
@example("2026-01-31 decision: ")
@example("2026-0٣-31 decision: ")
def test_date_word_is_the_regex_s(rest: str) -> None:
    m = DATE_WORD.match(rest)
    assert plan._date_word(rest) == (m.end() if m else 0)


@pytest.mark.slow  # version-independent and long: on the main Python only (.ci/run)
@settings(max_examples=3000, deadline=None)
@given(texts)
@example("- R-0a1b2c x")
@example("- D-abcdef ")
@example("- D-abcdeF x")
@example("- D-0a1b2cx")
@example("- D-0a1b2")
def test_entry_id_is_the_regex_s(line: str) -> None:
    m = re.match(ID, line)
    assert layout.entry_id(line) == (m.group(1) if m else None)


@settings(max_examples=2000, deadline=None)
@given(
    st.text(st.sampled_from("0a1b2cABCF9 x\u0130\u0131\u017f\u212a"), max_size=20),
    st.sampled_from(["0a1b2c", "a1", "t0k3n0f8r13f", "s1"]),
)
@example("x0A1B2Cy", "0a1b2c")
@example("\u017f1", "s1")  # IGNORECASE takes the long s for an s, lower() does not: only a hex token goes by lower()
def test_untoken_is_the_regex_s(text: str, token: str) -> None:
    assert fence.untoken(text, token) == re.sub(re.escape(token), fence._TOKEN_GONE, text, flags=re.IGNORECASE)
