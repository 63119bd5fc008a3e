"""Recovery checks: each answers one question and returns findings; the ledger sums them up.

A check is any object with a ``name`` and ``run(context) -> list[Finding]``. Built-in checks sit in the static
registry below; later issues add theirs to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rehydrate.state import Outcome, State

STATUSES = ("ok", "degraded", "skipped", "failed")


@dataclass
class Finding:
    check: str
    status: str  # one of STATUSES
    message: str
    next_action: str | None = None


@dataclass
class Context:
    state: State | None
    reconciled: Outcome | None  # None when the state could not be read
    error: str | None = None
    views: dict[str, str | None] = field(default_factory=dict)


class Check(Protocol):
    name: str

    def run(self, context: Context) -> list[Finding]: ...


def registry() -> list[Check]:
    from rehydrate.checks.identity import IdentityCheck
    from rehydrate.checks.state import StateCheck

    return [IdentityCheck(), StateCheck()]


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
