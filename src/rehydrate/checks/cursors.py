"""cursors: every registered pipeline's cursor against its output file."""

from __future__ import annotations

from rehydrate.checks import Context, Finding


class CursorsCheck:
    name = "cursors"

    def run(self, context: Context) -> list[Finding]:
        from rehydrate import cursor

        if context.state is None:
            return []
        entries = cursor.registered(context.state.root)
        findings = []
        for name, entry in sorted(entries.items()):
            ok, text = cursor.summary(context.state.root, name, entry)
            action = None if ok else "run `rehydrate cursor repair OUTPUT PROGRESS` before going on with the pipeline"
            findings.append(Finding(self.name, "ok" if ok else "degraded", text, action))
        return findings
