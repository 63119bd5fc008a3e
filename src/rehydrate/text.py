"""One-line cleaning, cutting and quoting of untrusted text: a leaf every module may import (the standard library
and rehydrate.errors only, nothing heavy: it is on the hook path).

What it guarantees:
- clean() drops every control and invisible character: Unicode's categories Cc (C0 and C1 controls, DEL), Cf
  (format characters: zero-width spaces and joiners, bidirectional marks and overrides, soft hyphen), Cs (a lone
  surrogate, first replaced by "?"), Co (private use) and Cn (unassigned), all but tab and newline; carriage
  returns become newlines, trailing white space of each line and blank lines at both ends go. With one_line, every
  run of white space (newlines and the Unicode line and paragraph separators among it) is one space.
- quoted() makes outside text one inline quotation: cleaned to one line, cut to a length with an ellipsis, between
  double quotes with `"` and `\\` escaped as JSON escapes them. A quotation so made ends where its text ends,
  whatever the text holds, so nothing after it can pass for rehydrate's words; json.loads reads it back to the
  cleaned text. named() leaves a plain name (nothing that could end it or stand after it) as it is.
- shorten() cuts text to a length with an ellipsis; cut_line() cuts a line so without leaving a quotation open.
- no_escapes() takes terminal escape sequences out whole, so that cleaning leaves no "[2J" behind.
- terminal_safe() takes out what could drive a terminal or disguise what it shows (C0 and C1 controls but tab
  and newline, DEL, the bidirectional controls, the line and paragraph separators): the CLI's output passes
  through it.
- cap() refuses a field longer than its limit (the limits themselves are store/layout.py's).
"""

from __future__ import annotations

import sys

from rehydrate.errors import UsageError


def cap(name: str, value: str, limit: int) -> None:
    """UsageError if a field the user gave is longer than its limit (in UTF-8 bytes)."""
    if len(value.encode()) > limit:
        raise UsageError(f"{name} is {len(value.encode()):,} bytes; the limit is {limit:,}")


# clean drops the invisible characters: Unicode's categories Cc, Cf, Cs, Co and Cn but tab and newline. Those are
# exactly what str.isprintable() calls unprintable, less the separators (Zs but the space, Zl, Zp), which it keeps:
# so no lookup in the Unicode database (unicodedata, a start-up cost on the hook path) is needed.
# tests/test_text.py checks every code point against unicodedata.category.
_KEPT = frozenset("\n\t\u00a0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B))))
_ASCII_INVISIBLE = dict.fromkeys((*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F))  # ASCII's Cc but tab and newline


def clean(text: str, *, one_line: bool = False) -> str:
    """Text as stored: no control or invisible characters (tabs and, unless one_line, newlines kept)."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates from undecodable argv bytes
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if one_line:
        text = " ".join(text.split())
    if text.isascii():  # ASCII's only invisible characters are its controls
        kept = text.translate(_ASCII_INVISIBLE)
    else:
        kept = "".join(ch for ch in text if ch.isprintable() or ch in _KEPT)
    lines = [line.rstrip() for line in kept.split("\n")]
    return "\n".join(lines).strip("\n")


# Outside text (a commit subject, a pull request title, a branch or file name from git, a teammate's message, a
# recorded step) shown inline, among words rehydrate computed, goes through quoted() or named(): between double
# quotes, with the quote mark and the backslash escaped as JSON escapes them. A quotation so made ends where its
# text ends, whatever the text holds (a `"` of its own is `\"`), so nothing after it can pass for rehydrate's words;
# json.loads reads it back to the cleaned text. cut_line() cuts a line without leaving a quotation open.
_PLAIN_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/+@:")


def quoted(text: object, most: int | None = None) -> str:
    """Outside text as one inline quotation: cleaned to one line (no control, invisible or line-break characters),
    cut to `most` characters (an ellipsis ending it), then between double quotes with `\\` and `"` escaped."""
    line = clean(str(text)[: 4 * most] if most is not None else str(text), one_line=True)
    if most is not None and len(line) > most:
        line = line[: max(0, most - 1)] + "…"
    return '"' + line.replace("\\", "\\\\").replace('"', '\\"') + '"'


def named(text: object, most: int = 120) -> str:
    """A name from outside (a branch, a path, an actor): as it is when it is plainly a name (ASCII letters, digits
    and `_.-/+@:` only, not starting with `-`: no space, no quote, nothing that could end it or stand after it),
    else quoted()."""
    name = str(text)
    if name and len(name) <= most and not name.startswith("-") and _PLAIN_NAME.issuperset(name):
        return name
    return quoted(name, most)


def shorten(text: str, cap: int | None) -> tuple[str, bool]:
    """text, or its start and an ellipsis within cap characters; and whether it was cut."""
    if cap is None or len(text) <= cap:
        return text, False
    return text[: max(0, cap - 1)].rstrip() + "…", True


def cut_line(line: str, most: int) -> str:
    """A line cut to `most` characters with an ellipsis; when the cut falls inside a quotation (quoted()), the
    ellipsis is its last character and the quotation is closed after it, so that a cut never leaves one open."""
    if len(line) <= most:
        return line
    kept = line[: max(0, most - 1)]
    if not _open_quote(kept):
        return kept.rstrip() + "…"
    kept = line[: max(0, most - 2)]  # room for the closing quote mark
    state = _open_quote(kept)
    if not state:  # the one character given back opened the quotation
        return kept.rstrip() + "…"
    return (kept[:-1] if state == "escape" else kept) + '…"'


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """ "did you mean X? " for the closest of choices to a mistyped word, else "" (difflib is loaded only for a
    mistake: the hook path never pays for it)."""
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]}? " if close else ""


def _open_quote(text: str) -> str:
    """ "" when every quotation in text is closed; "open" when text ends inside one; "escape" when it ends inside
    one on a backslash that escapes the next character."""
    inside = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif inside and ch == "\\":
            escaped = True
        elif ch == '"':
            inside = not inside
    return "escape" if escaped else "open" if inside else ""


def no_escapes(text: str) -> str:
    """text without terminal escape sequences, each taken out whole, so that cleaning leaves no "[2J" behind: a CSI
    (ESC [ or the byte 9B) to its final byte, an OSC (ESC ]) to BEL or ESC \\, any other ESC and the one character
    of ESC's pairs after it. A CSI byte with no final byte after it is left (clean() takes it out). The same as the
    regular expression `(?:\\x1b\\[|\\x9b)[0-?]*[ -/]*[@-~]|\\x1b\\][^\\x07\\x1b]*(?:\\x07|\\x1b\\\\)?|\\x1b[@-_]?`
    (tests/test_text.py), with str methods: the hook path loads no re; the text between escapes is copied whole."""
    if "\x1b" not in text and "\x9b" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    esc, csi = text.find("\x1b"), text.find("\x9b")
    while i < n:
        if 0 <= esc < i:
            esc = text.find("\x1b", i)
        if 0 <= csi < i:
            csi = text.find("\x9b", i)
        at = min((j for j in (esc, csi) if j >= 0), default=n)
        if at > i:
            out.append(text[i:at])
            i = at
            if i == n:
                break
        i = _past_escape(text, i, out)
    return "".join(out)


def _past_escape(text: str, i: int, out: list[str]) -> int:
    """Where the escape sequence that starts at text[i] (ESC or CSI) ends; a lone CSI byte is kept in out."""
    n, c = len(text), text[i]
    if c == "\x9b" or text.startswith("\x1b[", i):  # CSI: parameters, intermediates, a final byte
        j = i + (1 if c == "\x9b" else 2)
        while j < n and "0" <= text[j] <= "?":
            j += 1
        while j < n and " " <= text[j] <= "/":
            j += 1
        if j < n and "@" <= text[j] <= "~":
            return j + 1
        if c == "\x1b":  # no final byte: ESC and "[" only, as any other ESC pair
            return i + 2
        out.append(c)  # a lone CSI byte: left to clean()
        return i + 1
    if text.startswith("\x1b]", i):  # OSC: to BEL or ST
        end = min((j for j in (text.find("\x07", i), text.find("\x1b", i + 2)) if j >= 0), default=n)
        return end + (1 if text.startswith("\x07", end) else 2 if text.startswith("\x1b\\", end) else 0)
    return i + 2 if i + 1 < n and "@" <= text[i + 1] <= "_" else i + 1


# What never reaches a terminal from a file's content: C0 controls but tab and newline (escape sequences, NUL, CR,
# backspace), DEL, C1 controls, and the bidirectional and line-separator controls that reorder or hide text.
_UNSAFE = {
    c: None
    for c in (
        *range(0x00, 0x09),
        *range(0x0B, 0x20),
        *range(0x7F, 0xA0),
        0x061C,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0x2028,
        0x2029,
    )
}


def escaping_streams() -> None:
    """stdout and stderr write what they cannot encode as backslash escapes: undecodable bytes in paths or text
    never crash a command's output (the command line's, and a hook call's without it: rehydrate.__main__)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def terminal_safe(text: str) -> str:
    """text without the characters that could drive a terminal or disguise what it shows."""
    return text.translate(_UNSAFE)
