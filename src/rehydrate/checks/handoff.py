"""handoff: the sunset note (state/20_handoff.md), read in full, and whether it predates the last checkpoint's work.

Contract:
- Reads the whole file through `fsio.read_bytes(path, MAX_HANDOFF)`, never just its title (the brief still shows its
  head and tail). Inputs: `context.since.handoff` (the last `handoff` record after the last checkpoint, or None) and
  `context.since.checkpoint`. The file and the WAL are untrusted (they arrived by git pull).
- n/a: no handoff note: "no handoff note (state/20_handoff.md absent)", or one cleared by `handoff --clear` (the file
  blank, as its record binds it).
- ok: written after the last checkpoint: "state/20_handoff.md read in full (2,140 bytes, 38 lines), written at record
  51 after checkpoint 50".
- degraded: written before the last checkpoint (no `handoff` record since it), and it stays so after every later
  checkpoint until a new handoff is written: "no handoff record since checkpoint 42 (the 9 WAL records since it):
  it predates the last checkpoint's work" (the record that wrote it lies before the checkpoint, where the bounded
  back-scan does not go); next: "read it as background; where it and checkpoint 42 disagree, the checkpoint wins; write
  a new handoff when you stop".
- skipped: unreadable, larger than MAX_HANDOFF, or the WAL back-scan did not reach the checkpoint (`since.complete`
  false, or `since` None while the state loaded).
- Runs in both scopes; bounded by MAX_HANDOFF bytes and the back-scan's cap.
"""

from __future__ import annotations

import os

from rehydrate.checks import DEGRADED, NA, OK, SKIPPED, Finding
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store import WORDS, layout, records
from rehydrate.text import named, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Context
    from rehydrate.store.wal.since import Since

REL = f"state/{layout.HANDOFF}"
MAX_BYTES = 4 * layout.MAX_HANDOFF  # the handoff's cap is in characters: up to 4 bytes each in UTF-8
NEXT = "read it as background; where it and {cp} disagree, the checkpoint wins; write a new handoff when you stop"
THEN = "; then go on with {cp}'s next step: {step}"  # the checkpoint's step stays in the ledger's next safe action


class HandoffCheck:
    name = "handoff"

    def run(self, context: Context) -> list[Finding]:
        if context.state is None:
            return []  # the state did not load: identity says so
        path = os.path.join(context.state.root, layout.HANDOFF)
        try:
            data = fsio.read_bytes(path, MAX_BYTES, WORDS)
        except RehydrateError as e:
            why = e.message.replace(path, REL)  # the note as the project names it, not this machine's path
            return [self._finding(SKIPPED, f"{REL} could not be read in full: {why}", "read it by hand")]
        if data is None:
            return [self._finding(NA, f"no handoff note ({REL} absent)")]
        if data in (b"", b"\n"):  # `rehydrate handoff --clear` writes one newline: the record says there is no note
            return [self._finding(NA, f"no handoff note ({REL} cleared)")]
        since = context.since
        if since is None or not since.complete:
            why = "the WAL was not read back" if since is None else since.problem or "the WAL back-scan stopped"
            text = f"{REL} read in full ({_size(data)}); not placed against the last checkpoint: {why}"
            return [self._finding(SKIPPED, text, "rehydrate log --op handoff, to see when it was written")]
        cp = _checkpoint(since)
        if since.handoff is not None:
            seq = named(since.handoff.get("seq"), 20)
            text = f"{REL} read in full ({_size(data)}), written at record {seq} after {cp}"
            return [self._finding(OK, text)]
        text = (
            f"{REL} read in full ({_size(data)}); no handoff record since {cp} (the {since.records} WAL records "
            "since it): it predates the last checkpoint's work"
        )
        # the step arrived with the WAL: one quotation (text.quoted), so that it ends where its text ends
        step = NEXT.format(cp=cp) + (THEN.format(cp=cp, step=quoted(since.next, 300)) if since.next else "")
        return [self._finding(DEGRADED, text, step)]

    def _finding(self, status: str, text: str, next_action: str | None = None) -> Finding:
        return Finding(self.name, status, text, next_action)


def _size(data: bytes) -> str:
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return f"{len(data):,} bytes, {lines:,} lines"


def _checkpoint(since: Since) -> str:
    return (
        f"the init (record {since.seq})"
        if records.op_of(since.checkpoint) is records.INIT
        else f"checkpoint {since.seq}"
    )
