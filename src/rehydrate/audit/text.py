"""The audit as text for a person, every field from a transcript or a path shown clean."""

from __future__ import annotations

from rehydrate.store import views

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def shown(value: object) -> str:
    """A field from a transcript or a path as it may be shown: one line, no control, invisible or bidi characters
    (an escape sequence, NUL, CR or a right-to-left override in a file name or a record never reaches a terminal)."""
    return views.clean(str(value), one_line=True)


def symptom_lines(c: dict[str, Any], show: Callable[[object], str], files: int) -> list[tuple[str, bool]]:
    """What followed a compaction c, a line each (fields from the transcript through show, at most `files` files
    named), with whether it suggests lost context: the text and the page show the same lines."""
    out = []
    if c["files_edited_again"]:
        out.append((f"edited again after it: {', '.join(show(f) for f in c['files_edited_again'][:files])}", True))
    if c["repeated_calls"]:
        out.append((f"identical tool calls repeated after it: {c['repeated_calls']}", True))
    out.append((f"tool errors: {c['errors_before']} before, {c['errors_after']} after", False))
    if c["turns_before_first_edit"] is not None:
        out.append((f"model turns before the first edit after it: {c['turns_before_first_edit']}", False))
    return out


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
            lines += [f"    {line}" for line, _bad in symptom_lines(c, shown, 8)]
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
