"""The ledger: the checks' findings summed up by code into a verdict and one next safe action (or one question).

One code path for `rehydrate resume`'s brief, the hooks' briefs and `rehydrate recover`: each calls `summarize` on
the findings of `checks.run_all` and shows its result; none chooses a next action of its own.

Contract of `summarize(findings, *, checkpoint_next, goal_present, deferred=()) -> Ledger`:
- degraded: the checks with a degraded, failed or skipped finding, each once, in the findings' order (the ledger's
  order). confidence: "recovered" when there is none, else "degraded (a, b)". ok and n/a never degrade.
- next: the `next_action` of the first degraded or failed finding that has one (a BACKGROUND check's, handoff's,
  only when no other has one: work since the checkpoint says more than an old note); else `checkpoint_next` (the last
  checkpoint's next step, verbatim); else, when goal_present, GOAL_FIRST; else None. A skipped finding never sets
  next: its own next stays on its line.
- ask: only when next is None: the first `ask` of a degraded or failed finding, else identity's, else ASK_TASK. So
  exactly one of next and ask is set.
- deferred: what hook scope left to `recover` (e.g. ["PR and CI (gh)", "1 user check"]); the note is None when
  nothing was.

`Ledger.as_json()` is the shape `rehydrate recover --json` prints besides "version", "command" and "ok" (pinned by
tests/checks/test_checks.py): {"confidence": "recovered"|"degraded", "degraded": [names], "checks": [{"name",
"status", "finding", "next"}], "next": str, "ask": str|null, "quotes": [{"ref", "what", "source", "text"}]}; "next" is
"stop and ask: " + ask when only ask is set. A finding's text names what it quotes by reference (Q1): "quotes" holds
them, in order (checks.Quote).
`rehydrate recover` (cli/recover.py) adds "ok" (true iff recovered) and exits 0 when recovered, 1 when
degraded, 3 when the state does not load (the ledger still printed: identity failed, and for an empty folder the
ask), 2 on a usage error (the usual error shape). It writes nothing: no record, no repair written back.
"""

from __future__ import annotations

from rehydrate.checks import DEGRADED, FAILED, LOWERING, number
from rehydrate.text import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rehydrate.checks import Finding

GOAL_FIRST = "read the goal and write a first checkpoint"
ASK_TASK = "What is the task? state/00_goal.md is missing or empty and no checkpoint names a next step"
ASK_PREFIX = "stop and ask: "
CONTRADICTING = (DEGRADED, FAILED)  # the statuses whose next action replaces the checkpoint's
BACKGROUND = ("handoff",)  # its step ("read the old note as background, then go on") yields to any other check's


class Ledger:
    """The summed-up ledger (see the module's docstring): findings in order, confidence, degraded check names, the
    next safe action or the question for a human, and the deferred note (hook scope)."""

    def __init__(
        self,
        findings: list[Finding],
        confidence: str,
        degraded: list[str],
        next: str | None,
        ask: str | None,
        deferred: str | None,
    ) -> None:
        self.findings = findings
        self.confidence = confidence
        self.degraded = degraded
        self.next = next
        self.ask = ask
        self.deferred = deferred
        self.quotes = [q for f in self.findings for q in f.quotes]  # numbered by summarize, in this order

    def said(self, text: str | None) -> str | None:
        """text (the next action, a finding's line) with each quote it names in its place, as an inline quotation
        (text.quoted): for a reader that wants one line (a test, a log), never for the brief, which keeps them
        apart."""
        if text is None:
            return None

        for quote in reversed(self.quotes):  # Q10 before Q1
            text = text.replace(quote.ref, quoted(quote.text))
        return text

    @property
    def recovered(self) -> bool:
        return not self.degraded

    def as_json(self) -> dict[str, Any]:
        return {
            "confidence": "recovered" if self.recovered else "degraded",
            "degraded": list(self.degraded),
            "checks": [f.as_ledger() for f in self.findings],
            "next": self.next if self.next is not None else ASK_PREFIX + (self.ask or ASK_TASK),
            "ask": None if self.next is not None else self.ask or ASK_TASK,
            "quotes": [q.as_json() for q in self.quotes],
        }


def summarize(
    findings: list[Finding],
    *,
    checkpoint_next: str | None,
    goal_present: bool,
    deferred: Iterable[str] = (),
) -> Ledger:
    """The ledger of these findings (see the module's docstring)."""
    number(findings)  # the references the findings' texts and the ledger's next action name from here on
    degraded: list[str] = []
    for f in findings:
        if f.status in LOWERING and f.check not in degraded:
            degraded.append(f.check)
    confidence = "recovered" if not degraded else f"degraded ({', '.join(degraded)})"
    # only a finding that contradicts the checkpoint replaces its next step: a skipped one lowers the confidence
    # (an unlooked place is not a clean one) but knows nothing that would say what to do instead
    against = [f for f in findings if f.status in CONTRADICTING]
    against.sort(key=lambda f: f.check in BACKGROUND)  # stable: a background check's step only when no other has one
    step = next((f.next_action for f in against if f.next_action), None)
    if step is None:
        step = checkpoint_next or (GOAL_FIRST if goal_present else None)
    ask = None
    if step is None:
        ask = next((f.ask for f in against if f.ask), None)
        ask = ask or next((f.ask for f in findings if f.check == "identity" and f.ask), None) or ASK_TASK
    left = list(deferred)
    note = f"not run at session start: {', '.join(left)}: `rehydrate recover` runs them" if left else None
    return Ledger(list(findings), confidence, degraded, step, ask, note)
