"""Untrusted text as data: quoting between token-carrying lines, cleaning, and cutting to a cap.

Everything the brief did not compute (the files' text, the last record's data, later transcript excerpts and
teammates' text) goes through `quote`: between two lines that carry a token drawn afresh for each brief and name the
text's source, every line of it marked `> `. The token is removed from the text, so the text can neither close its
quote nor imitate the ledger, whose header carries the same token.
"""

from __future__ import annotations

from rehydrate.text import clean, shorten

_TOKEN_GONE = "[token removed]"


def quote(text: str, source: str, token: str, note: str = "") -> str:
    """Untrusted text as data: cleaned of control and invisible characters, the token removed from it, every line
    marked `> `, between a line naming its source and an end line (with `note`, if any), both carrying the token."""
    return fence_body(quoted_lines(untoken(text_lines(text), token)), untoken(flat(source), token), token, note)


def fence_body(body: str, source: str, token: str, note: str = "") -> str:
    end = f"[{token} end; {note}]" if note else f"[{token} end]"
    return f"[{token} quote: {source}]\n{body}\n{end}"


def quoted_lines(text: str) -> str:
    return "\n".join(("> " + ln) if ln else ">" for ln in text.split("\n"))


def untoken(text: str, token: str) -> str:
    if not token:
        return text
    if not token.strip("0123456789abcdef") and token not in text.lower():  # a hex token: what IGNORECASE would find
        return text
    import re  # loaded when there is a token to take out only

    return re.sub(re.escape(token), _TOKEN_GONE, text, flags=re.IGNORECASE)


def text_lines(text: str) -> str:
    """Cleaned text with its lines; Unicode's own line and paragraph separators count as line breaks."""
    return clean(text.replace("\u2028", "\n").replace("\u2029", "\n"))


def flat(text: str) -> str:
    return clean(text, one_line=True)


def shorten_quoted(body: str, cap: int | None) -> tuple[str, bool]:
    """Quoted lines cut like text; the ellipsis stays on a marked line (`> …`, never `>…`)."""
    text, cut = shorten(body, cap)
    if cut and (text == ">…" or text.endswith("\n>…")):
        text = text[:-1] + " …"
    return text, cut


def shorten_left(text: str, cap: int | None) -> tuple[str, bool]:
    """A path keeps its end: an ellipsis and the last characters."""
    if cap is None or len(text) <= cap:
        return text, False
    return "…" + text[len(text) - max(0, cap - 1) :], True


def n_chars(n: int) -> str:
    return f"{n:,} character{'s' if n != 1 else ''}"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def utf8_size(text: str) -> int:
    """UTF-8 bytes of text (a lone surrogate counted as the 3 bytes it would take)."""
    return len(text.encode("utf-8", "surrogatepass"))


def within_budget(text: str, budget: int, max_bytes: int | None) -> bool:
    return len(text) <= budget and (max_bytes is None or utf8_size(text) <= max_bytes)


def head_bytes(text: str, n: int) -> str:
    """The longest start of text that takes at most n UTF-8 bytes."""
    return text.encode("utf-8", "surrogatepass")[: max(0, n)].decode("utf-8", "ignore")
