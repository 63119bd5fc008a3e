"""Whether a brief a hook gave reached the model whole, judged from what the harness wrote in its transcript after
the hook ran: the delivery receipt.

Peers' users report hook output silently not injected, deferred a turn, or cut to a preview; the transcript is the
one record of what the harness kept. Each brief carries a token of its own (48 random bits: no earlier text holds
it) and ends with its ledger's last line. Claude Code 2.1 writes a hook's context as an `attachment` record
(`hook_additional_context`) and, since 2.1.3xx, the request itself (`api-request-blob`); Codex 0.171 as a developer
message (`hooks.additional_context`); each holds the text as a JSON string. The verdict:

- delivered: a string after the hook holds the token and, after it, the brief's last line;
- truncated: a string holds the token but not the last line: the detail says how much of the text after the token
  it kept;
- not delivered: the transcript gained a model turn after the hook, and no record holds the token;
- pending: nothing after the hook yet (the harness has not written the turn), or the transcript cannot be read;
  judged again later.

Reads at most READ_BYTES from where the transcript ended when the hook ran; only lines holding the token are parsed.
Standard library only (the hook path).
"""

from __future__ import annotations

import os

from rehydrate import safejson
from rehydrate.transcripts.jsonl import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DELIVERED, TRUNCATED, NOT_DELIVERED, PENDING = "delivered", "truncated", "not delivered", "pending"
READ_BYTES = 8 << 20
# A model's turn, as each format writes one: Claude Code's assistant record, Codex's assistant message or function
# call, Gemini CLI's reply.
_TURNS = (b'"type":"assistant"', b'"role":"assistant"', b'"type":"function_call"', b'"type":"gemini"')
TURN_MARKS = _TURNS + tuple(m.replace(b":", b": ") for m in _TURNS)  # and as a writer that spaces its JSON has them


class Receipt:
    """A verdict and what it rests on, in words (computed: no transcript text in it)."""

    __slots__ = ("detail", "kept", "verdict")

    def __init__(self, verdict: str, detail: str, kept: int | None = None) -> None:
        self.verdict, self.detail, self.kept = verdict, detail, kept

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "detail": self.detail}
        if self.kept is not None:
            out["kept"] = self.kept
        return out


def judge(path: str, start: int, token: str, after: int, last: str) -> Receipt:
    """The receipt of the brief whose token is `token`, `after` characters long from its token to its end, whose
    last line ends with the letters and digits `last` (a harness may escape the rest: Gemini CLI escapes < and >),
    given by a hook when the transcript at path held `start` bytes."""
    if not token or not token.isalnum() or not last:
        return Receipt(PENDING, "the brief's record does not say what to look for")
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size < start:  # rewritten since (a harness that compacts in place): read it all
                start = 0
            f.seek(start)
            data = f.read(READ_BYTES)
    except FileNotFoundError:
        return Receipt(PENDING, "the transcript the hook's event named is not there yet")
    except (OSError, ValueError):
        return Receipt(PENDING, "the transcript could not be read")
    mark = token.encode()
    read = f"the {len(data):,} bytes the transcript gained after the hook"
    if mark not in data:
        if any(m in data for m in TURN_MARKS):
            return Receipt(NOT_DELIVERED, f"its token is in none of {read}, which hold a model turn")
        return Receipt(PENDING, f"no model turn yet in {read}")
    best = 0
    for line in data.split(b"\n"):
        if mark not in line:
            continue
        for text in _strings_with(line, token):
            rest = text[text.index(token) :]
            # the brief's own end, not the string's: a harness may put more after it (Gemini CLI: the prompt)
            end = rest[max(0, after - 4 * len(last) - 4096) : after + 4096]
            if last in "".join(c for c in end if c.isalnum()):
                return Receipt(DELIVERED, f"its token and its last line are in {read}", len(rest))
            best = max(best, len(rest))
    if best == 0:  # the token only in a line that does not parse (torn, or being written): judged later
        return Receipt(PENDING, f"its token is only in a record of {read} that does not parse")
    return Receipt(
        TRUNCATED,
        f"cut: the transcript holds {best:,} of the {after:,} characters from its token to its end, not its last line",
        best,
    )


BRIEF_MARK = "# rehydrate brief: "
TOKEN_MARK = "\nToken "


class Found:
    """A rehydrate brief the transcript holds: the line (1-based) of the record, its token, and whether it is whole
    (its ledger, headed with its token, and the ledger's confidence line are in the text)."""

    __slots__ = ("line", "token", "whole")

    def __init__(self, line: int, token: str, whole: bool) -> None:
        self.line, self.token, self.whole = line, token, whole


def briefs(path: str) -> list[Found]:
    """Every rehydrate brief in a transcript, judged from the transcript alone (no state needed: `audit`); a brief
    recorded twice in one record (a request that repeats it) counts once, whole if any copy is. Only the lines that
    hold the brief's heading are parsed."""
    mark = BRIEF_MARK.encode()
    found: list[Found] = []
    with open_regular(path) as f:
        for n, line in enumerate(f, 1):
            if mark not in line:
                continue
            seen: dict[str, bool] = {}
            for text in _strings_with(line, BRIEF_MARK):
                token = _token(text)
                if token is not None:
                    ledger = text.find(f"## Ledger {token}\n")
                    seen[token] = seen.get(token, False) or (ledger >= 0 and "\nconfidence: " in text[ledger:])
            found += [Found(n, token, whole) for token, whole in seen.items()]
    return found


def _token(text: str) -> str | None:
    """The token a brief's introduction names (`Token 0123456789ab: text from files ...`), if it is one's."""
    at = text.find(TOKEN_MARK, text.find(BRIEF_MARK))
    token = text[at + len(TOKEN_MARK) : at + len(TOKEN_MARK) + 12] if at >= 0 else ""
    return token if len(token) == 12 and all(c in "0123456789abcdef" for c in token) else None


def _strings_with(line: bytes, token: str) -> list[str]:
    """Every string value in a JSON record that holds token (a record that does not parse holds none)."""
    try:
        value = safejson.loads(line)
    except ValueError:
        return []
    found: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if token in item:
                found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
