"""cursors: every registered pipeline's cursor against its output file.

state/pipelines.json arrives by git pull like the rest of the state: its paths are untrusted. Only paths that resolve
inside the project are read, never through a final symlink, never a FIFO or a device, and only each output's tail;
at most cursor.MAX_CHECKED pipelines are looked at. What could not be looked at is reported as skipped, never as ok.
"""

from __future__ import annotations

import os

from rehydrate.checks import Context, Finding
from rehydrate.errors import RehydrateError
from rehydrate.store.layout import PIPELINES
from rehydrate.text import named

REPAIR = "run `rehydrate cursor repair OUTPUT PROGRESS` before going on with the pipeline"
VERIFY = "run `rehydrate cursor verify OUTPUT PROGRESS` (the paths registered in state/pipelines.json)"


class CursorsCheck:
    name = "cursors"

    def run(self, context: Context) -> list[Finding]:
        if context.state is None:
            return []  # the state did not load: identity says so, and there is no registry to look for
        if not os.path.lexists(os.path.join(context.state.root, PIPELINES)):
            # nothing to look at, which does not degrade; the finding says where it looked
            return [Finding(self.name, "n/a", f"no pipeline registered (state/{PIPELINES} absent)")]
        from rehydrate.cursor import registered as cursor  # not the pipeline: the hook path stays light

        try:
            entries = cursor.registry(context.state.root)
        except RehydrateError as e:
            return [Finding(self.name, "degraded", f"the registered pipelines could not be read: {e.message}", e.hint)]
        findings = []
        names = sorted(entries)
        for name in names[: cursor.MAX_CHECKED]:
            entry = entries[name]
            if not isinstance(entry, dict):
                label = named(cursor.clean_name(name), cursor.MAX_NAME)
                text = f"{label}: not checked: its entry in pipelines.json is not an object"
                findings.append(Finding(self.name, "skipped", text, "fix or remove it in state/pipelines.json"))
                continue
            status, text = cursor.summary(context.state.root, name, entry)
            action = {"ok": None, "skipped": VERIFY}.get(status, REPAIR)
            findings.append(Finding(self.name, status, text, action))
        if len(names) > cursor.MAX_CHECKED:
            more = len(names) - cursor.MAX_CHECKED
            text = f"{more} more registered pipeline(s) not checked: the brief checks at most {cursor.MAX_CHECKED}"
            findings.append(Finding(self.name, "skipped", text, VERIFY))
        return findings
