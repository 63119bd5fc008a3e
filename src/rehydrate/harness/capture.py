"""The capture at a compaction: what the transcript says happened since the last checkpoint, recorded by the
PreCompact hook (Claude Code, Codex) in that compaction's own `compaction` record, as `data["capture"]`.

Contract of `capture(root, event, since, config) -> dict | None` (WP-B builds it and calls it from
`events._record_compaction` for phase "pre"; until then it returns None and nothing calls it):
- Reads the event's own `transcript_path` (the harness is the authority for its own event: no folder test, but a
  regular file only) with `transcripts.recent.read_since(path, since.ts, loads=safejson.loads, max_bytes=MAX_READ)`.
- Returns the schema below, or None when the capture is off: state/config.json `{"capture": false}`. It is on by
  default; `{"capture_user": false}` keeps it but drops the user's words (`user` is then []). Both switches are
  documented in the README. Gemini CLI: no capture (its PreCompress confirms no compression) unless a compression
  signal is confirmed.
- When the transcript cannot be read, `error` names why ("no such file", "not a regular file", "unknown format") and
  only "v", "harness", "since" and "error" are kept.
- state/ is committed: the capture reaches git. It copies commands and the user's words, never tool output (only a
  failed command's first error line), each through `redact`, then `views.clean` (controls and invisible characters
  out; newlines kept in user and assistant text only), then cut to its bound. Every string in it is transcript text:
  untrusted data, fenced and labelled as such by the brief.

Schema v1 (frozen; a change is a new "v"):
    {"v": 1, "harness": "claude"|"codex",
     "since": {"seq": int|null, "ts": str|null},                    # the checkpoint read back to
     "read": {"from": int, "to": int, "cut": bool, "lines": int, "bad": int},   # byte range of the transcript read
     "tool_calls": int, "user_turns": int,
     "todos": {"tool": str, "line": int, "before_checkpoint": bool, "items": [[text, status], ...], "more": int}|null,
     "user": [{"line": int, "ts": str|null, "text": str}, ...],      # the last MAX_USER, oldest first
     "edited": {"files": [str, ...], "more": int},
     "failed": [{"line": int, "tool": str, "command": str, "exit": int|null, "error": str, "later_ok": bool}, ...],
     "assistant": {"line": int, "ts": str|null, "text": str}|null,
     "error": str|null}
Bounds: todos MAX_TODOS items x MAX_TODO chars; user the last MAX_USER x MAX_USER_TEXT; edited MAX_EDITED paths x
MAX_PATH; failed the last MAX_FAILED (command MAX_COMMAND, error MAX_ERROR); assistant MAX_ASSISTANT: about 14 KiB in
all, under views.MAX_FIELD and wal.MAX_LINE.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.since import Since

VERSION = 1
MAX_READ = 16 << 20  # the most the capture reads back from the transcript's end
MAX_TODOS, MAX_TODO = 30, 200
MAX_USER, MAX_USER_TEXT = 3, 1000
MAX_EDITED, MAX_PATH = 50, 300
MAX_FAILED, MAX_COMMAND, MAX_ERROR = 3, 300, 200
MAX_ASSISTANT = 1500
REDACTED = "[redacted]"


def capture(root: str, event: dict[str, Any], since: Since, config: dict[str, Any]) -> dict[str, Any] | None:
    """The capture of schema v1 for this PreCompact event (see the module's docstring). root: the project's root
    (paths inside it are made relative); config: state/config.json as read. Until WP-B: None."""
    return None


def redact(text: str) -> str:
    """text with what looks like a secret replaced by REDACTED: API keys (`sk-...`), GitHub tokens (`ghp_...`,
    `github_pat_...`), AWS key ids (`AKIA...`), Slack tokens (`xoxb-`, `xoxp-`), private key blocks (`-----BEGIN ...
    PRIVATE KEY-----` to its END line), and the values of `password=`, `token=`, `secret=` (and `:` forms). May use
    re (PreCompact already loads it; only SessionStart's imports are pinned). Until WP-B: NotImplementedError."""
    raise NotImplementedError("redaction comes with WP-B")


def counts(capture: dict[str, Any]) -> str:
    """A capture as counts, for `rehydrate log` and the brief's last-record line: "3 todos, 2 files edited, 1
    failed command" ("nothing captured" when all are empty, "not captured: <error>" on an error). The capture is
    untrusted (it arrived with the WAL): a field of the wrong type counts as empty, the error is cut to one line."""
    error = capture.get("error")
    if isinstance(error, str) and error:
        return "not captured: " + " ".join(error.split())[:200]
    failed = capture.get("failed")
    parts = []
    for n, one, many in (
        (_count(capture.get("todos"), "items"), "todo", "todos"),
        (_count(capture.get("edited"), "files"), "file edited", "files edited"),
        (len(failed) if isinstance(failed, list) else 0, "failed command", "failed commands"),
    ):
        if n:
            parts.append(f"{n} {one if n == 1 else many}")
    return ", ".join(parts) or "nothing captured"


def _count(part: object, key: str) -> int:
    """len(part[key]) plus part["more"] (what the bound left out), 0 for anything of the wrong shape."""
    if not isinstance(part, dict) or not isinstance(part.get(key), list):
        return 0
    more = part.get("more")
    return len(part[key]) + (more if isinstance(more, int) and not isinstance(more, bool) and more > 0 else 0)
