"""The brief a fresh context reads first: pure rendering, in boot order, within a character budget.

Order: header, goal (00), decisions and rejected approaches (10), handoff (20), other NN_*.md, next (99), the WAL's
last line, the ledger. When something must give, the least important goes first (the last WAL line, the other files,
the oldest decisions, then the handoff's end) and the brief says what it left out and where to read it. The goal,
the rejected approaches and the next action are never dropped; only if they alone overflow are they shortened,
with a pointer to the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rehydrate import layout
from rehydrate.checks import Finding

DEFAULT_BUDGET = 9000
MIN_BUDGET = 1000
_HEADER_LINES = {ln for ln in layout.INVARIANTS_HEADER.split("\n") if ln.strip()}


@dataclass
class BriefInput:
    folder: str  # as shown: state
    actor: str
    goal: str | None
    invariants: str | None
    handoff: str | None
    extras: list[tuple[str, str]]  # (file name, text), lexical order
    next: str | None
    last_record: str | None
    findings: list[Finding]
    confidence: str
    next_action: str | None
    preface: str | None = None  # said before everything (for example: a compaction just happened)


@dataclass
class Brief:
    text: str
    omitted: list[str] = field(default_factory=list)


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


def render(inp: BriefInput, budget: int = DEFAULT_BUDGET) -> Brief:
    """The brief as text, at most `budget` characters."""
    f = inp.folder
    clean = {
        "goal": layout.clean(inp.goal or "") or f"(missing: {f}/{layout.GOAL})",
        "next": layout.clean(inp.next or "") or f"(missing: {f}/{layout.NEXT})",
        "handoff": layout.clean(inp.handoff) if inp.handoff else "",
    }
    decisions, rejected = _split_invariants(layout.clean(inp.invariants or ""))
    extras = [(name, layout.clean(text)) for name, text in inp.extras]
    last = layout.clean(inp.last_record or "", one_line=True)
    if clean["goal"].startswith("# Goal\n"):
        clean["goal"] = clean["goal"][len("# Goal\n") :].lstrip("\n").replace("\n\n## Done when\n\n", "\n\nDone when: ")
    omitted: list[str] = []

    head = f"# rehydrate brief: {f}/ · actor {inp.actor} · {_checkpoint_title(inp.next)}"
    intro = "Disk is the source of truth, not the conversation: where your memory disagrees with this, trust this."
    preface = (layout.clean(inp.preface) + "\n\n") if inp.preface else ""

    ledger_lines = [f"- {x.check}: {x.status}: {layout.clean(x.message, one_line=True)}" for x in inp.findings]
    ledger_lines.append(f"confidence: {inp.confidence}")
    if inp.next_action:
        ledger_lines.append(f"next safe action: {layout.clean(inp.next_action, one_line=True)}")

    def compose(goal: str, rej: list[str], dec: list[str], handoff: str, ext: list[tuple[str, str]], nxt: str,
                wal_line: str, ledger: list[str]) -> str:
        parts = [preface + head, intro, f"## Goal ({f}/{layout.GOAL})\n{goal}"]
        inv = []
        if rej:
            inv.append("Rejected approaches (never retry these):\n" + "\n".join(rej))
        if dec:
            inv.append("Decisions:\n" + "\n".join(dec))
        parts.append(f"## Decisions and rejected approaches ({f}/{layout.INVARIANTS})\n" + ("\n".join(inv) or "(none yet)"))
        if handoff:
            parts.append(f"## Handoff ({f}/{layout.HANDOFF})\n{handoff}")
        for name, text in ext:
            parts.append(f"## {f}/{name}\n{text}")
        parts.append(f"## Next ({f}/{layout.NEXT})\n{nxt}")
        if wal_line:
            parts.append(f"## Last WAL record ({f}/{layout.WAL_DIR}/{inp.actor}.jsonl)\n{wal_line}")
        if omitted:
            parts.append("## Left out to fit the budget\n" + "\n".join(f"- {o}" for o in omitted))
        parts.append("## Ledger\n" + "\n".join(ledger))
        return "\n\n".join(parts) + "\n"

    state = {
        "goal": clean["goal"], "rej": rejected, "dec": decisions, "handoff": clean["handoff"], "ext": extras,
        "nxt": clean["next"], "wal": _clip(last, 1200, f"{f}/{layout.WAL_DIR}/"), "ledger": ledger_lines,
    }

    def text() -> str:
        return compose(state["goal"], state["rej"], state["dec"], state["handoff"], state["ext"], state["nxt"],
                       state["wal"], state["ledger"])  # type: ignore[arg-type]

    out = text()
    if len(out) > budget and state["wal"]:
        state["wal"] = ""
        omitted.append(f"the last WAL record: `tail -n 1 {f}/{layout.WAL_DIR}/{inp.actor}.jsonl`")
        out = text()
    ext_list: list[tuple[str, str]] = list(extras)
    while len(out) > budget and ext_list:
        name, body = ext_list.pop()
        omitted.append(f"{f}/{name} ({len(body):,} characters): read it in full")
        state["ext"] = list(ext_list)
        out = text()
    dec_list: list[str] = list(decisions)
    dropped = 0
    if len(out) > budget and dec_list:
        omitted.append("")  # placeholder, filled below
        while len(out) > budget and dec_list:
            excess = len(out) - budget
            while dec_list and excess > 0:  # drop oldest first
                excess -= len(dec_list.pop(0)) + 1
                dropped += 1
            omitted[-1] = f"{dropped} older decision(s): read {f}/{layout.INVARIANTS}"
            state["dec"] = list(dec_list)
            out = text()
    if len(out) > budget and state["handoff"]:
        keep = max(0, len(str(state["handoff"])) - (len(out) - budget) - 120)
        state["handoff"] = _clip(str(state["handoff"]), keep, f"{f}/{layout.HANDOFF}") if keep > 200 else ""
        if not state["handoff"]:
            omitted.append(f"{f}/{layout.HANDOFF}: read it in full")
        out = text()
    # Only the never-dropped parts are left: shorten them, each with a pointer to its file.
    if len(out) > budget:
        share = max(200, (budget - 1500) // 3)
        state["goal"] = _clip(str(state["goal"]), share, f"{f}/{layout.GOAL}")
        state["nxt"] = _clip(str(state["nxt"]), share, f"{f}/{layout.NEXT}")
        out = text()
    rej_list: list[str] = list(rejected)
    if len(out) > budget and rej_list:
        note = f"[... older rejected approaches: read {f}/{layout.INVARIANTS}]"
        while len(out) > budget and len(rej_list) > 1:
            rej_list.pop(0)
            state["rej"] = [note] + rej_list
            out = text()
    if len(out) > budget:
        out = _clip(out, budget, f + "/")
    return Brief(out, [o for o in omitted if o])
