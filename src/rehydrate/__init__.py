"""rehydrate: working state for AI coding agents that survives context compaction, crashes and hand-offs."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"
JSON_VERSION = 1  # the version of every --json answer and of the audit's report
__all__ = ["JSON_VERSION", "RehydrateError", "State", "__version__"]


def __getattr__(name: str) -> Any:  # lazy: `import rehydrate` stays cheap on the hook path
    if name == "State":
        from rehydrate.store.state import State

        return State
    if name == "RehydrateError":
        from rehydrate.errors import RehydrateError

        return RehydrateError
    raise AttributeError(name)
