"""Recovery checks: each answers one question and returns findings; the ledger sums them up.

A check is any object with a ``name`` and ``run(context) -> list[Finding]``. Built-in checks sit in the static
registry below; later issues add theirs to it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Protocol

    from rehydrate.state import Outcome, State

    class Check(Protocol):
        name: str

        def run(self, context: Context) -> list[Finding]: ...


STATUSES = ("ok", "degraded", "skipped", "failed")


class Finding:
    """One line of the ledger: a check's status (one of STATUSES), what it found, what to do next."""

    def __init__(self, check: str, status: str, message: str, next_action: str | None = None) -> None:
        self.check = check
        self.status = status
        self.message = message
        self.next_action = next_action

    def as_dict(self) -> dict[str, str | None]:
        return {"check": self.check, "status": self.status, "message": self.message, "next_action": self.next_action}


class Context:
    """What the checks look at: the opened state and what reconciliation found (None when it could not load)."""

    def __init__(
        self,
        state: State | None,
        reconciled: Outcome | None,
        error: str | None = None,
        views: dict[str, str | None] | None = None,
    ) -> None:
        self.state = state
        self.reconciled = reconciled
        self.error = error
        self.views: dict[str, str | None] = views if views is not None else {}


def registry() -> list[Check]:
    from rehydrate.checks.cursors import CursorsCheck
    from rehydrate.checks.identity import IdentityCheck
    from rehydrate.checks.state import StateCheck

    return [IdentityCheck(), StateCheck(), CursorsCheck()]


def run_all(context: Context, checks: list[Check] | None = None) -> list[Finding]:
    findings: list[Finding] = []
    for check in checks if checks is not None else registry():
        try:
            findings += check.run(context)
        except Exception as e:
            findings.append(Finding(check.name, "failed", f"the check raised {type(e).__name__}: {e}"))
    return findings


def confidence(findings: list[Finding]) -> str:
    bad = []
    for f in findings:
        if f.status in ("degraded", "failed") and f.check not in bad:
            bad.append(f.check)
    return "recovered" if not bad else f"degraded ({', '.join(bad)})"
