"""GitHub Copilot: no hooks; install writes the boot rule into .github/copilot-instructions.md, in the project only."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.harness.install import Target
    from rehydrate.harness.program import Program


def targets(project: str, state_rel: str, user: bool, prog: Program) -> list[Target]:
    from rehydrate.harness import rules
    from rehydrate.harness.cursor import not_user_wide

    not_user_wide("copilot", user)
    return [rules.target(os.path.join(project, ".github", "copilot-instructions.md"), state_rel)]
