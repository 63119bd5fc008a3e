"""rehydrate: working state for AI coding agents that survives context compaction, crashes and hand-offs.

The public Python API is what `__all__` names (docs/api.md shows each with an example); everything else is private
and may change between releases. The names load on first use, so that `import rehydrate` costs the hook path
nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.brief import ResumeResult, resume
    from rehydrate.errors import RehydrateError
    from rehydrate.store import Problem
    from rehydrate.store.session import Outcome
    from rehydrate.store.state import State
    from rehydrate.store.wal.history import History
    from rehydrate.store.wal.history import read as history

__version__ = "0.1.0"
JSON_VERSION = 1  # the version of every --json answer and of the audit's report
__all__ = [
    "JSON_VERSION",
    "History",
    "Outcome",
    "Problem",
    "RehydrateError",
    "ResumeResult",
    "State",
    "__version__",
    "history",
    "resume",
]


def __getattr__(name: str) -> Any:
    # Each branch imports only what its name needs: `rehydrate.State` must not load the brief.
    if name == "State":
        from rehydrate.store.state import State

        return State
    if name == "Outcome":
        from rehydrate.store.session import Outcome

        return Outcome
    if name == "Problem":
        from rehydrate.store import Problem

        return Problem
    if name == "RehydrateError":
        from rehydrate.errors import RehydrateError

        return RehydrateError
    if name in ("resume", "ResumeResult"):
        import rehydrate.brief

        return getattr(rehydrate.brief, name)
    if name in ("history", "History"):
        from rehydrate.store.wal import history

        return history.read if name == "history" else history.History
    raise AttributeError(f"module 'rehydrate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
