"""What followed each compaction of a session that suggests lost context, and a session's score by it."""

from __future__ import annotations

from rehydrate.transcripts import claude, codex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.transcripts.model import Session

# The tools that edit files, in the transcripts the audit reads (each format names its own)
EDIT_TOOLS = (*claude.EDIT_TOOLS, *codex.EDIT_TOOLS)


def symptoms(session: Session) -> list[dict[str, Any]]:
    """Each compaction with what followed it, up to the next compaction, compared with the calls before it."""
    out = []
    marks = [c.line for c in session.compactions] + [session.lines + 1]
    for i, c in enumerate(session.compactions):
        before = [t for t in session.tool_calls if t.line < c.line]
        after = [t for t in session.tool_calls if c.line < t.line < marks[i + 1]]
        edited_before = {f for t in before if t.name in EDIT_TOOLS for f in t.files}
        edited_again = sorted({f for t in after if t.name in EDIT_TOOLS for f in t.files} & edited_before)
        # identical calls have the same name and files: only those calls' tokens are made (ToolCall.same)
        kinds_before, kinds_after = ({(t.name, *t.files) for t in calls} for calls in (before, after))
        keys_before = {t.same for t in before if (t.name, *t.files) in kinds_after}
        repeated = [t for t in after if (t.name, *t.files) in kinds_before and t.same in keys_before]
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
    """How strongly a session's compactions suggest lost context: files edited again weigh three."""
    return sum(int(3 * len(c["files_edited_again"]) + c["repeated_calls"] + c["errors_after"]) for c in compactions)
