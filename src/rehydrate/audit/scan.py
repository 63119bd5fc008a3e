"""The audit of a set of files: each session read, its compactions' symptoms, the sessions ranked."""

from __future__ import annotations

import gc

from rehydrate import JSON_VERSION, transcripts
from rehydrate.audit.discover import unreadable
from rehydrate.audit.symptoms import score, symptoms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def report(
    paths: list[str], progress: Callable[[int, int, str], None] | None = None, prefilter: bool = True
) -> dict[str, Any]:
    """The audit of these files, as the JSON object `rehydrate audit --json` prints. progress, if given, is called
    before each file is read with its number (from 1), the number of files and its path. Only the records the audit
    uses are looked at past their type (transcripts.read's audit). prefilter: the lines whose bytes show they cannot
    be one (transcripts.claude.audited: Claude Code's progress records, 70% of a session's lines) are skipped before
    they are parsed: the same report, except that a line skipped is not counted in bad_lines even if it is not JSON
    (bench/transcripts.py --unfiltered times it off)."""
    collecting = gc.isenabled()
    gc.disable()  # what it reads holds no cycles: the cyclic collector would only walk every record kept, often
    try:
        sessions, errors = _read(paths, progress, prefilter)
    finally:
        if collecting:
            gc.enable()
    ranked = sorted((s for s in sessions if s["compactions"]), key=lambda s: -int(s["score"]))
    return {
        "version": JSON_VERSION,
        "sessions": sessions,
        "summary": {
            "files": len(paths),
            "sessions": len(sessions),
            "compactions": sum(len(s["compactions"]) for s in sessions),
            "ranked": [{"path": s["path"], "score": s["score"]} for s in ranked],
        },
        "errors": errors,
    }


def _read(
    paths: list[str], progress: Callable[[int, int, str], None] | None, prefilter: bool
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    sessions: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    for n, path in enumerate(paths, 1):
        if progress is not None:
            progress(n, len(paths), path)
        try:
            # a FIFO, a device or a folder is refused: "not a regular file"
            s = transcripts.read(path, audit=True, prefilter=prefilter)
        except OSError as e:
            errors.append(unreadable(path, e))
            continue
        if s.harness in ("claude", "codex"):
            sessions.append(_session(path, s))
    return sessions, errors


def _session(path: str, s: transcripts.Session) -> dict[str, Any]:
    compactions = symptoms(s)
    return {
        "path": path,
        "harness": s.harness,
        "lines": s.lines,
        "bad_lines": s.bad_lines,
        "user_turns": s.user_turns,
        "tool_calls": len(s.tool_calls),
        "tool_errors": sum(t.failed for t in s.tool_calls),
        "context": [t.context for t in s.turns],
        "compactions": compactions,
        "score": score(compactions),
    }
