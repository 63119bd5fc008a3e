"""`rehydrate recover`: the recovery ledger (brief/recover.py computes it, read-only), printed as text or JSON."""

from __future__ import annotations

import os
import stat
import sys

from rehydrate.brief.recover import Recovery, recover
from rehydrate.cli import cli_hint, common_options, emit_json, flagged, say
from rehydrate.errors import ExitCode, UsageError
from rehydrate.text import clean, named, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from rehydrate.checks.ledger import Ledger


def args_recover(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the recovery checks in their fixed order (identity, state, handoff, recency, live-state, direction, "
        "cursors, then the user's own checks named in state/config.json) and print the ledger: one line per "
        "finding, the confidence, and the next safe action, or the one fact to ask a human. Read-only: it writes "
        "nothing, not even a record. Exit 0 when recovered, 1 when degraded, 3 when the state does not load."
    )
    p.add_argument(
        "--transcript",
        metavar="PATH",
        help="the agent's transcript to read back to the last checkpoint (a regular file), in place of the ones "
        "the hooks recorded",
    )
    common_options(p)
    for action in p._actions:
        if action.dest == "actor":
            action.help = "the actor whose WAL is read (default: $REHYDRATE_ACTOR, else 'agent')"
        elif action.dest == "json":
            action.help = (
                "print one JSON object: version, command, ok, confidence, degraded, checks, next, ask "
                "(the shape is pinned)"
            )


def cmd_recover(args: argparse.Namespace) -> int:
    got = recover(
        args.dir, args.actor, _transcript(args.transcript), words=lambda e: (flagged(e, args), cli_hint(e, args))
    )
    summed = got.summed
    assert summed is not None
    code = ExitCode.STATE if got.state is None else (0 if summed.recovered else ExitCode.DISCREPANCY)
    if args.json:
        emit_json("recover", summed.recovered, **summed.as_json())
    else:
        _print(got, summed)
        if got.error is not None:
            hint = cli_hint(got.error, args)
            print(f"rehydrate: {flagged(got.error, args)}" + (f"\n  hint: {hint}" if hint else ""), file=sys.stderr)
    return code


def _transcript(path: str | None) -> str | None:
    """--transcript as given, once it names a regular file (a FIFO, a device or a folder is refused)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else "cannot be read"
        raise UsageError(f"{path}: {why}", "give the path of a transcript file", field="transcript") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{path}: not a regular file", "give the path of a transcript file", field="transcript")
    return os.path.abspath(path)


def _print(got: Recovery, summed: Ledger) -> None:
    """The ledger as text: a header naming the checkpoint, one line per finding (a non-ok one's next under it), the
    confidence, the next safe action or the question for a human, then what the findings quote (Q1, ...)."""

    def one(text: str) -> str:
        return clean(text, one_line=True)

    lines = [one(_header(got))]
    for f in summed.findings:
        lines.append(one(f"- {f.check}: {f.status}: {f.message}"))
        if f.status not in ("ok", "n/a") and f.next_action:
            lines.append("  next: " + one(f.next_action))
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
    # the confidence's words are the ledger's own (checks/ledger.py): coloured on a terminal, never quoted text
    say(one(f"confidence: {summed.confidence}"), "good" if summed.recovered else "bad")
    lines = []
    if summed.next is not None:
        lines.append(one(f"next safe action: {summed.next}"))
    else:
        lines.append(one(f"ask a human: {summed.ask}"))
    if summed.deferred:
        lines.append(one(summed.deferred))
    if summed.quotes:  # each an inline quotation: it can neither end its line nor pass for the ledger's words
        lines.append("quoted by the checks (text they read, data only):")
        for q in summed.quotes:
            lines.append(f"  {one(f'{q.ref} ({q.what}, {q.source}):')} {quoted(q.text)}")
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")


def _header(got: Recovery) -> str:
    """`rehydrate recover · state/ · actor agent · checkpoint 42 at 2026-11-29T22:04Z (HEAD a1b2c3d on feat)`."""

    state, found = got.state, got.since
    if state is None:
        return "rehydrate recover · the state did not load"
    where = state.rel("").rstrip("/") + "/"
    head = f"rehydrate recover · {where} · actor {state.actor}"
    if found is None or found.seq is None:
        return head + " · no checkpoint found"
    when = f" at {named(found.ts[:16] + 'Z')}" if found.ts else ""
    git = found.git or {}
    sha, branch = git.get("head"), git.get("branch")
    on = f" on {named(branch)}" if isinstance(branch, str) else ""  # the WAL's: untrusted
    at = f" (HEAD {named(str(sha)[:7])}{on})" if sha else ""
    return f"{head} · checkpoint {found.seq}{when}{at}"
