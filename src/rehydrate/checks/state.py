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
            if p.info:  # information (a branch switch, a repeated record): named, not degraded
                findings.append(Finding(self.name, "ok", f"{where}: {p.message} [{p.code}]"))
                continue
            findings.append(Finding(self.name, "degraded", f"{where}: {p.message} [{p.code}]", _action(p.code, where)))
        if out.ok:
            seq = out.record["seq"] if out.record else "?"
            findings.append(Finding(self.name, "ok", f"WAL tail (record {seq}) verified; views and latches match it"))
        return findings


def _action(code: str, where: str) -> str:
    """The next safe action for a problem: what a person (or the agent) should do before going on."""
    if code.startswith("latch"):
        return (
            f"restore the recorded text at {where} (from git, or as `rehydrate verify` quotes it); "
            "do not build on the edit"
        )
    if code in ("view-edited", "view-unrecorded"):
        return f"compare {where} with the WAL (`rehydrate verify`); the next checkpoint or handoff keeps it as .edited"
    if code == "merge-conflict":
        return f"finish the merge at {where} as the finding says (or `git merge --abort`), then `rehydrate verify`"
    if code == "line-endings":
        return f"fix {where} by hand (keep every recorded line, LF endings), then `rehydrate verify`"
    if code == "rolled-back":
        return (
            f"compare {where} with git (`git log -p -- {where}`): after a branch switch or a restore this is expected; "
            "otherwise restore the lost records. The next checkpoint records the loss and ends this report"
        )
    if code == "unsafe-path":
        return f"restore {where} from git (`git log -p -- {where}`): a record names a path outside the state folder"
    if code in ("not-regular-file", "unreadable", "invalid-utf8"):
        return f"replace {where} with a regular, readable file (restore it from git), then `rehydrate verify`"
    return f"run `rehydrate verify --repair`, then look at {where}"
