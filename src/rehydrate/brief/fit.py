"""Fitting the brief to its budget: the knobs of the plan turned, least important first, each only as far as needed;
then what the last step freed beyond its need is given back, the most important first."""

from __future__ import annotations

from rehydrate.brief.compose import compose
from rehydrate.brief.fence import within_budget
from rehydrate.brief.plan import ENTRY_MIN, REJECTED_CAP

TASKS_LEAST = 200  # the task list is shown from this many characters of its quoted text, or left out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from rehydrate.brief.plan import Draft, Plan


class _Fit:
    def __init__(self, d: Draft, p: Plan, budget: int, max_bytes: int | None) -> None:
        self.d, self.p, self.budget, self.max_bytes = d, p, budget, max_bytes
        self.rej_max = max((len(e.line) + 3 for e in d.rejected), default=0)

    def fits(self) -> bool:
        return within_budget(compose(self.d, self.p)[0], self.budget, self.max_bytes)

    def set(self, name: str, value: object) -> bool:
        """Set a knob; fits?"""
        setattr(self.p, name, value)
        return self.fits()

    def shrink(self, name: str, lo: int, hi: int, drop: int | None = None) -> bool:
        """Set the knob to the largest value in [lo, hi] that fits (lo if none does, or drop if given); fits?"""
        if not self.set(name, lo):
            return self.set(name, drop) if drop is not None else False
        while hi - lo > 1:  # lo fits; hi, the value before, did not
            mid = (lo + hi) // 2
            if self.set(name, mid):
                lo = mid
            else:
                hi = mid
        setattr(self.p, name, lo)
        return True

    def essentials(self, rejected: int, goal: int, nxt: int, preface: int, action: int) -> bool:
        """The parts that are never dropped, each shortened to at most its floor if needed; fits?"""
        d, p = self.d, self.p
        return (
            self.shrink("rejected_cap", rejected, p.rejected_cap or self.rej_max)
            or self.shrink("goal", goal, p.goal or len(d.goal_body))
            or self.shrink("next", nxt, p.next or len(d.next_body))
            or self.shrink("preface", preface, p.preface or len(d.preface.text))
            or self.shrink("action", action, p.action or len(d.action))
        )

    def capture(self, lo: int) -> bool:
        """The capture's quoted text down to lo characters, only as far as needed; fits?"""
        if self.d.capture is None:
            return False
        now = self.p.capture if self.p.capture is not None else self.d.capture.full
        return now > lo and self.shrink("capture", lo, now)

    def tasks(self, lo: int) -> bool:
        """The task list's quoted text down to lo characters (0: left out), only as far as needed; fits?"""
        if not self.d.tasks_body:
            return False
        now = self.p.tasks if self.p.tasks is not None else len(self.d.tasks_body)
        return now > lo and self.shrink("tasks", lo, now)

    def steps(self) -> list[Callable[[], bool]]:
        """The drop order."""
        d, p = self.d, self.p
        tails = len(d.handoff_tail)
        quarter = min(self.budget, self.max_bytes or self.budget) // 4
        return [
            lambda: self.set("record", False),
            lambda: self.set("howto", False),
            lambda: self.shrink("extras", 0, p.extras),
            # a handoff too long to read whole (its start and end shown) gives its middle down to a quarter of the
            # budget before the newest decisions give way
            lambda: bool(d.handoff_tail) and self.shrink("handoff", quarter, len(d.handoff_body) + tails),
            lambda: self.capture(1500),  # the capture before the compaction: down to 1,500 characters of its text
            lambda: self.tasks(quarter),  # the task list: its done items, then its last open ones, to a quarter
            lambda: self.shrink("decisions", 0, p.decisions),
            lambda: self.shrink("handoff", 200, p.handoff or len(d.handoff_body) + tails, drop=0),
            lambda: self.set("ledger", 1),
            lambda: self.capture(400),  # the task list, then the last user message
            lambda: self.tasks(600),
            lambda: self.essentials(400, 400, 400, 600, 600),
            lambda: self.set("ledger", 2),
            lambda: self.essentials(160, 200, 200, 300, 300),
            lambda: self.set("ledger", 3),
            lambda: self.set("terse", True),  # (the deferred note goes too)
            lambda: d.capture is not None and self.set("capture", 0),  # named under "Left out"
            lambda: bool(d.tasks_body) and self.set("tasks", 0),  # named under "Left out", with its file
            lambda: bool(d.quotes) and self.set("quotes", False),  # named under "Left out": recover prints them
            lambda: self.essentials(ENTRY_MIN, 80, 80, 120, 100),
            lambda: self.shrink("head", 40, p.head or 120),
            lambda: self.set("ledger", 4),
            lambda: self.shrink("rejected_cap", 0, p.rejected_cap or self.rej_max),  # ids, each with an ellipsis
            lambda: self.shrink("rejected", 0, p.rejected),  # the last resort: the oldest named by an id range
        ]

    def give_back(self) -> None:
        """The step that made it fit may have freed more than it needed: give it back, the most important first."""
        d, p = self.d, self.p
        if not p.quotes and not self.set("quotes", True):
            p.quotes = False
        for name, value in (("ledger", 0), ("terse", False), ("ledger", 1), ("ledger", 2), ("ledger", 3)):
            now = getattr(p, name)
            if value < now and not self.set(name, value):
                setattr(p, name, now)
        full = {
            "action": len(d.action),
            "rejected_cap": min(self.rej_max, REJECTED_CAP),
            "goal": len(d.goal_body),
            "next": len(d.next_body),
            "preface": len(d.preface.text),
            "head": max(len(d.path), len(d.title)),
        }
        for name, most in full.items():
            now = getattr(p, name)
            if now is not None and now < most and not self.set(name, most):
                self.shrink(name, now, most)
        now = p.tasks
        if now is not None and now < len(d.tasks_body):  # from 200 characters of its text up, or not at all
            lo = max(now, min(TASKS_LEAST, len(d.tasks_body)))
            if lo == now or self.set("tasks", lo):
                self.shrink("tasks", lo, len(d.tasks_body) + 1)
            else:
                p.tasks = now
        cap, whole = p.capture, d.capture.full if d.capture is not None else 0
        if cap is not None and cap < whole:  # the capture last, from 400 characters of its text up (or not at all)
            lo = max(cap, min(400, whole))
            if lo == cap or self.set("capture", lo):
                self.shrink("capture", lo, whole + 1)
            else:
                p.capture = cap
        if not p.howto and not self.set("howto", True):
            p.howto = False


def fit(d: Draft, p: Plan, budget: int, max_bytes: int | None = None) -> None:
    """Turn the knobs, least important first, each only as far as needed."""
    f = _Fit(d, p, budget, max_bytes)
    if f.fits():
        return
    for step in f.steps():
        if step():
            f.give_back()
            return
