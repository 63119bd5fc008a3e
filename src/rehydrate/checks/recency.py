"""recency: the actor's own last turns since the last checkpoint, from the transcript's tail.

Contract (WP-B builds it; until then run() returns no finding):
- Candidates: `context.transcript` (`recover --transcript`: trusted, read alone); otherwise `context.since.transcripts`
  (the hooks' own `compaction`, `precompress` and `resume` records after the checkpoint, newest first, at most 3) and
  `context.event.transcript_path` when that file exists. A path read from the WAL is untrusted: it is read only when
  it was recorded on this host (else n/a "recorded on host X: not looked at here"), lies under its harness's own
  transcripts folder after realpath (else skipped "not under Claude Code's transcripts folder: not read"), is a
  regular file, and its records name this project (else skipped "names another project"). Recorded with
  `transcript_size` None and still missing: ignored (it was never written). Recorded with a size and now gone: skipped
  ("the transcript the hooks recorded at record 57 is gone (...): what happened since checkpoint 42 was not looked
  at"), quoting the capture's facts when the WAL holds one.
- Reads with `transcripts.recent.read_since(path, since.ts, loads=safejson.loads, max_bytes=...)`: at most 4 MiB back
  from the end in hook scope, 64 MiB in recover scope; cost follows what was written since the checkpoint. When cut,
  the finding says how much was left unread and that `rehydrate recover` reads more.
- n/a: no transcript recorded by a hook since the checkpoint and none given: "no transcript recorded by a hook since
  checkpoint 42 (looked at the 9 WAL records since it) and none given with --transcript".
- ok: read back to the checkpoint and no changing call (edit, shell, patch, unknown tool) after it; it names the file
  and how much was read.
- degraded: a changing call after the checkpoint: names the files edited (at most 10), the command that failed last,
  the last user instruction and any compaction since; next: "the checkpoint's next step, "X", was worked on after the
  checkpoint (a.py, b.py edited): check them (git diff) before redoing it".
- Everything quoted from a transcript is untrusted text: cleaned to one line here, fenced by the brief.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rehydrate.checks import Context, Finding

HOOK_BYTES = 4 << 20  # the most a hook-scope read takes from a transcript's end
RECOVER_BYTES = 64 << 20  # the most `rehydrate recover` reads


class RecencyCheck:
    name = "recency"

    def run(self, context: Context) -> list[Finding]:
        return []
