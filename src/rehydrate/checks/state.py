"""state: the WAL's tail, the latches and the views agree (the recognize step)."""

from __future__ import annotations

from rehydrate.checks import Context, Finding


class StateCheck:
    name = "state"

    def run(self, context: Context) -> list[Finding]:
        out = context.reconciled
        if context.state is None or out is None:
            return [Finding(self.name, "failed", context.error or "the state could not be read")]
        findings = [Finding(self.name, "ok", f"repaired: {r}") for r in out.repaired]
        for p in out.problems:
            where = p.file + (f":{p.line}" if p.line else "")
            findings.append(
                Finding(self.name, "degraded", f"{where}: {p.message} [{p.code}]", "run `rehydrate verify` and fix it")
            )
        if not out.problems:
            seq = out.record["seq"] if out.record else "?"
            findings.append(
                Finding(self.name, "ok", f"WAL tail (record {seq}) verified; views and latches match it")
            )
        return findings
