"""The brief a fresh context reads first: pure rendering, in boot order, within a character budget.

Order: header, goal (00), decisions and rejected approaches (10), handoff (20), other NN_*.md, next (99), the WAL's
last line, the ledger. When something must give, the least important goes first (the last WAL line, the other files,
the oldest decisions, then the handoff's end) and the brief says what it left out and where to read it. The goal,
the rejected approaches and the next action are never dropped; only if they alone overflow are they shortened,
with a pointer to the file.
"""

from __future__ import annotations

from rehydrate import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Finding

DEFAULT_BUDGET = 9000
MIN_BUDGET = 1000
_HEADER_LINES = {ln for ln in layout.INVARIANTS_HEADER.split("\n") if ln.strip()}


class BriefInput:
    """What goes into a brief; `render` turns it into bounded text."""

    def __init__(
        self,
        folder: str,
        actor: str,
        goal: str | None,
        invariants: str | None,
        handoff: str | None,
        extras: list[tuple[str, str]],
        next: str | None,
        last_record: str | None,
        findings: list[Finding],
        confidence: str,
        next_action: str | None,
        preface: str | None = None,
    ) -> None:
        self.folder = folder  # as shown: state
        self.actor = actor
        self.goal = goal
        self.invariants = invariants
        self.handoff = handoff
        self.extras = extras  # (file name, text), lexical order
        self.next = next
        self.last_record = last_record
        self.findings = findings
        self.confidence = confidence
        self.next_action = next_action
        self.preface = preface  # said before everything (for example: a compaction just happened)


class Brief:
    def __init__(self, text: str, omitted: list[str]) -> None:
        self.text = text
        self.omitted = omitted


def _clip(text: str, limit: int, where: str) -> str:
    if len(text) <= limit:
        return text
    note = f"\n[... cut at {limit:,} of {len(text):,} characters; read {where} for the rest]"
    return text[: max(0, limit - len(note))].rstrip() + note


def _split_invariants(text: str) -> tuple[list[str], list[str]]:
    decisions: list[str] = []
    rejected: list[str] = []
    for line in text.split("\n"):
        if not line.strip() or line in _HEADER_LINES or line.startswith("#"):
            continue
        (rejected if layout.entry_id(line) and line[2] == "R" else decisions).append(line)
    return decisions, rejected


def _checkpoint_title(next_text: str | None) -> str:
    first = (next_text or "").split("\n", 1)[0]
    if first.startswith("# Next (") and first.endswith(")"):
        return first[len("# Next (") : -1]
    return "no checkpoint readable"


class _Parts:
    """What the brief holds, as it is cut down to fit."""

    def __init__(
        self,
        goal: str,
        rejected: list[str],
        decisions: list[str],
        handoff: str,
        extras: list[tuple[str, str]],
        next: str,
        last_record: str,
        ledger: list[str],
    ) -> None:
        self.goal = goal
        self.rejected = rejected
        self.decisions = decisions
        self.handoff = handoff
        self.extras = extras
        self.next = next
        self.last_record = last_record
        self.ledger = ledger
        self.omitted: list[str] = []


def _compose(inp: BriefInput, p: _Parts) -> str:
    f = inp.folder
    preface = (layout.clean(inp.preface) + "\n\n") if inp.preface else ""
    head = f"# rehydrate brief: {f}/ · actor {inp.actor} · {_checkpoint_title(inp.next)}"
    intro = "Disk is the source of truth, not the conversation: where your memory disagrees with this, trust this."
    parts = [preface + head, intro, f"## Goal ({f}/{layout.GOAL})\n{p.goal}"]
    inv = []
    if p.rejected:
        inv.append("Rejected approaches (never retry these):\n" + "\n".join(p.rejected))
    if p.decisions:
        inv.append("Decisions:\n" + "\n".join(p.decisions))
    parts.append(f"## Decisions and rejected approaches ({f}/{layout.INVARIANTS})\n" + ("\n".join(inv) or "(none yet)"))
    if p.handoff:
        parts.append(f"## Handoff ({f}/{layout.HANDOFF})\n{p.handoff}")
    for name, text in p.extras:
        parts.append(f"## {f}/{name}\n{text}")
    parts.append(f"## Next ({f}/{layout.NEXT})\n{p.next}")
    if p.last_record:
        parts.append(f"## Last WAL record ({f}/{layout.WAL_DIR}/{inp.actor}.jsonl)\n{p.last_record}")
    if p.omitted:
        parts.append("## Left out to fit the budget\n" + "; ".join(p.omitted))
    parts.append("## Ledger\n" + "\n".join(p.ledger))
    return "\n\n".join(parts) + "\n"


def render(inp: BriefInput, budget: int = DEFAULT_BUDGET) -> Brief:
    """The brief as text, at most `budget` characters."""
    f = inp.folder
    goal = layout.clean(inp.goal or "") or f"(missing: {f}/{layout.GOAL})"
    if goal.startswith("# Goal\n"):
        goal = goal[len("# Goal\n") :].lstrip("\n").replace("\n\n## Done when\n\n", "\n\nDone when: ")
    decisions, rejected = _split_invariants(layout.clean(inp.invariants or ""))
    ledger = [f"- {x.check}: {x.status}: {layout.clean(x.message, one_line=True)}" for x in inp.findings]
    ledger.append(f"confidence: {inp.confidence}")
    if inp.next_action:
        ledger.append(f"next safe action: {layout.clean(inp.next_action, one_line=True)}")
    p = _Parts(
        goal=goal,
        rejected=rejected,
        decisions=decisions,
        handoff=layout.clean(inp.handoff) if inp.handoff else "",
        extras=[(name, layout.clean(text)) for name, text in inp.extras],
        next=layout.clean(inp.next or "") or f"(missing: {f}/{layout.NEXT})",
        last_record=_clip(layout.clean(inp.last_record or "", one_line=True), 1200, f"{f}/{layout.WAL_DIR}/"),
        ledger=ledger,
    )

    def over() -> int:
        return len(_compose(inp, p)) - budget

    # What gives first: the last WAL record, the other files (last first), the oldest decisions, the handoff's end.
    if over() > 0 and p.last_record:
        p.last_record = ""
        p.omitted.append(f"the last WAL record (tail -n 1 {f}/{layout.WAL_DIR}/{inp.actor}.jsonl)")
    while over() > 0 and p.extras:
        name, body = p.extras.pop()
        p.omitted.append(f"{f}/{name} ({len(body):,} characters)")
    if over() > 0 and p.decisions:
        total = len(p.decisions)
        p.omitted.append("")
        while over() > 0 and p.decisions:
            excess = over()
            while p.decisions and excess > 0:
                excess -= len(p.decisions.pop(0)) + 1
            p.omitted[-1] = f"{total - len(p.decisions)} older decision(s) in {f}/{layout.INVARIANTS}"
    if over() > 0 and p.handoff:
        keep = len(p.handoff) - over() - 120
        p.handoff = _clip(p.handoff, keep, f"{f}/{layout.HANDOFF}") if keep > 200 else ""
        if not p.handoff:
            p.omitted.append(f"{f}/{layout.HANDOFF}")
    # Only the never-dropped parts are left: shorten them, each with a pointer to its file.
    if over() > 0 and len(p.rejected) > 1:
        note = f"[... older rejected approaches: read {f}/{layout.INVARIANTS}]"
        newest = list(p.rejected)
        while over() > 0 and len(newest) > 1:
            newest.pop(0)
            p.rejected = [note, *newest]
    if over() > 0 and len(p.goal) > 150:
        p.goal = _clip(p.goal, max(150, len(p.goal) - over()), f"{f}/{layout.GOAL}")
    if over() > 0 and len(p.next) > 200:
        p.next = _clip(p.next, max(200, len(p.next) - over()), f"{f}/{layout.NEXT}")
    if over() > 0:
        p.ledger = [_clip(line, 160, "`rehydrate verify`") for line in p.ledger]
    out = _compose(inp, p)
    if len(out) > budget:  # a budget too small for the essentials: keep the start and the ledger's end
        tail = "\n".join(p.ledger[-2:]) + "\n"
        out = (_clip(out[: budget - len(tail)], budget - len(tail), f + "/") + tail)[:budget]
    return Brief(out, list(p.omitted))
