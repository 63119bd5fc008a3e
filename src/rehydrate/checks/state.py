"""state: the WAL's tail, the latches and the views agree (the recognize step)."""

from __future__ import annotations

from rehydrate.checks import Context, Finding
from rehydrate.text import clean, named, quoted, shorten

MERGED_MOST = 4  # the lines of work a merge joined that the brief and this check name one by one


class StateCheck:
    name = "state"

    def run(self, context: Context) -> list[Finding]:
        out = context.reconciled
        if context.state is None or out is None:
            return [Finding(self.name, "failed", context.error or "the state could not be read")]
        findings = [Finding(self.name, "ok", f"repaired: {r}") for r in out.repaired]
        merged = getattr(out, "merged", None)  # WP1's: the lines of work a merge joined, until a checkpoint chooses
        if isinstance(merged, list) and len(merged) > 1:
            findings.append(Finding(self.name, "ok", merged_finding(merged)))
        for p in out.problems:
            where = p.file + (f":{p.line}" if p.line else "")
            status = "ok" if p.info else "degraded"  # an information (a merge left it for the next write)
            findings.append(Finding(self.name, status, f"{where}: {p.message} [{p.code}]", _action(p.code, where)))
        if not any(not p.info for p in out.problems):
            seq = out.record["seq"] if out.record else "?"
            findings.append(Finding(self.name, "ok", f"WAL tail (record {seq}) verified; views and latches match it"))
        return findings


def merged_finding(merged: list[object]) -> str:
    """`2 lines of work merged (feat: next "X"; main: next "Y"): a checkpoint chooses` (text from records: cleaned,
    each part cut)."""
    parts = []
    for i, line in enumerate(merged[:MERGED_MOST]):
        name, what, _, nxt = line_fields(i, line, (40, 0, 80))
        parts.append(f"{named(name, 40)}: next {quoted(nxt)}" if what else f"{named(name, 40)}: no checkpoint")
    more = f"; and {len(merged) - MERGED_MOST} more" if len(merged) > MERGED_MOST else ""
    return f"{len(merged)} lines of work merged ({'; '.join(parts)}{more}): a checkpoint chooses"


def line_fields(i: int, line: object, caps: tuple[int, int, int]) -> tuple[str, str | None, str, str]:
    """One line of work's name (its branch, or its place), its last checkpoint ("checkpoint 7 (2026-12-01T06:10)",
    None if it has none), done and next: from records (untrusted), cleaned to one line, each cut to its cap."""
    line = line if isinstance(line, dict) else {}
    branch = line.get("branch")
    branch = clean(branch, one_line=True) if isinstance(branch, str) else ""
    name = shorten(branch, caps[0])[0] if branch else f"line {i + 1}"
    cp = line.get("checkpoint")
    if not isinstance(cp, dict):
        return name, None, "", ""
    seq, ts = cp.get("seq"), cp.get("ts")
    what = f"checkpoint {seq}" if isinstance(seq, int) and not isinstance(seq, bool) else "checkpoint"
    what += f" ({clean(ts, one_line=True)[:16]})" if isinstance(ts, str) else ""
    done = shorten(clean(str(cp.get("done") or ""), one_line=True), caps[1])[0]
    return name, what, done, shorten(clean(str(cp.get("next") or ""), one_line=True), caps[2])[0]


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
        return f"run `rehydrate resolve` (or finish the merge at {where} as the finding says, or `git merge --abort`)"
    if code == "line-endings":
        return f"fix {where} by hand (keep every recorded line, LF endings), then `rehydrate verify`"
    if code == "rolled-back":
        return (
            f"compare {where} with git (`git log -p -- {where}`): after a branch switch or a restore this is expected; "
            "otherwise restore the lost records. The next checkpoint records the loss and ends this report"
        )
    if code in ("forged", "key-unregistered", "key-not-mine", "other-state"):  # no repair makes a signature
        return (
            f"find who committed {where} (`git log -p -- {where}`) and do not act on what it says; restore it from "
            "git, or ask the actor whose name it bears"
        )
    if code == "unsafe-path":
        return f"restore {where} from git (`git log -p -- {where}`): a record names a path outside the state folder"
    if code in ("not-regular-file", "unreadable", "invalid-utf8"):
        return f"replace {where} with a regular, readable file (restore it from git), then `rehydrate verify`"
    return f"run `rehydrate verify --repair`, then look at {where}"
