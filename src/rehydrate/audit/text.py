"""The audit as text for a person, every field from a transcript or a path shown clean."""

from __future__ import annotations

from rehydrate.audit import drift
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def shown(value: object) -> str:
    """A field from a transcript or a path as it may be shown: one line, no control, invisible or bidi characters
    (an escape sequence, NUL, CR or a right-to-left override in a file name or a record never reaches a terminal)."""
    return clean(str(value), one_line=True)


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
    if "brief" in c:  # the full audit: whether a rehydrate brief reached the model after it, as the harness kept it
        brief = c["brief"]
        if brief is None:
            out.append(("no rehydrate brief recorded after it", False))
        elif brief["whole"]:
            out.append((f"the rehydrate brief after it reached the model whole (line {brief['line']:,})", False))
        else:
            out.append((f"the rehydrate brief after it was cut: its ledger is missing (line {brief['line']:,})", True))
    return out


# How each kind of fact is named in the text and on the page
KIND_NAMES = {
    "task": "tasks",
    "edited": "edited files",
    "failed": "failed commands",
    "request": "last requests",
    "number": "ids and numbers",
}


# One fact of each kind, named in the lists of what neither kept
FACT_NAMES = {
    "task": "task",
    "edited": "edited file",
    "failed": "failed command",
    "request": "request",
    "number": "id or number",
}


def loss_rows(totals: dict[str, Any]) -> list[tuple[str, int, int, int]]:
    """A loss report's totals as rows (name, facts, kept by the summary, carried by the capture), the kinds that
    have facts only: the text and the page show the same rows."""
    rows = []
    for kind, name in KIND_NAMES.items():
        t = totals["by_kind"][kind]
        if t["facts"]:
            rows.append((name, t["facts"], t["kept_by_summary"], t["carried_by_capture"]))
    return rows


def lost_by_both(loss: dict[str, Any], most: int) -> list[dict[str, Any]]:
    """The facts that neither the summary nor the capture kept, at most `most`."""
    return [f for f in loss["facts"] if not f["kept_by_summary"] and not f["carried_by_capture"]][:most]


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def loss_lines(loss: dict[str, Any] | None) -> list[str]:
    """A compaction's loss report as lines for a person: a short table, then what neither kept."""
    if loss is None:
        return ["what stood before it: not read (the file changed or went away)"]
    rows = loss_rows(loss["totals"])
    if not rows:
        return ["what stood before it: no task, edit, failed command, request or number found"]
    summary = "the summary keeps" if loss["summary"] is not None else "no summary in the transcript"
    out = [f"{'what stood before it':<22}{'facts':>6}  {summary:>18}  {'the capture carries':>20}"]
    out += [f"  {name:<20}{n:>6}  {kept:>18}  {carried:>20}" for name, n, kept, carried in rows]
    for f in lost_by_both(loss, 3):
        out.append(f"  lost by both: {FACT_NAMES[f['kind']]} {shown(f['text'])}")
    if loss["capture"]["error"]:
        out.append(f"  the capture failed: {shown(loss['capture']['error'])}")
    return out


def totals_lines(summary: dict[str, Any]) -> list[str]:
    """The loss totals over every compaction, overall and by harness, and the format drift."""
    lines = []
    t = summary.get("loss")
    if t is not None and t["facts"]:
        lines.append(
            f"facts standing at a compaction: {t['facts']}; kept by the harness's summary: {t['kept_by_summary']} "
            f"({percent(t['kept_by_summary'], t['facts'])}); carried by rehydrate's capture: "
            f"{t['carried_by_capture']} ({percent(t['carried_by_capture'], t['facts'])})"
        )
        for harness, h in t["by_harness"].items():
            lines.append(
                f"  {shown(harness)}: {h['facts']} facts, summary {h['kept_by_summary']} "
                f"({percent(h['kept_by_summary'], h['facts'])}), capture {h['carried_by_capture']} "
                f"({percent(h['carried_by_capture'], h['facts'])})"
            )
        lines.append(
            "  by kind: "
            + "; ".join(f"{name} {n}: summary {kept}, capture {carried}" for name, n, kept, carried in loss_rows(t))
        )
    versions = summary.get("drift")
    if versions is not None:
        drifted = [v for v in versions if v["unknown"]]
        if drifted:
            lines.append("format drift (what rehydrate's transcript readers do not know, by harness version):")
            lines += [f"  {drift.line(v, shown)}" for v in drifted]
        known = len(versions) - len(drifted)
        if known or not drifted:
            lines.append(f"format drift: nothing unknown in {'the other ' if drifted else ''}{known} version(s)")
    return lines


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
            if "loss" in c:
                lines += [f"    {line}" for line in loss_lines(c["loss"])]
    summary = data["summary"]
    lines.append(
        f"{summary['files']} file(s), {summary['sessions']} session(s), {summary['compactions']} compaction(s)"
        + (f", {len(data['errors'])} unreadable" if data["errors"] else "")
    )
    lines += totals_lines(summary)
    if summary["ranked"]:
        lines.append("most symptoms after a compaction:")
        lines += [f"  {r['score']:>4}  {shown(r['path'])}" for r in summary["ranked"][:10]]
    for e in data["errors"]:
        lines.append(f"unreadable: {shown(e['path'])}: {shown(e['message'])}")
    return "\n".join(lines) + "\n"
