"""The canary: a rule with a random token planted in the state, two questions, and a grader. An agent that comes back
to its state (after a compaction, in a fresh session) can quote the canary rule and the exact next action; one that
answers from a prose summary or from nothing cannot. Run it every day: the only way to know recovery works.

- plant: a rejected approach whose text ends with `(canary canary-<8 hex>)` (10_invariants.md, append-only) and a
  `canary` record (`data = {"event": "plant", "token", "rule", "entry"}`).
- retire: a decision line `Retire canary canary-<hex>: ...` and a `canary` record; never a rewrite.
- active canaries: the tokens of rejected lines in 10 (as reconciliation verified the file) less those retired.
- grade: the answer passes only when it holds the exact next action of this actor's program counter (99_next.md,
  or next/<actor>.md) and, for each active canary, its rule text and its token; whitespace is compared collapsed
  (an answer may wrap lines), nothing else is forgiven.
- run: the agent command (split like a shell would, never run by one) started as a fresh process in the project's
  folder, the questions as its last argument (or on stdin), its stdout graded (its first MAX_ANSWER bytes); a
  deadline kills its process group. The run ends when the agent exits, whatever it leaves running. The result is a
  `canary` record (`event: run`: the command, passed, what was missing, exit code, duration, timed_out, the
  sha256 of the answer graded and the bytes the agent wrote, `answer_bytes`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time

from rehydrate import runner
from rehydrate.errors import UsageError
from rehydrate.store import actors, layout, views
from rehydrate.text import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.store.state import State

DEFAULT_RULE = "Edit db/schema.sql without a migration file"
TOKEN = re.compile(r"\(canary (canary-[0-9a-f]{8})\)")
RETIRED = re.compile(r"decision: Retire canary (canary-[0-9a-f]{8})\b")
QUESTIONS = """\
Answer from this project's working state (the state/ folder, or the brief you were given at the start), not from
memory, and quote exactly:
1. What is the current next action recorded in the state (state/99_next.md, "next allowed action")?
2. Which approaches are off limits in this project (the rejected approaches in state/10_invariants.md)? Quote each
   one as recorded.
"""
DEFAULT_TIMEOUT = 300.0
MAX_ANSWER = 1 << 20


class Canary:
    def __init__(self, token: str, rule: str) -> None:
        self.token = token
        self.rule = rule  # the rejected approach's text, the token's mark included


class Expected:
    """What a passing answer quotes: the next action and each active canary."""

    def __init__(self, next_action: str | None, canaries: list[Canary], source: str) -> None:
        self.next_action = next_action
        self.canaries = canaries
        self.source = source  # where the next action was read (state/99_next.md)


class Grade:
    def __init__(self, passed: bool, missing: list[str]) -> None:
        self.passed = passed
        self.missing = missing


def _collapse(text: str) -> str:
    return " ".join(text.split())


def active(invariants: str) -> list[Canary]:
    """The canaries planted in 10_invariants.md's text and not retired, oldest first."""
    retired = set(RETIRED.findall(invariants))
    found: dict[str, Canary] = {}
    for line in invariants.splitlines():
        if " rejected: " not in line:
            continue
        mark = TOKEN.search(line)
        if mark is None or mark.group(1) in retired:
            continue
        text = line.split(" rejected: ", 1)[1]
        if mark.group(0) in text:  # the rule: the approach's text up to its token's mark (a rule of no words: none)
            rule = text[: text.index(mark.group(0)) + len(mark.group(0))]
            if rule[: -len(mark.group(0))].strip():
                found[mark.group(1)] = Canary(mark.group(1), rule)
    return list(found.values())


def expected(state: State) -> Expected:
    """The next action and the active canaries, read from the state as reconciliation verified it."""
    with state.reading() as snap:
        name = actors.pc_names(state.actor, snap.last)[0]
        raw = state.view_bytes(name, snap)
        inv = state.view_bytes(layout.INVARIANTS, snap)
    fields = views.parse_next(raw.decode("utf-8", "replace")) if raw else {}
    text = inv.decode("utf-8", "replace") if inv else ""
    return Expected(fields.get("next"), active(text), state.rel(name))


def grade(answer: str, want: Expected) -> Grade:
    said = _collapse(answer)
    missing = []
    if not want.next_action:
        missing.append(f"{want.source} holds no next action to quote")
    elif not _quotes(said, _collapse(want.next_action)):
        missing.append(f'the next action from {want.source} ("{_cut(want.next_action)}")')
    for canary in want.canaries:
        if canary.token not in said:
            missing.append(f"the canary token {canary.token}")
        elif not _quotes(said, _collapse(canary.rule.replace(f"(canary {canary.token})", ""))):
            missing.append(f'the canary rule ("{_cut(canary.rule)}")')
    return Grade(not missing, missing)


def _quotes(said: str, text: str) -> bool:
    """text in said as a whole: not the middle of a longer word (a next action "b" is not in "db/schema.sql")."""
    return re.search(r"(?<!\w)" + re.escape(text) + r"(?!\w)", said) is not None


def _cut(text: str, limit: int = 120) -> str:
    text = _collapse(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def new_token() -> str:
    return "canary-" + os.urandom(4).hex()


def plant(state: State, rule: str | None) -> tuple[Canary, Any]:
    """Append the canary rule (a rejected approach) and a `canary` record."""

    text = clean(rule or DEFAULT_RULE, one_line=True).rstrip(".")
    if not text:
        raise UsageError("the canary rule is empty", field="rule")
    token = new_token()
    approach = f"{text} (canary {token})"
    because = "a canary: `rehydrate canary check` asks an agent to quote it, to show that it reads its state"
    entry = state.reject(approach, because)
    assert entry.record is not None
    out = state.record(
        "canary", {"event": "plant", "token": token, "rule": approach, "entry": entry.record["data"]["id"]}
    )
    return Canary(token, approach), out


def retire(state: State, token: str | None) -> tuple[list[str], Any]:
    """Retire one canary (or every active one): a decision line and a `canary` record each, appended."""
    inv = state.view_text("10_invariants.md") or ""
    live = [c.token for c in active(inv)]
    if token is not None and token not in live:
        raise UsageError(f"no active canary {token}", "`rehydrate canary check` lists none; plant one first")
    chosen = [token] if token is not None else live
    if not chosen:
        raise UsageError("no active canary to retire", "`rehydrate canary plant` plants one")
    out = None
    for t in chosen:
        state.invariant(f"Retire canary {t}: its rule no longer applies", "rehydrate canary retire")
        out = state.record("canary", {"event": "retire", "token": t})
    return chosen, out


class Ran:
    def __init__(self, answer: str, code: int | None, duration: float, timed_out: bool, size: int) -> None:
        self.answer = answer
        self.code = code
        self.duration = duration
        self.timed_out = timed_out
        self.size = size  # the bytes the agent wrote on stdout (until it exited, or the deadline), kept or not


def run_agent(command: str, cwd: str, timeout: float, stdin: bool) -> Ran:
    """The agent command as a fresh process with the questions; its stdout (at most MAX_ANSWER bytes kept, the rest
    read and dropped as it comes, so that a flood costs no memory). The run ends when the agent exits (its pipe read
    for a short grace more: a process it leaves behind may hold it for ever) or at the deadline, when its process
    group is killed; a leftover in a session of its own (setsid) survives that, so its pipe is closed, not awaited."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"the agent command cannot be split into words: {e}", field="agent") from None
    if not argv:
        raise UsageError("the agent command is empty", field="agent")
    if not stdin:
        argv.append(QUESTIONS)
    started = time.monotonic()
    try:
        child = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the deadline kills the agent's whole group
        )
    except OSError as e:
        raise UsageError(f"the agent command {argv[0]} cannot start: {e.strerror or e}", field="agent") from None
    if child.stdin is not None:
        # a few hundred bytes into an empty pipe: the write never waits for the agent to read
        try:
            child.stdin.write(QUESTIONS.encode())
            child.stdin.close()
        except OSError:  # the agent exited, or closed its stdin, without reading the questions
            pass
    kept = bytearray()
    size = 0

    def keep(chunk: bytes) -> None:
        nonlocal size
        size += len(chunk)
        if len(kept) < MAX_ANSWER:
            kept.extend(chunk[: MAX_ANSWER - len(kept)])

    assert child.stdout is not None
    try:
        pumped = runner.pump(child, {child.stdout.fileno(): keep}, started + timeout)
    finally:
        child.stdout.close()
    duration = (pumped.ended or time.monotonic()) - started
    timed_out = pumped.ended is None
    return Ran(kept.decode("utf-8", "replace"), child.returncode, duration, timed_out, size)
