"""The capture at a compaction: what the transcript says happened since the last checkpoint, recorded by the
PreCompact hook (Claude Code, Codex) in that compaction's own `compaction` record, as `data["capture"]`.

Contract of `capture(root, event, since, config) -> dict | None` (called from `records._record_compaction` for
phase "pre"):
- Reads the event's own `transcript_path` (the harness is the authority for its own event: no folder test, but a
  regular file only) with `transcripts.recent.read_since(path, since.ts, loads=safejson.loads, max_bytes=MAX_READ)`.
- Returns the schema below, or None when the capture is off: state/config.json `{"capture": false}`. It is on by
  default; `{"capture_user": false}` keeps it but drops the user's words (`user` is then []). Both switches are
  documented in the README. Gemini CLI: no capture (its PreCompress confirms no compression) unless a compression
  signal is confirmed.
- When the transcript cannot be read, `error` names why ("no such file", "not a regular file", "unknown format",
  "no transcript path") and only "v", "harness" (the event's `harness` if it names one, else null), "since" and
  "error" are kept.
- Lines: the transcript's own 1-based lines (the lines before where the read started are counted, when they are at
  most transcripts.recent.COUNT_MAX bytes); null when they are not known, never a count from where the read started.
- state/ is committed: the capture reaches git. It copies commands and the user's words, never tool output (only a
  failed command's first error line), each through `redact`, then `text.clean` (controls and invisible characters
  out; newlines kept in user and assistant text only), then cut to its bound. Every string in it is transcript text:
  untrusted data, fenced and labelled as such by the brief.

Schema v2 (frozen; a change is a new "v"; v1, without the fields marked v2 and with lines counted from read.from
when it was not 0, is still read):
    {"v": 2, "harness": "claude"|"codex"|"gemini",
     "version": str|null,                                           # v2: the harness's version the transcript names
     "since": {"seq": int|null, "ts": str|null},                    # the checkpoint read back to
     "read": {"from": int, "to": int, "cut": bool, "lines": int, "bad": int},   # byte range of the transcript read
     "tool_calls": int, "user_turns": int,
     "todos": {"tool": str, "line": int|null, "before_checkpoint": bool, "items": [[text, status], ...],
               "more": int}|null,
     "user": [{"line": int|null, "ts": str|null, "text": str,
               "kind": "prompt"|"command"|"queued"|"rejected"}, ...],          # the last MAX_USER, oldest first
     "edited": {"files": [str, ...], "more": int},
     "failed": [{"line": int|null, "tool": str, "command": str, "exit": int|null, "error": str, "later_ok": bool},
                ...],                                               # error: transcripts.failures.telling()
     "assistant": {"line": int|null, "ts": str|null, "text": str}|null,
     "unknown": {str: int},                     # v2: record types, subtypes and tool names the reader did not know
     "error": str|null}
Bounds: todos MAX_TODOS items x MAX_TODO chars; user the last MAX_USER x MAX_USER_TEXT; edited MAX_EDITED paths x
MAX_PATH; failed the last MAX_FAILED (command MAX_COMMAND, error MAX_ERROR); assistant MAX_ASSISTANT; and the whole
at most MAX_TOTAL (14 KiB) of JSON, under layout.MAX_FIELD and wal.MAX_LINE: past it the oldest edited paths go first
(into "more"), then the last todo items, then the oldest user messages.
"""

from __future__ import annotations

import errno

from rehydrate import safejson
from rehydrate.harness.compaction.redaction import redact as by_rules
from rehydrate.text import clean, no_escapes
from rehydrate.transcripts import recent
from rehydrate.transcripts.claude.tasks import task_store
from rehydrate.transcripts.model import Todos, inside, roots_of
from rehydrate.transcripts.recent import CAPTURE_READ as MAX_READ  # the most read back from the transcript's end

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.store.wal.since import Since
    from rehydrate.transcripts.model import Msg, Recent

VERSION = 2

MAX_TODOS, MAX_TODO = 30, 200
MAX_USER, MAX_USER_TEXT = 3, 1000
MAX_EDITED, MAX_PATH = 50, 300
MAX_FAILED, MAX_COMMAND, MAX_ERROR = 3, 300, 310
MAX_UNKNOWN = 20  # names of what the reader did not know, the most frequent first
MAX_ASSISTANT = 1500
MAX_TOTAL = 14 << 10  # the whole capture as JSON: under layout.MAX_FIELD and wal.MAX_LINE
REDACTED = "[redacted]"  # as harness/compaction/redaction.py writes it


def capture(root: str, event: dict[str, Any], since: Since, config: dict[str, Any]) -> dict[str, Any] | None:
    """The capture of schema v1 for this PreCompact event (see the module's docstring). root: the project's root
    (paths inside it are made relative); config: state/config.json as read.

    The event's harness is the authority for its own transcript: its records are not asked to name the project
    (read_since's `project`), only its paths are made relative to root. A capture that cannot be made is the short
    error form; nothing here raises for the file or its content."""
    if not isinstance(config, dict) or config.get("capture") is False:
        return None
    seq = getattr(since, "seq", None)
    ts = getattr(since, "ts", None)
    head: dict[str, Any] = {
        "v": VERSION,
        "harness": event.get("harness") if event.get("harness") in HARNESSES else None,
        "since": {"seq": seq if isinstance(seq, int) else None, "ts": ts if isinstance(ts, str) else None},
    }
    named = event.get("harness")
    if isinstance(named, str) and named not in HARNESSES:  # never read as another harness's format
        return {**head, "error": f"rehydrate does not read {clean(named, one_line=True)[:40]}'s transcripts"}
    path = event.get("transcript_path")
    if not isinstance(path, str) or not path:
        return {**head, "error": "no transcript path"}
    try:
        found = _read(path, head["harness"], head["since"]["ts"])
    except OSError as e:
        return {**head, "error": _why(e)}
    except Exception as e:
        return {**head, "error": f"could not read the transcript ({type(e).__name__})"}
    if isinstance(found, str):
        return {**head, "error": found}
    if found.harness == "claude":  # the task tools' own store, when the harness keeps one: the list whole
        _stored_tasks(found, event.get("session_id"))

    return _fit(
        {**head, "harness": found.harness, **_fields(found, roots_of(root), config.get("capture_user") is not False)}
    )


def _stored_tasks(found: Recent, session_id: object) -> None:
    """found's task list replaced by the one Claude Code keeps on disk for this session, when it keeps one (a file
    too large, or none to parse, leaves the transcript's fold)."""

    stored = task_store(session_id)
    if stored:
        found.todos = Todos("task store", None, False, stored)


def _fit(out: dict[str, Any]) -> dict[str, Any]:
    """out within MAX_TOTAL bytes of JSON (each part within its bound can still add up past it): the oldest edited
    paths go first (counted in "more"), then the last todo items, then the oldest user messages."""

    def size() -> int:
        return len(safejson.canonical_text(out).encode("utf-8"))

    edited, todos = out["edited"], out["todos"]
    while size() > MAX_TOTAL and edited["files"]:
        drop = max(1, len(edited["files"]) // 4)
        del edited["files"][:drop]
        edited["more"] += drop
    while size() > MAX_TOTAL and todos is not None and todos["items"]:
        todos["items"].pop()
        todos["more"] += 1
    while size() > MAX_TOTAL and out["user"]:
        out["user"].pop(0)
    return out


HARNESSES = ("claude", "codex", "gemini")


def _read(path: str, harness: str | None, since_ts: str | None) -> Recent | str:
    """The transcript's tail since since_ts, or why not ("unknown format")."""

    if harness is None:
        harness = recent.harness_of(path, safejson.loads)
        if harness is None:
            return "unknown format"
    return recent.read_since(path, since_ts, loads=safejson.loads, max_bytes=MAX_READ, harness=harness, numbered=True)


def _why(e: OSError) -> str:

    if e.errno == errno.ENOENT:
        return "no such file"
    if e.strerror == "not a regular file" or e.errno in (errno.EISDIR, errno.ENXIO):
        return "not a regular file"

    return clean(e.strerror or type(e).__name__, one_line=True)[:200]


def _fields(found: Recent, roots: tuple[str, ...], with_user: bool) -> dict[str, Any]:
    """Recent mapped to the schema, every string redacted, cleaned and cut to its bound; lines made the file's own
    where they are known (else null)."""

    def line(n: int | None) -> int | None:
        # read_since numbered them as the file's own when it could count the lines before its read (line_base)
        return None if n is None or n <= 0 or found.line_base is None else n

    todos = None
    if found.todos is not None:
        items = found.todos.items
        todos = {
            "tool": _line(found.todos.tool, MAX_TODO),
            "line": line(found.todos.line),
            "before_checkpoint": found.todos.before_checkpoint,
            "items": [[_line(text, MAX_TODO), _line(status, 40)] for text, status in items[:MAX_TODOS]],
            "more": max(0, len(items) - MAX_TODOS),
        }
    files = [_line(inside(path, roots), MAX_PATH) for path in found.edited]
    assistant = found.assistant
    unknown = sorted(found.unknown.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_UNKNOWN]
    return {
        "version": _line(found.version, 40) if found.version else None,
        "read": {
            "from": found.read_from,
            "to": found.size,
            "cut": found.cut,
            "lines": found.lines,
            "bad": found.bad_lines,
        },
        "tool_calls": found.tool_calls,
        "user_turns": sum(m.kind in ("prompt", "command") for m in found.user),
        "todos": todos,
        "user": [{**_msg(m, MAX_USER_TEXT, line), "kind": m.kind} for m in found.user[-MAX_USER:]] if with_user else [],
        "edited": {"files": files[-MAX_EDITED:], "more": max(0, len(files) - MAX_EDITED)},
        "failed": [
            {
                "line": line(f.line),
                "tool": _line(f.tool, 40),
                "command": _line(f.command, MAX_COMMAND),
                "exit": f.exit,
                "error": _line(f.error, MAX_ERROR),
                "later_ok": f.later_ok,
            }
            for f in found.failed[-MAX_FAILED:]
        ],
        "assistant": _msg(assistant, MAX_ASSISTANT, line) if assistant is not None else None,
        "unknown": {_line(name, 80): count for name, count in unknown},
        "error": None,
    }


def _msg(msg: Msg, bound: int, line: Callable[[int | None], int | None]) -> dict[str, Any]:
    ts = msg.ts if isinstance(msg.ts, str) else None
    return {"line": line(msg.line), "ts": _line(ts, 40) if ts else None, "text": _text(msg.text, bound, one_line=False)}


def _line(text: str, bound: int) -> str:
    return _text(text, bound, one_line=True)


def _text(text: str, bound: int, *, one_line: bool) -> str:
    """Transcript text as stored: terminal escapes out, redacted, cleaned (one line unless told), cut to bound."""

    text = redact(clean(no_escapes(text[: bound * 4 + 4096]), one_line=one_line))  # a huge text: its start; cleaned
    # first, so that a zero-width character inside a key cannot hide it from redact() and be taken out after
    return text if len(text) <= bound else text[: bound - 1].rstrip() + "…"


def redact(text: str) -> str:
    """text with what looks like a secret replaced by REDACTED: the rules of harness/compaction/redaction.py,
    detect-secrets' detectors and the project's own (loaded on the first call: only a capture makes one; SessionStart's
    recency uses checks.recency.redact_words, on str methods)."""

    return by_rules(text)
