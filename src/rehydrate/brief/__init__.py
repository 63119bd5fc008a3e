"""The brief a fresh context reads first: pure rendering, in boot order, within a budget of characters (and bytes).

Order: header, goal (00), decisions and rejected approaches (10), handoff (20), other NN_*.md, next (99), the WAL's
last line, what was left out, the ledger. When something must give, the least important goes first (the last WAL
line, the other files (last first), the middle of a handoff too long to read whole (down to a quarter of the budget),
the oldest decisions, then the handoff's end); only then are the parts that are never dropped shortened: the goal,
each rejected approach (its id always stays; where the rest is, by line numbers), the next step, the ledger's
findings (folded into counts), the next safe action; and at last the oldest rejected approaches are named by an id
range with the file's line numbers instead of one by one (never dropped). Every cut is named under "Left out".
The views are read only as far as a brief could show them (read.py), whatever their size.

Untrusted text stays data. Everything the brief did not compute (the files' text, the last record's data, later
transcript excerpts and teammates' text) goes through `quote`: between two lines that carry a token drawn afresh for
each brief and name the text's source, every line of it marked `> `. The token is removed from the text, so the text
can neither close its quote nor imitate the ledger, whose header carries the same token; the top of the brief says so.

The parts: read.py (bounded reads of the views), fence.py (quoting and cutting), plan.py (the material, Draft, and
the plan's knobs, Plan), compose.py (the sections), fit.py (the drop order); here: render, and resume/reduced, which
read the state, run the checks and log the read.
"""

from __future__ import annotations

import os

from rehydrate import checks
from rehydrate.brief import ack, receipt
from rehydrate.brief.compose import compose
from rehydrate.brief.fence import head_bytes, quote, utf8_size, within_budget
from rehydrate.brief.plan import Brief, BriefInput, Draft, Plan
from rehydrate.brief.read import annotate, read_views
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.fs import write as fsio
from rehydrate.store import config, layout, views
from rehydrate.store.latches.index import Invariants
from rehydrate.store.local import journal
from rehydrate.store.locate import foreign
from rehydrate.store.state import State
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.checks import Context, Finding
    from rehydrate.checks.ledger import Ledger
    from rehydrate.proc import Batch
    from rehydrate.store import Problem
    from rehydrate.store.wal.record import Record
    from rehydrate.store.wal.since import Since

__all__ = [
    "DEFAULT_BUDGET",
    "MIN_BUDGET",
    "Brief",
    "BriefInput",
    "ResumeResult",
    "new_token",
    "quote",
    "reduced",
    "rejected_room",
    "render",
    "resume",
]

DEFAULT_BUDGET = 9000
# The smallest budget for which every promise holds (within budget; the goal, the next step, the confidence line, the
# next safe action and every rejected approach's id present or covered by a named range; every cut named). At their
# shortest, with the longest actor, folder, path, preface, confidence and findings, the parts that are never dropped
# take 1,817 characters, the range that names the older rejected approaches (their first and last ids, how many, the
# file's line numbers) at most 90 more, and each rejected approach named one by one 15 more
# (tests/brief/test_brief_budget.py measures it): MIN_BUDGET names 6 of them one by one whatever the rest.
MIN_BUDGET = 2000
_FLOOR = 1817
_RANGE = 90  # `R-000000 to R-ffffff (9,999,999): 10_invariants.md lines 9,999,999-9,999,999` and a line break
_ID_LINE = 15  # a rejected approach at its shortest: `> - R-91be04 …` and a line break


def rejected_room(budget: int) -> int:
    """How many rejected approaches a brief within budget always names one by id, whatever the rest of the input (all
    of them, up to this many): 6 at MIN_BUDGET, 473 at the default. Past it, the oldest may be named by an id range
    with the file's line numbers instead (never dropped)."""
    return max(0, (budget - _FLOOR - _RANGE) // _ID_LINE)


def new_token() -> str:
    """A fresh token for one brief (48 random bits): no text written before the brief can hold it.

    The seam for tests that pin the output: monkeypatch this function."""
    return os.urandom(6).hex()


def render(inp: BriefInput, budget: int = DEFAULT_BUDGET, max_bytes: int | None = None) -> Brief:
    """The brief as text, at most `budget` characters and, if max_bytes is given, at most max_bytes UTF-8 bytes (a
    harness that counts bytes, or tokens of about 4 bytes, cuts non-Latin text long before its character count).
    Within MIN_BUDGET (characters, and bytes) and up, nothing essential is lost."""
    token = new_token()
    d = Draft(inp, max(budget, 1), token)
    p = Plan(d)
    text, omitted, _ = compose(d, p)
    if not within_budget(text, budget, max_bytes):
        from rehydrate.brief.fit import fit  # the drop order: loaded for a brief that has to give something up

        fit(d, p, budget, max_bytes)
        text, omitted, _ = compose(d, p)
    if not within_budget(text, budget, max_bytes):  # a budget below MIN_BUDGET: keep the start and the ledger's end
        unit = f"{budget:,} characters" if max_bytes is None else f"{budget:,} characters and {max_bytes:,} bytes"
        end = "\n".join(text.rstrip("\n").split("\n")[-2:]) + "\n"
        note = f"\n[... cut to fit {unit}; a budget of {MIN_BUDGET:,} or more shows every essential]\n"
        keep = max(0, budget - len(end) - len(note))
        head = text[:keep]
        if max_bytes is not None:
            head = head_bytes(head, max_bytes - utf8_size(note + end))
            keep = len(head)
        text = (head + note + end)[-budget:] if budget > 0 else ""
        if max_bytes is not None and utf8_size(text) > max_bytes:  # even the note and the end do not fit: their end
            text = head_bytes(text[::-1], max_bytes)[::-1]
        omitted.append(f"everything past character {keep:,}")
    return Brief(text, omitted, token)


# --- resume: read the state, run the checks, render, log the read ------------------------------------------------


class ResumeResult:
    """The brief, the ledger's verdict and findings, and the `resume` record that logged them. ledger: the summed-up
    ledger the brief shows (checks/ledger.summarize: the same for `recover` and the hooks); None only when a caller
    builds a ResumeResult without one."""

    def __init__(
        self,
        text: str,
        confidence: str,
        findings: list[Finding],
        omitted: list[str],
        record: Record,
        repaired: list[str],
        problems: list[Problem],
        ledger: Ledger | None = None,
    ) -> None:
        self.text = text
        self.confidence = confidence
        self.findings = findings
        self.omitted = omitted
        self.record = record
        self.repaired = repaired
        self.problems = problems
        self.ledger = ledger


def resume(
    state: State,
    budget: int | None = None,
    preface: str | None = None,
    session_id: str | None = None,
    max_bytes: int | None = None,
    transcript: str | None = None,
    harness: str | None = None,
    carried: dict[str, Any] | None = None,
) -> ResumeResult:
    """The brief a fresh context reads first, logged as a `resume` record in this worktree's journal
    (store/local/journal.py: outside the state folder, so that reading leaves the tree clean). Reads the WAL's tail,
    not the WAL.

    session_id: the harness session the brief is given to, logged in the record (cleaned, at most 200 chars).
    max_bytes: a bound on the brief's UTF-8 bytes besides `budget` characters (see render).
    transcript, harness: the hook event's transcript path and the harness answered (claude, codex, gemini), None
    outside a hook. The checks get them as Context.event (hook scope; its source stays None: no check reads it);
    with a harness, the `resume` record carries store.wal.since.ref_fields (harness, host,
    transcript path and size) so that a later recency check can find the transcript.
    carried: fields for the record of a brief a hook added to one model request (Gemini CLI's BeforeModel: `via`
    "request"): that brief is in no transcript, so the record holds nothing for a delivery receipt to look for.

    The checks run in hook scope with state/config.json and this environment; the ledger (checks/ledger.summarize)
    gives the next safe action or the question for a human, and the note of what was left to `rehydrate recover`
    (what the checks put in context.shared["deferred"], and the user's checks config.json names). A compaction after
    the last checkpoint whose record holds a capture is shown as "Just before the compaction" (brief/capture.py)."""
    # since, git and the ledger only when a brief is made: the Stop hook loads this package for its receipt
    from rehydrate.checks.git import probe as gitprobe
    from rehydrate.store.wal import since

    budget = DEFAULT_BUDGET if budget is None else budget
    if budget < MIN_BUDGET:
        raise UsageError(f"a budget of {budget} characters is too small", f"use at least {MIN_BUDGET}", field="budget")
    # git status needs nothing the state says: it runs while the lock is taken, the state read and the checks load
    status = gitprobe.status_started(state.root, os.environ)
    try:
        reading = state.reading()
        with reading as snap:
            status = _asked_again(status, state.root) if reading.lock.waited else status
            found = since.find(state, snap)  # the WAL since the last checkpoint, read back once for every check
            cfg = config.read(state.root)
            event = checks.HookEvent(harness, session_id, transcript)
            context = checks.Context(
                state, snap.outcome(), since=found, scope="hook", event=event, config=cfg, env=os.environ
            )
            context.shared[gitprobe.STATUS_KEY] = status
            started = checks.start_all(context)  # live-state's first: its git log runs while the rest loads
            try:  # while git works: the views, and the journal once for the receipt and the restatement
                sizes: dict[str, int] = {}
                parts: dict[str, object] = {}
                shown = read_views(state, snap, budget, sizes, parts)
                context.views = dict(shown)  # no check's start reads them
                recent = journal.recent(state, receipt.LOOK_BACK)
                delivered = receipt.finding(receipt.settle(state, recent=recent))  # the last brief: did it arrive?
                said = ack.from_reply(state, recent)  # a restatement the model wrote in its reply since that brief
                restated = ack.finding(said or ack.last(state, found.ts, recent))  # the agent's since the checkpoint
            finally:
                findings = started.run()  # never raises: what the starts ran is collected whatever happened above
            with_line(findings, delivered)
            with_line(findings, restated)
            conf = checks.confidence(findings)
            summed = _ledger(shown, findings, _deferred(context, cfg))
            inp = _input(state, shown, findings, conf, snap.last, preface, sizes, parts, summed)
            _capture(inp, found)
            annotate(inp, state, snap)  # the lines of work merged; the entries' authors when there are several actors
            out = render(inp, budget) if max_bytes is None else render(inp, budget, max_bytes=max_bytes)
            data = {
                "budget": budget,
                "chars": len(out.text),
                "omitted": out.omitted,
                "read": [n for n, v in shown.items() if v is not None and (v or not sizes.get(n))],
                "checks": _worst(findings),
                "confidence": conf,
            }
            if session_id:
                data["session_id"] = clean(session_id, one_line=True)[:200]
            if harness:
                data.update(since.ref_fields(harness, transcript))
                if carried is None:
                    data["brief"] = receipt.brief_fields(out.text, out.token)  # what its delivery receipt looks for
            if carried:
                data.update(carried)
            rec = state.log_resume(snap, data)
            return ResumeResult(out.text, conf, findings, out.omitted, rec, snap.repaired, snap.problems, summed)
    finally:
        status.stop()  # nothing when the probe took it and waited; else git is stopped, never left behind


def _asked_again(status: Batch, root: str) -> Batch:
    """git status started again: another command held the state while this one waited for its lock, and may have
    changed what git says (a sync's commit), so it is asked as it is now, beside the state as it is now."""
    from rehydrate.checks.git import probe as gitprobe

    status.stop()
    return gitprobe.status_started(root, os.environ)


def with_line(findings: list[Finding], line: Finding | None) -> None:
    """A line the brief's own records give (the delivery receipt, the agent's restatement), after the other findings
    of its check or last."""
    if line is None:
        return
    at = max((i + 1 for i, f in enumerate(findings) if f.check == line.check), default=len(findings))
    findings.insert(at, line)


def reduced(
    root: str,
    actor: str,
    error: str,
    budget: int | None = None,
    preface: str | None = None,
    max_bytes: int | None = None,
) -> str:
    """What can still be shown when the state cannot be opened: the view files as they are, and the error.

    preface is said first, inside the budget (for example: a compaction just happened); max_bytes bounds its UTF-8
    bytes too (see render). A folder that another user owns is not read (see `locate`)."""
    budget = budget or DEFAULT_BUDGET
    state = State(root, actor)
    shown: dict[str, str | None] = {}
    sizes: dict[str, int] = {}
    parts: dict[str, object] = {}
    if fsio.lstat(root) is not None and not foreign(root):
        try:
            shown = read_views(state, None, budget, sizes, parts)
        except (RehydrateError, OSError):
            shown = {}
    findings = checks.run_all(checks.Context(None, None, error=error))
    inp = _input(state, shown, findings, checks.confidence(findings), None, preface, sizes, parts)
    inp.next_action = "fix the state first: " + error.split("\n", maxsplit=1)[0]
    inp.ask = None
    return (render(inp, budget) if max_bytes is None else render(inp, budget, max_bytes=max_bytes)).text


def _ledger(shown: dict[str, str | None], findings: list[Finding], deferred: list[str] | None = None) -> Ledger:
    """The ledger of these findings, with the checkpoint's next step as 99 shows it (one code path: checks/ledger)."""
    from rehydrate.checks import ledger  # a brief's, not the Stop hook's (see resume)

    nxt = views.parse_next(shown.get(layout.NEXT) or "").get("next")
    goal = bool((shown.get(layout.GOAL) or "").strip())
    return ledger.summarize(findings, checkpoint_next=nxt, goal_present=goal, deferred=deferred or ())


def _deferred(context: Context, cfg: dict[str, object]) -> list[str]:
    """What hook scope left to `rehydrate recover`: what the checks noted in context.shared["deferred"] (e.g. "PR and
    CI (gh)" when gh is on PATH), then the user's checks state/config.json names (checks/user.py: recover only)."""
    noted = context.shared.get("deferred", [])
    left = [x for x in noted if isinstance(x, str)][:8] if isinstance(noted, list) else []
    if cfg.get("checks") is not None and os.environ.get("REHYDRATE_NO_USER_CHECKS") != "1":
        names, refused = config.user_checks(cfg)
        n = len(names) + len(refused)
        if n:
            left.append(f"{n} user check{'s' if n != 1 else ''}")
    return left


SEVERITY = ("n/a", "ok", "skipped", "degraded", "failed")  # a check's worst finding is what its record shows


def _worst(findings: list[Finding]) -> dict[str, str]:
    """Each check's worst status (live-state gives several findings: its degraded one must not hide behind n/a)."""
    worst: dict[str, str] = {}
    for f in findings:
        was = worst.get(f.check)
        rank = SEVERITY.index(f.status) if f.status in SEVERITY else len(SEVERITY)
        if was is None or rank > (SEVERITY.index(was) if was in SEVERITY else len(SEVERITY)):
            worst[f.check] = f.status
    return worst


def _capture(inp: BriefInput, found: Since) -> None:
    """The capture of the newest compaction after the last checkpoint, and what the section's header says of its
    record (seq, time, phase, the checkpoint it read back to), when one holds a capture."""
    if found.capture is None:
        return
    # the record that holds it (since.find keeps the newest capture, which a later compaction without one, its
    # capture switched off, does not replace)
    rec = next(
        (r for r in found.compactions if isinstance(r.get("data"), dict) and r["data"].get("capture") is found.capture),
        None,
    )
    if rec is None:
        return
    data = rec["data"]
    inp.capture = found.capture
    inp.capture_meta = {
        "seq": rec.get("seq"),
        "ts": rec.get("ts"),
        "phase": data.get("phase") if isinstance(data, dict) else None,
        "checkpoint": found.seq,
    }


def _input(
    state: State,
    shown: dict[str, str | None],
    findings: list[Finding],
    conf: str,
    last: Record | None,
    preface: str | None,
    sizes: dict[str, int] | None = None,
    parts: dict[str, object] | None = None,
    summed: Ledger | None = None,
) -> BriefInput:
    summed = summed if summed is not None else _ledger(shown, findings)
    extras = [(n, v) for n, v in shown.items() if n not in layout.VIEWS and v is not None]
    inp = BriefInput(
        folder=os.path.basename(state.root),
        actor=state.actor,
        goal=shown.get(layout.GOAL),
        invariants=shown.get(layout.INVARIANTS),
        handoff=shown.get(layout.HANDOFF),
        extras=extras,
        next=shown.get(layout.NEXT),
        last_record=views.summary(last) if last else None,
        findings=findings,
        confidence=conf,
        next_action=summed.next,
        preface=preface,
        ask=summed.ask,
        deferred=summed.deferred,
    )
    inp.path = os.path.realpath(state.root)  # the header names the real folder, not a link to it
    inp.sizes = sizes or {}  # bytes on disk of each view: a text may be empty or partial (see _views)
    pc = (parts or {}).get("pc")
    if isinstance(pc, tuple):
        inp.pc = pc
    parts = parts or {}
    inv = parts.get(layout.INVARIANTS)
    if inv is not None and shown.get(layout.INVARIANTS) is not None:
        inp.invariants_read = inv if isinstance(inv, Invariants) else None
    inp.tasks = shown.get(layout.TASKS)
    tail = parts.get(layout.HANDOFF)
    if isinstance(tail, str) and shown.get(layout.HANDOFF) is not None:
        inp.handoff_tail = tail
    return inp
