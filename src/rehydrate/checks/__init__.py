"""Recovery checks: each answers one question and returns findings; the ledger sums them up.

A check is any object with a ``name`` and ``run(context) -> list[Finding]``. Built-in checks sit in the static
registry below; later issues add theirs to it.
"""

from __future__ import annotations

from rehydrate.store import views as layout

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Protocol

    from rehydrate.store.state import Outcome, State

    class Check(Protocol):
        name: str

        def run(self, context: Context) -> list[Finding]: ...


MAX_MESSAGE = 1000  # a finding's message is one line of the ledger: it says what was found and where, briefly


class Finding:
    """One line of the ledger: a check's status (ok, degraded, skipped or failed), what it found, what to do next.

    A message can quote what the check read (a changed latch line, a file name): it is kept to one clean line (no
    control or invisible characters, no line breaks, at most MAX_MESSAGE characters), so that it can never start a
    line of its own in the brief or on a terminal."""

    def __init__(self, check: str, status: str, message: str, next_action: str | None = None) -> None:
        self.check = _line(check, 64)
        self.status = _line(status, 16)
        self.message = _line(message, MAX_MESSAGE)
        self.next_action = None if next_action is None else _line(next_action, MAX_MESSAGE)

    def as_dict(self) -> dict[str, str | None]:
        return {"check": self.check, "status": self.status, "message": self.message, "next_action": self.next_action}


def _line(text: object, most: int) -> str:
    line = layout.clean(str(text)[: 2 * most], one_line=True)
    return line if len(line) <= most else line[: most - 1] + "…"


class StateView:
    """What a check may know of the opened state: where it is and whose it is. Not the State: a check reads, never
    writes."""

    __slots__ = ("actor", "root")

    def __init__(self, root: str, actor: str) -> None:
        self.root = root
        self.actor = actor

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):
            raise AttributeError(f"a check's view of the state is read-only ({name})")
        object.__setattr__(self, name, value)


class Context:
    """What the checks look at, read-only: the state folder and its actor (`state`, None when the state could not
    load), what reconciliation found, the views' text as the brief read them, and the error that stopped the load."""

    def __init__(
        self,
        state: State | None,
        reconciled: Outcome | None,
        error: str | None = None,
        views: dict[str, str | None] | None = None,
    ) -> None:
        self.state = StateView(state.root, state.actor) if state is not None else None
        self.reconciled = reconciled
        self.error = error
        self.views: dict[str, str | None] = dict(views) if views is not None else {}


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
        # skipped: the check should have looked and could not; an unlooked place is not a clean one
        if f.status in ("degraded", "failed", "skipped") and f.check not in bad:
            bad.append(f.check)
    return "recovered" if not bad else f"degraded ({', '.join(bad)})"
