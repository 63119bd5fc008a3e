"""Evidence for claims: receipts (a command run: its exit code and the tree it ran on), stamps (files' sha256) and
approvals (a reviewer's file accepted against its finished transcript), and the claims a checkpoint binds to them.

Records (each in the writer's own log, written under the state's lock):
- `receipt`: `data = {"argv", "cwd", "exit", "duration", "stdout", "stderr", "bytes", "tree"[, "tree_after"]
  [, "output_cut"][, "claim"]}`; `git` as a checkpoint's (HEAD, branch, dirty). Its id is `rc-` and the first 12 hex
  digits of its `h`: it names the record it is the hash of, and cannot be minted for another. `tree` is the git tree
  of the work tree when the command started (`tree_of`): tracked and untracked files that git does not ignore, the
  state folder left out; `tree_after` when the command left another. `duration` runs to the command's own exit;
  `output_cut` (true) when a process it left behind still held its stdout or stderr then: `stdout`, `stderr` and
  `bytes` cover what was read until then and for a short grace after (rehydrate/runner.py).
- `stamp` and `accept`: `data = {"files": [...] | "file", ..., "evidence": {...}}`.
- `checkpoint`: `data.claims = [{"text", "receipt"?: {"id", "h", "exit", "tree", "tree_after"?, "argv", "ts"}}]`
  (a receipt's facts copied, so that the check needs the checkpoint alone) and `data.evidence`.

`evidence` is the whole set in force: `{"stamps": {path: sha256}, "approvals": {path: {"sha256", "transcript",
"transcript_sha256", "harness", "ts"}}}`. Every stamp, accept and checkpoint record carries it whole, so the newest of
them since the last checkpoint (store/wal/since.py reads back that far anyway) holds it, and a rotate record carries
it in the checkpoint it carries: what is checked costs what is stamped, never the length of the history.

Paths are the project's (the state folder's parent), relative and with `/`. Everything read back from a record is
untrusted (it arrived by git pull): a path must pass `safe_rel` before a file is opened, a hash is compared, never
used as an argument, and a command line is shown as data, never suggested as a command to run.

inforce: what the records say (a receipt's id, the claims, the set in force, a recorded path or hash checked), read
without a file; paths: the files a user names and the paths a record holds, and their sha256; worktree: the work
tree as a git tree; prepare: the write's side, under the lock (the log read back to the last checkpoint, the set
carried forward, the claims resolved). Each imports only those named before it.
"""
