"""Recovery checks: each answers one question and returns findings; the ledger sums them up (checks/ledger.py).

A check is any object with a ``name`` and ``run(context) -> list[Finding]``. Two optional attributes: ``start(context)
-> None``, called for every check before any check's ``run`` (a check starts its processes there, so that git runs
while the others read files), and ``scope = "recover"`` for a check that runs in `rehydrate recover` only, never on
the hook path. Built-in checks sit in the static registry below, in ORDER; a user's own check is named in
state/config.json as ``module:attr`` and runs in `recover` only, after the built-in ones (checks/user.py).
"""

from __future__ import annotations

from rehydrate.text import clean, cut_line, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable, Mapping
    from typing import Any, Protocol

    from rehydrate.store.session import Outcome
    from rehydrate.store.state import State
    from rehydrate.store.wal.since import Since

    class Check(Protocol):
        """name and run; optionally `start(context) -> None`, `stop(context) -> None` (what start left running,
        stopped when the run ends before run(): a later check failed to load) and `scope = "recover"`."""

        name: str

        def run(self, context: Context) -> list[Finding]: ...


MAX_MESSAGE = 1000  # a finding's message is one line of the ledger: it says what was found and where, briefly

# The statuses, a closed set. ok: looked, and what it found agrees with the checkpoint. degraded: looked, and found
# what contradicts or outdates it (its next action says what to look at first). failed: could not run at all (the
# state did not load, the check raised, a check gave an unknown status). skipped: should have looked and could not
# (a recorded transcript gone, git or gh past its deadline): an unlooked place is not a clean one, so it degrades
# too. n/a: nothing to look at (no pipeline registered, no upstream or main line, no transcript ever recorded, gh not
# installed or not signed in): the check does not apply, which does not degrade. An ok or n/a finding says where it
# looked: finding nothing never shows that something was never saved.
OK, DEGRADED, FAILED, SKIPPED, NA = "ok", "degraded", "failed", "skipped", "n/a"
STATUSES = (OK, DEGRADED, FAILED, SKIPPED, NA)
LOWERING = (DEGRADED, FAILED, SKIPPED)  # the statuses that make the confidence `degraded (...)`

# The ledger's checks in their fixed order (registry() skips a name without a module).
ORDER = ("identity", "state", "handoff", "mailbox", "outbox", "recency", "live-state", "direction", "cursors")
_MODULES = {  # check name -> (module under rehydrate.checks, class): imported only when the registry is built
    "identity": ("identity", "IdentityCheck"),
    "state": ("state", "StateCheck"),
    "handoff": ("handoff", "HandoffCheck"),
    "mailbox": ("mailbox", "MailboxCheck"),
    "outbox": ("outbox", "OutboxCheck"),
    "recency": ("recency", "RecencyCheck"),
    "live-state": ("livestate", "LiveStateCheck"),
    "direction": ("direction", "DirectionCheck"),
    "cursors": ("cursors", "CursorsCheck"),
}
SCOPES = ("hook", "recover")
# built and started before the others (run_all): live-state's start runs git, which then works while the rest load
EARLY = ("live-state",)


MAX_QUOTE = 600  # one quote: what a check read, one clean line
QUOTE_MARK = "\u27e6"  # ⟦n⟧ stands for a finding's n-th quote until the run numbers it (Q1, Q2, ...)
QUOTE_END = "\u27e7"


class Quote:
    """Text a check read from what it does not control (a transcript, git, gh, a path or a step recorded in the WAL):
    the ledger names it only by its reference (`Q1`), and shows it apart, the brief in a fence of its own, `recover`
    as a JSON string, so that it can neither close a quotation nor pass for the ledger's own words. what: what it is
    ("last instruction"); source: where it was read ("claude transcript"), both computed; text: one clean line."""

    __slots__ = ("ref", "source", "text", "what")

    def __init__(self, what: str, source: str, text: object) -> None:
        self.what = _line(what, 80)
        self.source = _line(source, 120)
        self.text = _line(text, MAX_QUOTE)
        self.ref = ""  # Q1, Q2, ... once the run has numbered it (number())

    def as_json(self) -> dict[str, str]:
        return {"ref": self.ref, "what": self.what, "source": self.source, "text": self.text}


class Quoting:
    """The quotes of one finding while a check words it: each call keeps one and gives the mark that stands for it
    in the finding's message or next action."""

    def __init__(self) -> None:
        self.quotes: list[Quote] = []

    def __call__(self, what: str, source: str, text: object) -> str:
        self.quotes.append(Quote(what, source, text))
        return f"{QUOTE_MARK}{len(self.quotes) - 1}{QUOTE_END}"


class Finding:
    """One line of the ledger: a check's status (one of STATUSES), what it found, what to do next, and the single
    fact to ask a human for when nothing else gives a safe step.

    A message says what was found and where, in words computed by the check; what the check read from what it does
    not control stands in its `quotes` (Quoting), named in the text by a mark that the run turns into its reference
    (number()). Message, next_action and ask are each kept to one clean line (no control or invisible characters, no
    line breaks, at most MAX_MESSAGE characters), so that none can start a line of its own in the brief or on a
    terminal. A status outside STATUSES (a user's check, a typo) is never taken as clean: the finding becomes
    `failed`, its message prefixed with 'unknown status "x": '."""

    def __init__(
        self,
        check: str,
        status: str,
        message: str,
        next_action: str | None = None,
        ask: str | None = None,
        quotes: list[Quote] | None = None,
    ) -> None:
        self.check = _line(check, 64)
        if status not in STATUSES:
            message = f"unknown status {quoted(status, 16)}: {message}"
            status = FAILED
        self.status = status
        self.message = _said(message, MAX_MESSAGE)
        self.next_action = None if next_action is None else _said(next_action, MAX_MESSAGE)
        self.ask = None if ask is None else _said(ask, MAX_MESSAGE)
        self.quotes: list[Quote] = list(quotes) if quotes else []

    def said(self, text: str | None = None) -> str:
        """The message (or text, its next action) with each quote in its place, as an inline quotation (text.quoted:
        its own quote marks escaped, so it ends where the quoted text ends): for a reader that wants one line (a test,
        a log), never for the brief, which keeps them apart."""
        out = self.message if text is None else text
        for i, quote in reversed(list(enumerate(self.quotes))):  # Q10 before Q1
            spelled = quoted(quote.text)
            out = out.replace(f"{QUOTE_MARK}{i}{QUOTE_END}", spelled)
            if quote.ref:
                out = out.replace(quote.ref, spelled)
        return out

    def said_next(self) -> str | None:
        """The next action as said() spells the message; None when there is none."""
        return None if self.next_action is None else self.said(self.next_action)

    def as_dict(self) -> dict[str, str | None]:
        """`resume --json`'s `findings` entry (its contract: these four keys)."""
        return {"check": self.check, "status": self.status, "message": self.message, "next_action": self.next_action}

    def as_ledger(self) -> dict[str, str | None]:
        """`recover --json`'s `checks` entry: {"name", "status", "finding", "next"} (next None when it has none)."""
        return {"name": self.check, "status": self.status, "finding": self.message, "next": self.next_action}


def number(findings: list[Finding]) -> list[Quote]:
    """Every finding's quotes numbered Q1, Q2, ... in the ledger's order, the marks in its message and next action
    replaced by those references; the quotes, in order. Numbering again changes nothing."""
    out: list[Quote] = []
    for f in findings:
        for i, quote in enumerate(f.quotes):
            if not quote.ref:
                quote.ref = f"Q{len(out) + 1}"
                mark = f"{QUOTE_MARK}{i}{QUOTE_END}"
                f.message = f.message.replace(mark, quote.ref)
                if f.next_action is not None:
                    f.next_action = f.next_action.replace(mark, quote.ref)
            out.append(quote)
    return out


def _line(text: object, most: int) -> str:
    """One clean line of at most `most` characters (raw text: a quote's, a name)."""
    line = clean(str(text)[: 2 * most], one_line=True)
    return line if len(line) <= most else line[: most - 1] + "…"


def _said(text: object, most: int) -> str:
    """A message, next action or ask as one clean line of at most `most` characters: its inline quotations
    (text.quoted) are never left open by the cut."""
    return cut_line(clean(str(text)[: 2 * most], one_line=True), most)


class StateView:
    """What a check may know of the opened state: where it is and whose it is. Not the State: a check reads, never
    writes."""

    __slots__ = ("actor", "root")

    def __init__(self, root: str, actor: str) -> None:
        self.root = root
        self.actor = actor

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):
            raise AttributeError(f"a check's view of the state is read-only ({name})")
        object.__setattr__(self, name, value)


class HookEvent:
    """The hook event a brief answers, as the checks may see it: which harness (claude, codex, gemini), its session
    id, the transcript path the harness gave in the event, and the SessionStart source (startup, resume, clear,
    compact; None for other events). Every field is None when unknown. The harness is the authority for its own
    event, so `transcript_path` is the one path a check may read without the folder test that a path recorded in
    the WAL must pass (checks/recency.py); it must still be a regular file, read within the scope's bound."""

    __slots__ = ("harness", "session_id", "source", "transcript_path")

    def __init__(
        self,
        harness: str | None = None,
        session_id: str | None = None,
        transcript_path: str | None = None,
        source: str | None = None,
    ) -> None:
        self.harness = harness
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.source = source


class Context:
    """What the checks look at, read-only: the state folder and its actor (`state`, None when the state could not
    load), what reconciliation found, the views' text as the brief read them, and the error that stopped the load.

    Keyword-only, each with a default that keeps the old four-argument call meaning what it meant:
    - scope: "hook" (SessionStart, BeforeModel, `rehydrate resume`: the start-up bound, git 2 s a call, no gh, no
      user checks) or "recover" (`rehydrate recover`: git 10 s a call, gh, user checks). Anything else: ValueError.
    - since: what the WAL holds since the last checkpoint (store.wal.since.Since), built once by the caller; None when
      the caller built none (then the checks that need it say they did not look: skipped, or n/a without a state).
    - transcript: the path given with `recover --transcript` (trusted: the user named it); None otherwise.
    - event: the HookEvent being answered; None outside a hook.
    - config: state/config.json as read (untrusted: it arrived by git pull); {} when absent or unreadable.
    - env: the environment for the processes a check starts (PATH finds git and gh); None means os.environ.
    `shared` is the one mutable part: a dict the checks of one run share (the git probe live-state starts and
    direction reads, under "gitnow"). Nothing else of a Context is changed by a check."""

    def __init__(
        self,
        state: State | None,
        reconciled: Outcome | None,
        error: str | None = None,
        views: dict[str, str | None] | None = None,
        *,
        scope: str = "hook",
        since: Since | None = None,
        transcript: str | None = None,
        event: HookEvent | None = None,
        config: dict[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}: one of {', '.join(SCOPES)}")
        self.state = StateView(state.root, state.actor) if state is not None else None
        self.reconciled = reconciled
        self.error = error
        self.views: dict[str, str | None] = dict(views) if views is not None else {}
        self.scope = scope
        self.since = since
        self.transcript = transcript
        self.event = event
        self.config: dict[str, Any] = dict(config) if config is not None else {}
        self.env = env
        self.shared: dict[str, Any] = {}


def registry(scope: str = "hook", built: Callable[[Check], None] | None = None) -> list[Check]:
    """The built-in checks in ORDER, one instance each; names without a module yet (mailbox, outbox) are left out,
    and so, in hook scope, are checks whose `scope` is "recover". Each module is imported here, never at the top: a
    check's imports are paid only when the registry is built. A user's checks are not in it: `recover` appends them
    (checks/user.py), after cursors. built: called with each check as soon as it is built, those in EARLY first
    (run_all starts each there: the processes a start runs work while the other checks' modules load)."""
    made: dict[str, Check] = {}
    for name in (*EARLY, *(n for n in ORDER if n not in EARLY)):
        check = _built(name, scope)
        if check is not None:
            made[name] = check
            if built is not None:
                built(check)
    return [made[name] for name in ORDER if name in made]


def _built(name: str, scope: str) -> Check | None:
    """The check named name, its module imported; None when it has no module or is not run in scope."""
    where = _MODULES.get(name)
    if where is None:
        return None
    check: Check = getattr(__import__(f"rehydrate.checks.{where[0]}", fromlist=[where[1]]), where[1])()
    if scope == "hook" and getattr(check, "scope", "hook") == "recover":
        return None
    return check


def run_all(context: Context, checks: list[Check] | None = None) -> list[Finding]:
    """Every check's findings, in the checks' order. First each check's optional `start(context)`, then each
    `run(context)`; a check whose start or run raises gives one `failed` finding instead (and is not run after a
    failed start). Without checks given, the registry's (see start_all)."""
    return start_all(context, checks).run()


def start_all(context: Context, checks: list[Check] | None = None) -> Started:
    """run_all's first half: each check's optional `start(context)`, so that what the starts run (git) works while
    the caller does more before Started.run() collects it. Without checks given, each of the registry's is started
    as soon as it is built (registry)."""
    return Started(context, checks)


class Started:
    """Checks whose starts ran (start_all); run() gives their findings (run_all's second half), once."""

    def __init__(self, context: Context, checks: list[Check] | None) -> None:
        self._context = context
        self._begun: list[Check] = []  # in the order they were started
        self._broken: dict[int, Finding] = {}
        try:
            self._checks = checks if checks is not None else registry(context.scope, self._start)
            for check in self._checks:
                if not any(check is other for other in self._begun):
                    self._start(check)
        except BaseException:  # a later check's module failed to load: what the earlier starts run is stopped
            for check in self._begun:
                stop = getattr(check, "stop", None)
                if stop is not None:
                    try:
                        stop(context)
                    except Exception:
                        pass
            raise

    def _start(self, check: Check) -> None:
        self._begun.append(check)
        begin = getattr(check, "start", None)
        if begin is None:
            return
        try:
            begin(self._context)
        except Exception as e:
            self._broken[id(check)] = Finding(check.name, FAILED, f"the check raised {type(e).__name__}: {e}")

    def run(self) -> list[Finding]:
        findings: list[Finding] = []
        for check in self._checks:
            if id(check) in self._broken:
                findings.append(self._broken[id(check)])
                continue
            try:
                findings += check.run(self._context)
            except Exception as e:
                findings.append(Finding(check.name, FAILED, f"the check raised {type(e).__name__}: {e}"))
        return findings


def confidence(findings: list[Finding]) -> str:
    """`recovered`, or `degraded (a, b)` naming each check with a degraded, failed or skipped finding, in order of
    first appearance (the ledger's order). ok and n/a never degrade. checks/ledger.summarize gives the same."""
    bad = []
    for f in findings:
        # skipped: the check should have looked and could not; an unlooked place is not a clean one
        if f.status in LOWERING and f.check not in bad:
            bad.append(f.check)
    return "recovered" if not bad else f"degraded ({', '.join(bad)})"
