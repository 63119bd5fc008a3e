"""The audit of a set of files: each session read, its compactions' symptoms and losses, the sessions ranked, and
what the readers did not know."""

from __future__ import annotations

import gc
import shutil
import tempfile

from rehydrate import JSON_VERSION
from rehydrate.audit import drift, loss
from rehydrate.audit.discover import unreadable
from rehydrate.audit.symptoms import score, symptoms
from rehydrate.transcripts import reader
from rehydrate.transcripts.delivery import briefs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rehydrate.audit.loss import Capture
    from rehydrate.transcripts.model import Session


def report(
    paths: list[str],
    progress: Callable[[int, int, str], None] | None = None,
    prefilter: bool = True,
    *,
    capture: Capture | None = None,
) -> dict[str, Any]:
    """The audit of these files, as the JSON object `rehydrate audit --json` prints. progress, if given, is called
    before each file is read with its number (from 1), the number of files and its path. Only the records the audit
    uses are looked at past their type (transcripts.reader.read's audit). prefilter: the lines whose bytes show they
    cannot be one (transcripts.claude.read.audited: Claude Code's progress records, 70% of a session's lines) are
    skipped before they are parsed: the same report, except that a line skipped is not counted in bad_lines even if
    it is not JSON (bench/transcripts.py --unfiltered times it off). capture: the PreCompact capture
    (harness.compaction.capture.capture, given by the face: the audit imports nothing of the harnesses); with it, each
    compaction's loss report and the format drift (loss.py, drift.py), read with the tail reader; without it, neither
    is in the report."""
    collecting = gc.isenabled()
    gc.disable()  # what it reads holds no cycles: the cyclic collector would only walk every record kept, often
    scratch = tempfile.mkdtemp(prefix="rehydrate-audit-") if capture else None  # each compaction's prefix, copied
    try:
        sessions, errors = _read(paths, progress, prefilter, scratch, capture)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if collecting:
            gc.enable()
    ranked = sorted((s for s in sessions if s["compactions"]), key=lambda s: -int(s["score"]))
    summary: dict[str, Any] = {
        "files": len(paths),
        "sessions": len(sessions),
        "compactions": sum(len(s["compactions"]) for s in sessions),
        "ranked": [{"path": s["path"], "score": s["score"]} for s in ranked],
    }
    if scratch is not None:
        summary["loss"] = _loss_totals(sessions)
        summary["drift"] = drift.tally(sessions)
    return {
        "version": JSON_VERSION,
        "sessions": sessions,
        "summary": summary,
        "errors": errors,
    }


def _loss_totals(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """The loss reports' totals over every session, and by harness."""
    out = loss.totals([])
    by_harness: dict[str, dict[str, Any]] = {}
    for s in sessions:
        for c in s["compactions"]:
            if c.get("loss") is not None:
                loss.add(out, c["loss"]["totals"])
                loss.add(by_harness.setdefault(s["harness"], loss.totals([])), c["loss"]["totals"])
    out["by_harness"] = dict(sorted(by_harness.items()))
    return out


def _read(
    paths: list[str],
    progress: Callable[[int, int, str], None] | None,
    prefilter: bool,
    scratch: str | None,
    capture: Capture | None,
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    sessions: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    for n, path in enumerate(paths, 1):
        if progress is not None:
            progress(n, len(paths), path)
        try:
            # a FIFO, a device or a folder is refused: "not a regular file"
            s = reader.read(path, audit=True, prefilter=prefilter)
        except OSError as e:
            errors.append(unreadable(path, e))
            continue
        if s.harness in ("claude", "codex"):
            sessions.append(_session(path, s, scratch, capture))
    return sessions, errors


def _session(path: str, s: Session, scratch: str | None, capture: Capture | None) -> dict[str, Any]:
    compactions = symptoms(s)
    extra: dict[str, Any] = {}
    if scratch is not None and capture is not None:
        extra = _losses(path, s, compactions, scratch, capture)
        _briefs(path, s, compactions)
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
        **extra,
    }


def _briefs(path: str, s: Session, compactions: list[dict[str, Any]]) -> None:
    """Into each compaction: the first rehydrate brief the transcript holds after it (before the next compaction),
    {"line", "whole"}, or None; left out when the file cannot be read again."""
    try:
        found = briefs(path)
    except OSError:
        return
    marks = [c.line for c in s.compactions] + [s.lines + 1]
    for i, c in enumerate(compactions):
        after = [b for b in found if marks[i] < b.line < marks[i + 1]]
        c["brief"] = (
            {"line": after[0].line, "whole": any(b.whole for b in after if b.token == after[0].token)}
            if after
            else None
        )


def _losses(path: str, s: Session, compactions: list[dict[str, Any]], scratch: str, capture: Capture) -> dict[str, Any]:
    """Each compaction's loss (into compactions), and the session's version, format drift and loss totals."""
    try:
        found = loss.session(path, s.harness, s.compactions, scratch, capture)
    except OSError as e:  # the file went away or changed since it was read: the rest of the report stands
        for c in compactions:
            c["loss"] = None
        return {"loss": {**loss.totals([]), "error": unreadable(path, e)["message"]}}
    for i, c in enumerate(compactions):
        c["loss"] = found.compactions[i] if i < len(found.compactions) else None
    return {
        "version": found.version,
        "unknown": drift.counted(found.windows),
        "loss": {**loss.totals([f["facts"] for f in found.compactions]), "error": None},
    }
