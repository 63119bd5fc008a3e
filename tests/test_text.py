"""rehydrate.text: cleaning drops exactly the control and invisible characters (checked against the Unicode
database, which it does not load); a quotation made of any text ends where the text ends and reads back as the
cleaned text; a cut line never leaves a quotation open."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rehydrate.text import clean, cut_line, named, no_escapes, quoted, terminal_safe

_JSON = json.JSONDecoder()


def split(line: str) -> tuple[str, list[str]]:
    """(the line's own words, its quotations decoded): each `"` outside a quotation opens one, read as a JSON string
    up to its end; a quotation that does not end on the line fails the test."""
    own, found, at = [], [], 0
    while True:
        start = line.find('"', at)
        if start < 0:
            own.append(line[at:])
            return "".join(own), found
        own.append(line[at:start])
        text, at = _JSON.raw_decode(line, start)  # raises on a quotation left open
        assert isinstance(text, str)
        found.append(text)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(alphabet='ab "\\\n\x1b\u2028:', max_size=40))
def test_any_text_quoted_is_one_quotation_that_reads_back_as_the_cleaned_text(text: str, more: str) -> None:
    for s in (text, more):
        line = f"before {quoted(s)} after"
        own, found = split(line)
        assert own == "before  after" and found == [clean(s, one_line=True)]
        name = named(s)
        assert name == s or name == quoted(s, 120)
        assert split(f"x {name} y")[0] == ("x  y" if name != s else f"x {s} y")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet='ab "\\:', max_size=30), min_size=1, max_size=4), st.integers(2, 120))
def test_a_cut_line_never_leaves_a_quotation_open(parts: list[str], most: int) -> None:
    line = "; ".join(f"w{i} {quoted(p)}" for i, p in enumerate(parts)) + " (git log)"
    cut = cut_line(line, most)
    assert len(cut) <= most
    own, _ = split(cut)  # parses: every quotation closed
    assert '"' not in own


def _clean_by_category(text: str, one_line: bool) -> str:
    """text.clean as it was written first: every character looked up in the Unicode database."""
    import unicodedata

    text = text.encode("utf-8", "replace").decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    if one_line:
        text = " ".join(text.split())
    kept = "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in {"Cc", "Cf", "Cs", "Co", "Cn"})
    return "\n".join(line.rstrip() for line in kept.split("\n")).strip("\n")


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(st.text(alphabet=st.characters(max_codepoint=0x7F)), st.text()),
    st.booleans(),
)
def test_clean_of_ascii_text_needs_no_unicode_database_and_says_the_same(text: str, one_line: bool) -> None:
    """ASCII text is cleaned without the Unicode database (a start-up cost on the hook path): with the same result
    as looking up every character, for ASCII text and any other."""
    assert clean(text, one_line=one_line) == _clean_by_category(text, one_line)


def test_every_code_point_is_kept_or_dropped_as_its_unicode_category_says() -> None:
    """clean decides without the Unicode database (str.isprintable and a list of separators): for every code point
    of this Python's Unicode version, the same as unicodedata.category would."""
    import unicodedata

    invisible = {"Cc", "Cf", "Cs", "Co", "Cn"}
    wrong = []
    for code in range(0x110000):
        ch = chr(code)
        if 0xD800 <= code <= 0xDFFF or ch == "\r":
            continue  # clean turns a lone surrogate into "?" and a carriage return into a newline first
        expected = "" if unicodedata.category(ch) in invisible and ch not in "\n\t" else ch
        if clean("a" + ch + "b") != "a" + expected + "b":
            wrong.append(hex(code))
    assert not wrong, wrong[:20]


def test_cleaning_does_not_load_the_unicode_database() -> None:
    import subprocess
    import sys

    probe = "import sys; from rehydrate.text import clean; clean('a\\x1bb\\tc · d\\u200b\\r\\n')\n"
    probe += "print('unicodedata' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "False\n"


ESCAPE_PARTS = ["\x1b", "\x9b", "[", "]", "\\", "\x07", "0", ";", "?", " ", "/", "2J", "m", "@", "~", "_", "a", "é"]
ESCAPES = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?"  # CSI, OSC, ESC X


@given(st.lists(st.sampled_from(ESCAPE_PARTS), max_size=30).map("".join))
@settings(max_examples=400, deadline=None)
def test_escapes_are_taken_out_as_the_regular_expression_takes_them_out(text: str) -> None:
    """The capture, recency's quotes and the loss audit take terminal escapes out whole with str methods (the hook
    path loads no re): what the regular expression the capture used takes out, and nothing else."""
    assert no_escapes(text) == re.sub(ESCAPES, "", text)


# what never reaches a terminal (the CLI's output passes through terminal_safe)
CONTROLS = ["\x1b", "\x07", "\r", "\x00", "\x08", "\x7f", "\x9b", "\u202e", "\u2066", "\u200f", "\u2028"]


@pytest.mark.parametrize("ch", CONTROLS)
def test_terminal_safe_removes_each_control(ch: str) -> None:
    assert terminal_safe(f"a{ch}b") == "ab"


def test_terminal_safe_keeps_text_tabs_newlines_and_non_latin() -> None:
    text = "Ship the parser\tnow\nпарсер 解析器 مُحلل 🙂"
    assert terminal_safe(text) == text
