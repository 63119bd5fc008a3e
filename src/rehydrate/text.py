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
- cut_line() cuts a line to a length without leaving a quotation open.
- no_escapes() takes terminal escape sequences out whole, so that cleaning leaves no "[2J" behind.
- cap() refuses a field longer than its limit (the limits themselves are store/views.py's).
"""

from __future__ import annotations

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
