"""live-state's pull request and CI part, through `gh`: in `rehydrate recover` only, never on the hook path.

Contract:
- `start(context) -> Gh | None` (called by live-state's start(), recover scope only, so that gh runs while git and
  the other checks do): gh is looked for on `context.env`'s PATH (proc.which, no shell); when found, in parallel,
  `gh pr view --json FIELDS` (the branch's pull request) and `gh pr view N --json NAMED_FIELDS` for each `#N` or
  `/pull/N` in the checkpoint's next and done text (digits only, at most MAX_NAMED, each its own argv entry), in the
  state's folder, stdin /dev/null, with GH_ENV added to the environment. One deadline for all of them: config
  `gh_timeout` (store/config.py: 8 s by default, clamped to 1-60); a gh still running then is killed with its
  process group (proc).
- `findings(gh, context, branch) -> list[Finding]` (live-state's run(), after git answered that this is a work
  tree; gh not installed is live-state's n/a). n/a: not signed in (exit 4, gh's "authentication required"); no pull
  request for the branch; a detached HEAD. skipped: past the deadline, or another error. degraded: a failing check in
  the rollup (FAILING) naming the failing checks; the branch's pull request merged or closed after the checkpoint;
  a pull request the checkpoint named merged (next: "#12 is merged: update (git pull) and go on with <next>") or
  closed unmerged after it. ok: open and green, pending or without checks; merged or closed before the checkpoint.
- `cancel(gh)`, `Gh.stop()`: kills and reaps what still runs (git found no work tree, or live-state's run raised).
- In hook scope gh is never run and this module is not loaded: live-state says whether gh is on PATH itself
  (checks/livestate.py: _pr).
- gh's output is untrusted: bounded by proc, parsed defensively (a non-object, a wrong type: skipped), every string
  cleaned to one line and cut; a recorded checkpoint time is used only when it looks like a time.
"""

from __future__ import annotations

import os

from rehydrate import proc, safejson
from rehydrate.checks import DEGRADED, NA, OK, SKIPPED, Finding, Quoting
from rehydrate.store import config
from rehydrate.text import clean, named, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.checks import Context

NAME = "live-state"
FIELDS = "number,title,state,mergedAt,closedAt,url,headRefName,statusCheckRollup"
NAMED_FIELDS = "number,title,state,mergedAt,closedAt,url"
FAILING = ("FAILURE", "ERROR", "TIMED_OUT", "CANCELLED", "ACTION_REQUIRED", "STARTUP_FAILURE")
PENDING = ("PENDING", "EXPECTED", "QUEUED", "IN_PROGRESS", "WAITING", "REQUESTED")
GH_ENV = {"GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1", "GH_PAGER": "cat"}
MAX_NAMED = 3  # pull requests named in the checkpoint that are looked up
MAX_DIGITS = 9
NAMED_CHECKS = 5  # failing checks named in a finding


class Gh:
    """The running gh calls of one recover: the branch's pull request first, then each named one."""

    def __init__(self, batch: proc.Batch | None, named: list[tuple[str, str]], deadline: float) -> None:
        self.batch = batch  # None: gh is not installed
        self.named = named  # (number, where it was named: "next step" or "done")
        self.deadline = deadline
        self._results: list[proc.Result] | None = None

    def stop(self) -> None:
        """Kills and reaps every gh still running (cancel); nothing once results() answered."""
        cancel(self)

    def results(self) -> list[proc.Result]:
        if self._results is None:
            self._results = self.batch.wait(self.deadline) if self.batch is not None else []
        return self._results


def _env(context: Context) -> dict[str, str]:
    return dict(os.environ if context.env is None else context.env)


def named_prs(texts: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
    """The pull request numbers `#N` or `.../pull/N` in (where, text) pairs: digits only (ASCII), no leading zero
    kept, each once, at most MAX_NAMED, as (number, where)."""
    found: list[tuple[str, str]] = []
    for where, text in texts:
        if not isinstance(text, str):
            continue
        for marker in ("#", "/pull/"):
            at = text.find(marker)
            while at >= 0 and len(found) < MAX_NAMED:
                start = end = at + len(marker)
                while end < len(text) and text[end] in "0123456789":
                    end += 1
                after = text[end : end + 1]
                digits = text[start:end].lstrip("0")
                plain = digits and end - start <= MAX_DIGITS and not (after.isalnum() or after == "_")
                if plain and digits not in [n for n, _ in found]:
                    found.append((digits, where))
                at = text.find(marker, end)
    return found


def start(context: Context) -> Gh:
    """Starts gh (see the module's docstring); a Gh without a batch when gh is not installed."""
    env = _env(context)
    deadline = config.gh_timeout(context.config)
    if proc.which("gh", env.get("PATH", os.defpath)) is None or context.state is None:
        return Gh(None, [], deadline)
    since = context.since
    texts = [("next step", since.next), ("done", since.done)] if since is not None else []
    named = named_prs(texts)
    cmds = [["gh", "pr", "view", "--json", FIELDS]]
    cmds += [["gh", "pr", "view", number, "--json", NAMED_FIELDS] for number, _ in named]
    batch = proc.start(cmds, env={**env, **GH_ENV}, cwd=context.state.root)
    return Gh(batch, named, deadline)


def cancel(gh: Gh) -> None:
    """Kills and reaps every gh still running, at once (a deadline already passed)."""
    if gh.batch is not None and gh._results is None:
        gh._results = gh.batch.wait(0)


def findings(gh: Gh, context: Context, branch: str | None) -> list[Finding]:
    """The pull request and CI findings of a started Gh (see the module's docstring)."""
    if gh.batch is None:
        return []  # not installed: live-state says so (checks/livestate.py: _pr)
    results = gh.results()
    if any(r.code == 4 for r in results):
        text = "gh is not signed in (gh pr view: exit 4, authentication required): pull request and CI not looked at"
        return [Finding(NAME, NA, text)]
    since = context.since
    label = f"checkpoint {since.seq}" if since is not None and since.seq is not None else "the last checkpoint"
    ts = since.ts if since is not None else None
    ckpt = _Ckpt(label, _stamp(ts), _shown_time(ts), since.next if since is not None else None)
    found = [_current(gh, results[0], branch, ckpt)]
    for (number, where), result in zip(gh.named, results[1:], strict=True):
        found.append(_named(gh, result, number, where, ckpt))
    return found


class _Ckpt:
    """What the findings say of the checkpoint: its label, its time to the second (None: unknown) and as recorded
    (with its fraction of a second, when it has one), its next step."""

    __slots__ = ("label", "next", "shown", "ts")

    def __init__(self, label: str, ts: str | None, shown: str | None, next_step: str | None) -> None:
        self.label = label
        self.ts = ts
        self.shown = shown
        self.next = next_step


def _why(gh: Gh, result: proc.Result, argv: str) -> str | None:
    """Why a gh call gave nothing to read, or None when it answered (exit 0)."""
    if result.timed_out:
        return f"{argv} did not answer within {gh.deadline:g} s"
    if result.missing:
        return "gh is not installed"
    if result.code != 0:
        first = result.err.decode("utf-8", "replace").strip().split("\n")[0].strip()
        return f"{argv} failed (exit {result.code}{': ' + quoted(first, 200) if first else ''})"
    return None


def _parse(out: bytes) -> dict[str, Any] | None:
    """gh's JSON answer, if it is an object with a plausible number and state; else None."""
    try:
        value = safejson.loads(out.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    number = value.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or not 0 < number < 10**MAX_DIGITS:
        return None
    if _word(value.get("state")) not in ("OPEN", "MERGED", "CLOSED"):
        return None
    return value


def _word(value: object, most: int = 40) -> str:
    return clean(value, one_line=True)[:most] if isinstance(value, str) else ""


def _stamp(value: object) -> str | None:
    """A UTC time as `YYYY-MM-DDTHH:MM:SSZ` when the value looks like one (gh's and the WAL's), else None."""
    if not isinstance(value, str) or len(value) < 20 or not value.endswith("Z"):
        return None
    head = value[:19]
    digits = head[:4] + head[5:7] + head[8:10] + head[11:13] + head[14:16] + head[17:19]
    shape = head[4] + head[7] + head[10] + head[13] + head[16]
    if not (digits.isascii() and digits.isdigit()) or shape != "--T::":
        return None
    return head + "Z"


def _shown_time(value: object) -> str | None:
    """A recorded time as shown: its second (_stamp) and the digits of its fraction, if it has some; else None."""
    head = _stamp(value)
    if head is None or not isinstance(value, str):
        return None
    fraction = value[19:-1]
    digits = fraction[1:]
    if fraction[:1] == "." and 0 < len(digits) <= 9 and digits.isascii() and digits.isdigit():
        return head[:-1] + fraction + "Z"
    return head


BEFORE, AFTER, SAME, UNKNOWN = "before", "after", "same second", "unknown"


def _closed(pr: dict[str, Any], ckpt: _Ckpt) -> tuple[str, str]:
    """(when it was merged or closed, as shown; its order with the checkpoint: BEFORE only when its whole second
    ends before the checkpoint's second begins, SAME when both fall in one second (gh's whole seconds cannot order
    them), AFTER, or UNKNOWN when either time is unknown). Only BEFORE is clean."""
    at = _stamp(pr.get("mergedAt")) or _stamp(pr.get("closedAt"))
    if at is None or ckpt.ts is None:
        return at or "an unknown time", UNKNOWN
    return at, BEFORE if at < ckpt.ts else SAME if at == ckpt.ts else AFTER


def _same_second(ckpt: _Ckpt) -> str:
    """The words for a merge or close stamped in the checkpoint's own second: which came first is not known."""
    return (
        f", in the same second as {ckpt.label} ({ckpt.shown or ckpt.ts}): gh gives whole seconds, so which came "
        "first cannot be told"
    )


def _rollup(value: object) -> tuple[list[str], int, int]:
    """(names of the failing checks, how many pending, how many in all) of a statusCheckRollup."""
    failing: list[str] = []
    pending = total = 0
    for entry in value if isinstance(value, list) else []:
        if not isinstance(entry, dict):
            continue
        total += 1
        verdict = _word(entry.get("conclusion")).upper() or _word(entry.get("state")).upper()
        name = _word(entry.get("name"), 60) or _word(entry.get("context"), 60) or "(unnamed check)"
        if verdict in FAILING:
            failing.append(name)
        elif verdict in PENDING or _word(entry.get("status")).upper() in PENDING:
            pending += 1
    return failing, pending, total


def _current(gh: Gh, result: proc.Result, branch: str | None, ckpt: _Ckpt) -> Finding:
    """The branch's pull request: its state and its CI."""
    if branch is None:
        return Finding(NAME, NA, "HEAD is detached: no branch to look up a pull request for (gh pr view not used)")
    if result.code == 1 and b"no pull requests found" in result.err:
        return Finding(NAME, NA, f"no pull request for {named(branch)} (gh pr view): CI not looked at")
    why = _why(gh, result, "gh pr view")
    pr = _parse(result.out) if why is None else None
    if pr is None:
        text = f"{why or 'gh pr view gave no pull request'}: the pull request and CI of {named(branch)}"
        text += " not looked at"
        return Finding(NAME, SKIPPED, text, "run `gh pr view` yourself before going on")
    number, state = pr["number"], _word(pr["state"])
    q = Quoting()
    title = q("pull request title", "gh pr view", _word(pr.get("title"), 120))
    name = f"PR #{number} {title} ({named(branch)})"
    if state != "OPEN":
        at, order = _closed(pr, ckpt)
        done = "merged" if state == "MERGED" else "closed without merging"
        if order == BEFORE:
            return Finding(NAME, OK, f"{name} was {done} at {at}, before {ckpt.label} (gh pr view)", quotes=q.quotes)
        when = f"since {ckpt.label}"
        if order == SAME:
            text = f"{name} was {done} at {at}{_same_second(ckpt)} (gh pr view)"
            when = f"about when {ckpt.label} was written"
        elif order == UNKNOWN:  # never clean: an order that cannot be told counts as after
            text = f"{name} was {done} at {at}: its order with {ckpt.label} is not known (gh pr view)"
        else:
            text = f"{name} was {done} at {at}, after {ckpt.label} (gh pr view)"
        nxt = f"PR #{number} was {done} {when}: update (git pull) and check that its next step still holds"
        return Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)
    failing, pending, total = _rollup(pr.get("statusCheckRollup"))
    if failing:
        listed = ", ".join(failing[:NAMED_CHECKS])
        more = f" and {len(failing) - NAMED_CHECKS} more" if failing[5:] else ""
        names = f"{q('failing checks', 'gh pr view', listed)}{more}"
        text = f"{name} is open and its CI is red: {names} (gh pr view)"
        nxt = f"look at the failing checks first (gh pr checks {number}): {names}"
        return Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)
    ci = "no checks" if not total else f"CI pending ({pending} of {total})" if pending else f"CI green ({total})"
    return Finding(NAME, OK, f"{name} is open, {ci} (gh pr view)", quotes=q.quotes)


def _named(gh: Gh, result: proc.Result, number: str, where: str, ckpt: _Ckpt) -> Finding:
    """A pull request the checkpoint named: merged or closed since is news."""
    named = f"named in {ckpt.label}'s {where}"
    why = _why(gh, result, f"gh pr view {number}")
    pr = _parse(result.out) if why is None else None
    if pr is None:
        text = f"{why or f'gh pr view {number} gave no pull request'}: PR #{number}, {named}, not looked at"
        return Finding(NAME, SKIPPED, text, f"run `gh pr view {number}` yourself before going on")
    state = _word(pr["state"])
    q = Quoting()
    title = q("pull request title", f"gh pr view {number}", _word(pr.get("title"), 120))
    name = f"PR #{number} {title}, {named},"
    if state == "OPEN":
        return Finding(NAME, OK, f"{name} is open (gh pr view {number})", quotes=q.quotes)
    at, order = _closed(pr, ckpt)
    done = "merged" if state == "MERGED" else "closed without merging"
    if order == BEFORE:
        return Finding(NAME, OK, f"{name} was {done} at {at}, before it (gh pr view {number})", quotes=q.quotes)
    step = q("the next step", ckpt.label, ckpt.next[:200]) if ckpt.next else f"{ckpt.label}'s next step"
    text = f"{name} was {done} at {at}" + (_same_second(ckpt) if order == SAME else "")
    if state == "MERGED":
        nxt = f"#{number} is merged: update (git pull) and go on with {step}"
        return Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)
    nxt = f"#{number} was closed without merging: find out why before going on with {step}"
    return Finding(NAME, DEGRADED, text, nxt, quotes=q.quotes)
