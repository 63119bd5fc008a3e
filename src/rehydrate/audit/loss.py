"""What each compaction lost: the facts that stood just before it, and whether the harness's own summary and
rehydrate's capture kept each one.

The facts, read with rehydrate's own tail reader (transcripts.recent.read_since, with the fast parser) from a copy of
the transcript as it stood at the compaction (its lines before the boundary), over the window since the previous
compaction (the whole prefix for the first), at most the last WINDOW bytes (16 MiB, the capture's own MAX_READ):
- task: each item of the task list as it stood (Claude Code's TodoWrite or its task tools folded, Codex's
  update_plan), from up to TODOS_BACK (8 MiB) further back, as the capture reads it;
- edited: each path edited successfully in the window, as the transcript wrote it;
- failed: each failed command's first line, its first COMMAND_CHARS (200) characters (a command failing twice is one
  fact);
- request: the last MAX_REQUESTS (3) user messages of the window: prompts, slash commands, queued messages and the
  words of a rejected tool call;
- number: the ids and numbers of the last turns: every token holding an ASCII digit (NUMBER: letters, digits and
  `._-` inside, with `._-` at its ends cut off; at least 2 characters) in the last 3 requests and the last
  MAX_ASSISTANT (3) assistant texts of the window, the newest text first, each token once, at most MAX_NUMBERS (30).
  `#123` gives `123`, `ENT-250`, `v1.2.3`, `c1c35c9`, `localhost:8080` gives `8080`.

Kept: a fact's text appears in a text (the summary, or the capture's strings each on its own) once both have every
run of white space made one space and terminal escapes, control and invisible characters taken out (as the capture
stores text), a task or a request cut to its first FACT_CHARS (100) characters. An edited path also counts as kept in
its form relative to the session's working directory. A number counts only as a whole token of the text (the same
rule), so 12 is not kept by 2012. Case counts.

The harness's summary: Claude Code's `user` record with `isCompactSummary: true` right after the boundary; Codex's
`compacted` record's `payload.message` and the user and assistant messages of its `replacement_history` (the
AGENTS.md and environment messages left out: the harness sends them again anyway). Codex 0.142 encrypts its summary
(an empty message, an encrypted `compaction` item): only the messages it kept verbatim count, so its share is a
floor. None found: kept_by_summary is null.

The capture: the PreCompact hook's own (harness.compaction.capture.capture, given by the face that runs the audit:
the audit imports nothing of the harnesses), run on the copy with a Since whose ts is the previous compaction's time
(its checkpoint stand-in), root the session's working directory, an empty config.

Cost: each compaction's copy is at most WINDOW + TODOS_BACK bytes (what the capture itself may read back); the copy
is read twice (the facts, the capture), each reading at most WINDOW of it in full (the task list's records further
back are told by their bytes). A session's end after its last compaction (at most DRIFT_TAIL, 1 MiB) is read once
more, for the format drift only (drift.py): what the reader does not know.
"""

from __future__ import annotations

import os
import re

from rehydrate.audit import boundary
from rehydrate.store.wal.since import Since
from rehydrate.text import clean, no_escapes
from rehydrate.transcripts import recent
from rehydrate.transcripts.failures import first_line
from rehydrate.transcripts.jsonl import loads, obj
from rehydrate.transcripts.model import inside, roots_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from rehydrate.transcripts.model import Compaction, Recent

    # harness.compaction.capture's
    Capture = Callable[[str, dict[str, Any], Since, dict[str, Any]], dict[str, Any] | None]

WINDOW = recent.CAPTURE_READ
TODOS_BACK = recent.TODOS_BACK
DRIFT_TAIL = 1 << 20  # the most read of a session's end after its last compaction, for the format drift only
FACT_CHARS = 100
COMMAND_CHARS = 200  # a failed command's first line: long one-liners often share their first 100 characters
MAX_PATH = 300
MAX_REQUESTS = 3
MAX_ASSISTANT = 3
MAX_NUMBERS = 30
KINDS = ("task", "edited", "failed", "request", "number")
NUMBER = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_NUMBER = re.compile(NUMBER)
# A capture's fields that say nothing of the session (stamps, which tool or kind of message, its own bookkeeping)
_NOT_CARRIED = ("ts", "tool", "kind")
_NOT_CARRIED_TOP = ("v", "error", "harness", "version", "since", "read", "unknown")


class Window:
    """One read of the tail reader: its harness version and what it did not know (for the format drift)."""

    def __init__(self, version: str | None, unknown: dict[str, int]) -> None:
        self.version = version
        self.unknown = unknown


class Loss:
    """A session's compactions' losses (one dict per compaction, as the report holds it) and its reads' windows."""

    def __init__(self) -> None:
        self.compactions: list[dict[str, Any]] = []
        self.windows: list[Window] = []
        self.version: str | None = None


def session(path: str, harness: str, compactions: list[Compaction], scratch: str, capture: Capture) -> Loss:
    """The loss at each compaction of the transcript at path and the windows read; scratch: a folder of this
    process's own, where each prefix is copied (and deleted); capture: the PreCompact capture. OSError when the file
    cannot be read."""
    out = Loss()
    cwd = boundary.session_cwd(path) if harness == "codex" and compactions else None
    offsets = boundary.offsets(path, [c.line for c in compactions])
    copy = os.path.join(scratch, "prefix.jsonl")
    since: str | None = None
    for c in compactions:
        offset = offsets.get(c.line)
        if offset is None:  # the file changed since it was read
            break
        after = boundary.records_from(path, offset, boundary.SUMMARY_LINES)
        if harness == "claude":  # where the session worked when it compacted (a worktree may have changed it)
            cwd = after[0]["cwd"] if after and isinstance(after[0].get("cwd"), str) else None
        try:
            start = boundary.copy_prefix(path, offset, copy)
            one = _one(copy, start, harness, since, cwd, boundary.summary(after, harness), out, capture)
        finally:
            boundary.remove(copy)
        out.compactions.append(one)
        since = c.time
    tail = recent.read_since(path, since, loads=loads, max_bytes=DRIFT_TAIL, harness=harness, todos_back=0)
    out.windows.append(Window(tail.version, tail.unknown))
    out.version = tail.version or next((w.version for w in reversed(out.windows) if w.version), None)
    return out


def _one(
    copy: str,
    start: int,
    harness: str,
    since: str | None,
    cwd: str | None,
    summary: str | None,
    out: Loss,
    capture: Capture,
) -> dict[str, Any]:
    """The facts before one compaction, judged against its summary and the capture made from the same copy (the
    file's bytes from `start` to the boundary)."""
    found = recent.read_since(copy, since, loads=loads, max_bytes=WINDOW, harness=harness, todos_back=TODOS_BACK)
    out.windows.append(Window(found.version, found.unknown))
    said = boundary.assistant_texts(copy, found.read_from, harness, MAX_ASSISTANT)
    facts = _facts(found, said)
    stand_in = Since()
    stand_in.ts = since
    event = {"transcript_path": copy, "harness": harness}
    carried = capture(cwd or "", event, stand_in, {}) or {"error": "capture off"}
    roots = roots_of(cwd)
    by_summary = _Text([summary]) if summary is not None else None
    by_capture = _Text(_strings(carried))
    judged = []
    for kind, text, detail in facts:
        forms = [text]
        if kind == "edited":
            forms.append(_norm(inside(text, roots)))
        judged.append(
            {
                "kind": kind,
                "text": text,
                "detail": detail,
                "kept_by_summary": by_summary.holds(kind, forms) if by_summary is not None else None,
                "carried_by_capture": by_capture.holds(kind, forms),
            }
        )
    return {
        "since": since,
        # cut: the reader stopped at WINDOW bytes, or at the copy's start before the previous compaction
        "window": {
            "from": start + found.read_from,
            "to": start + found.size,
            "cut": found.cut or (start > 0 and found.read_from == 0),
        },
        "summary": None if summary is None else {"chars": len(summary)},
        "capture": {"error": carried.get("error"), "cut": bool(obj(carried.get("read")).get("cut"))},
        "facts": judged,
        "totals": totals([judged]),
    }


def totals(fact_lists: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """facts, kept_by_summary, carried_by_capture over these lists of facts, and the same by kind."""
    out: dict[str, Any] = {"facts": 0, "kept_by_summary": 0, "carried_by_capture": 0}
    by_kind = {kind: {"facts": 0, "kept_by_summary": 0, "carried_by_capture": 0} for kind in KINDS}
    for facts in fact_lists:
        for f in facts:
            for part in (out, by_kind[f["kind"]]):
                part["facts"] += 1
                part["kept_by_summary"] += f["kept_by_summary"] is True
                part["carried_by_capture"] += f["carried_by_capture"] is True
    out["by_kind"] = by_kind
    return out


def add(into: dict[str, Any], more: dict[str, Any]) -> None:
    """Adds one totals() into another (by kind too)."""
    for key in ("facts", "kept_by_summary", "carried_by_capture"):
        into[key] += more[key]
        for kind in KINDS:
            into["by_kind"][kind][key] += more["by_kind"][kind][key]


# --- the facts ------------------------------------------------------------------------------------------------------


def _facts(found: Recent, said: list[str]) -> list[tuple[str, str, str | None]]:
    """(kind, text as compared, detail) of each fact, each (kind, text) once."""
    out: list[tuple[str, str, str | None]] = []
    if found.todos is not None:
        out += [("task", _cut(text), status) for text, status in found.todos.items]
    out += [("edited", _norm(path)[:MAX_PATH], None) for path in found.edited]
    for f in found.failed:
        line = _cut(first_line(f.command), COMMAND_CHARS)
        out.append(("failed", line, None if f.exit is None else f"exit {f.exit}"))
    requests = found.user[-MAX_REQUESTS:]
    out += [("request", _cut(m.text), m.kind) for m in requests]
    texts = [_norm(t) for t in [m.text for m in reversed(requests)] + list(reversed(said))]  # the newest first
    out += [("number", token, None) for token in numbers(texts)[:MAX_NUMBERS]]
    seen: set[tuple[str, str]] = set()
    unique = []
    for kind, text, detail in out:
        if text and (kind, text) not in seen:
            seen.add((kind, text))
            unique.append((kind, text, detail))
    return unique


def numbers(texts: list[str]) -> list[str]:
    """The tokens of these texts that hold an ASCII digit (NUMBER, `._-` cut off at its ends, at least 2
    characters), in order, each once."""
    found: dict[str, None] = {}
    for text in texts:
        for token in _tokens(text):
            if any("0" <= ch <= "9" for ch in token):
                found.setdefault(token)
    return list(found)


def _tokens(text: str) -> Iterator[str]:
    for m in _NUMBER.finditer(text):
        token = m.group().rstrip("._-")
        if len(token) >= 2:
            yield token


def _norm(text: str) -> str:
    """text on one line: terminal escape sequences out (as the capture takes them out: ESC[2J leaves no "[2J"),
    every run of white space one space, control and invisible characters out."""
    return " ".join(clean(no_escapes(text), one_line=True).split())


def _cut(text: str, most: int = FACT_CHARS) -> str:
    return _norm(text[: most * 4 + 256])[:most].rstrip()


class _Text:
    """Texts a fact may be kept by: each normalised on its own (a fact never matches across two), and their
    number tokens."""

    def __init__(self, texts: list[str]) -> None:
        self.text = "\n".join(_norm(t) for t in texts)
        self._tokens: set[str] | None = None

    def holds(self, kind: str, forms: list[str]) -> bool:
        if kind == "number":
            if self._tokens is None:
                self._tokens = set(_tokens(self.text))
            return forms[0] in self._tokens
        return any(form and form in self.text for form in forms)


def _strings(value: Any, top: bool = True) -> list[str]:
    """Every string a capture holds (its tasks, requests, paths, commands, error lines, the assistant's text), its
    keys and the fields that say nothing of the session left out (_NOT_CARRIED; at its top, _NOT_CARRIED_TOP)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, False)]
    if isinstance(value, dict):
        skip = _NOT_CARRIED + _NOT_CARRIED_TOP if top else _NOT_CARRIED
        return [s for k, v in value.items() if k not in skip for s in _strings(v, False)]
    return []
