"""Cursor: no hooks; install writes a rule file rehydrate owns, in the project only."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.harness.install import Target
    from rehydrate.harness.program import Program

RULE = """---
description: Working state kept on disk by rehydrate; read it before acting and after any compaction
alwaysApply: true
---
{block}"""


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    """.cursor/rules/rehydrate.mdc, a file rehydrate owns whole."""
    from rehydrate.harness import rules
    from rehydrate.harness.settings import merge_owned

    not_user_wide("cursor", user)
    content = RULE.format(block=rules.block(state_rel))
    path = os.path.join(project, ".cursor", "rules", "rehydrate.mdc")
    return [(path, lambda old, rm: merge_owned(old, content, remove=rm), "rule")]


def not_user_wide(name: str, user: bool) -> None:
    """UsageError for a user-wide install of a target that has only project files."""
    from rehydrate.errors import UsageError

    if user:
        raise UsageError(
            f"a user-wide install is not available for {name}", "install it into the project instead", field="user"
        )
