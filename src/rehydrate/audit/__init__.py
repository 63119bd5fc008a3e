"""`rehydrate audit`: every compaction in a set of transcripts, and what followed it that suggests lost context.

For each compaction: the context's size before and after it, and the symptoms in the calls after it (up to the next
compaction) compared with the calls before it: files edited again that had been edited before, identical tool calls
repeated, tool errors on each side, and how many model turns passed before the first edit. Sessions are ranked by
these symptoms.
"""

from __future__ import annotations

import datetime
import os
import sys

from rehydrate import transcripts
from rehydrate.store import views

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "write_file", "replace"}
JSON_VERSION = 1


def discover(paths: list[str], all_: bool, since: str | None) -> tuple[list[str], list[dict[str, str]]]:
    """The transcript files to read: each PATH (a file, or every .jsonl under a folder), and with all_ the user's
    Claude Code projects and Codex sessions. since (YYYY-MM-DD) keeps files modified on or after that day."""
    found: list[str] = []
    errors: list[dict[str, str]] = []
    roots = list(paths)
    if all_:
        claude = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
        codex = os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
        roots += [p for p in (os.path.join(claude, "projects"), os.path.join(codex, "sessions")) if os.path.isdir(p)]
    for root in roots:
        if os.path.isfile(root):
            found.append(root)
        elif os.path.isdir(root):
            for folder, _dirs, files in os.walk(root, onerror=lambda e: errors.append(_error(e.filename, e))):
                found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".jsonl")]
        else:
            errors.append({"path": root, "message": "no such file or folder"})
    if since:
        try:
            day = datetime.datetime.strptime(since, "%Y-%m-%d").replace(tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            from rehydrate.errors import UsageError

            raise UsageError(f"--since {since!r} is not a date", "use YYYY-MM-DD") from None
        found = [f for f in found if _mtime(f) >= day]
    return sorted(dict.fromkeys(found)), errors


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _error(path: str | None, e: BaseException) -> dict[str, str]:
    return {"path": str(path), "message": str(getattr(e, "strerror", None) or e)}


def symptoms(session: transcripts.Session) -> list[dict[str, Any]]:
    """Each compaction with what followed it."""
    out = []
    marks = [c.line for c in session.compactions] + [session.lines + 1]
    for i, c in enumerate(session.compactions):
        before = [t for t in session.tool_calls if t.line < c.line]
        after = [t for t in session.tool_calls if c.line < t.line < marks[i + 1]]
        edited_before = {f for t in before if t.name in EDIT_TOOLS for f in t.files}
        edited_again = sorted({f for t in after if t.name in EDIT_TOOLS for f in t.files} & edited_before)
        keys_before = {t.key for t in before}
        repeated = [t for t in after if t.key in keys_before]
        first_edit = next((t.line for t in after if t.name in EDIT_TOOLS), None)
        turns = [t for t in session.turns if c.line < t.line < marks[i + 1]]
        out.append(
            {
                **c.as_dict(),
                "turn": sum(1 for t in session.turns if t.line < c.line),  # model turns before it
                "files_edited_again": edited_again,
                "repeated_calls": len(repeated),
                "repeated_examples": sorted({t.key[:160] for t in repeated})[:5],
                "errors_before": sum(t.failed for t in before),
                "errors_after": sum(t.failed for t in after),
                "turns_before_first_edit": None if first_edit is None else sum(t.line < first_edit for t in turns),
            }
        )
    return out


def score(compactions: list[dict[str, Any]]) -> int:
    return sum(int(3 * len(c["files_edited_again"]) + c["repeated_calls"] + c["errors_after"]) for c in compactions)


def report(paths: list[str], progress: bool = False) -> dict[str, Any]:
    """The audit of these files, as the JSON object `rehydrate audit --json` prints."""
    sessions: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    for n, path in enumerate(paths, 1):
        if progress:
            sys.stderr.write(f"\r[{n}/{len(paths)}] {shown(os.path.basename(path))[:60]:<60}")
            sys.stderr.flush()
        try:
            s = transcripts.read(path)  # a FIFO, a device or a folder is refused: "not a regular file"
        except OSError as e:
            errors.append(_error(path, e))
            continue
        if s.harness not in ("claude", "codex"):
            continue
        compactions = symptoms(s)
        sessions.append(
            {
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
        )
    if progress:
        sys.stderr.write("\r" + " " * 72 + "\r")
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


def shown(value: object) -> str:
    """A field from a transcript or a path as it may be shown: one line, no control, invisible or bidi characters
    (an escape sequence, NUL, CR or a right-to-left override in a file name or a record never reaches a terminal)."""
    return views.clean(str(value), one_line=True)


def render(data: dict[str, Any]) -> str:
    """The report as text for a person. Every field that came from a transcript or a path passes through shown()."""
    lines = []
    for s in data["sessions"]:
        if not s["compactions"]:
            continue
        sizes = [c for c in s["context"] if c]
        peak = f", peak context {max(sizes):,} tokens" if sizes else ""
        lines.append(
            f"{shown(s['path'])} ({shown(s['harness'])}, {s['user_turns']} user turns, {s['tool_calls']} tool calls"
            f"{peak})"
        )
        for c in s["compactions"]:
            before = f"{c['tokens_before']:,}" if c["tokens_before"] is not None else "?"
            after = f"{c['tokens_after']:,}" if c["tokens_after"] is not None else "?"
            when = shown((c["time"] or "")[:16].replace("T", " "))
            trigger = shown(c["trigger"]) if c["trigger"] else "trigger unknown"
            lines.append(f"  compaction ({trigger}) at line {c['line']} {when}: {before} -> {after} tokens")
            if c["files_edited_again"]:
                lines.append(f"    edited again after it: {', '.join(shown(f) for f in c['files_edited_again'][:8])}")
            if c["repeated_calls"]:
                lines.append(f"    identical tool calls repeated after it: {c['repeated_calls']}")
            lines.append(f"    tool errors: {c['errors_before']} before, {c['errors_after']} after")
            if c["turns_before_first_edit"] is not None:
                lines.append(f"    model turns before the first edit after it: {c['turns_before_first_edit']}")
    summary = data["summary"]
    lines.append(
        f"{summary['files']} file(s), {summary['sessions']} session(s), {summary['compactions']} compaction(s)"
        + (f", {len(data['errors'])} unreadable" if data["errors"] else "")
    )
    if summary["ranked"]:
        lines.append("most symptoms after a compaction:")
        lines += [f"  {r['score']:>4}  {shown(r['path'])}" for r in summary["ranked"][:10]]
    for e in data["errors"]:
        lines.append(f"unreadable: {shown(e['path'])}: {shown(e['message'])}")
    return "\n".join(lines) + "\n"
