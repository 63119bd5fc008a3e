"""live-state's claims, stamps and approvals, re-checked against the work tree now (store/evidence/).

Contract of `findings(context) -> list[Finding]` (called by checks/livestate.py):
- Claims: the last checkpoint's and those of `receipt` records since (`context.since.claims`). Each one finding:
  verified (ok) when its receipt exited 0 and the work tree now, as `git add -A` would take it (state folder left
  out), is the tree the command started on (a command that changed files leaves its claim stale, and it is said);
  stale (degraded) when the tree changed since, naming the changed paths where git can; failed (degraded) when the
  command exited non-zero; unverified (n/a: nothing to check) when no receipt backs it, or its receipt recorded no
  tree. The tree now not computed (git past its deadline, an error): skipped.
- Stamps and approvals (`context.since.evidence`): one finding for the stamps (ok: every file has its sha256;
  degraded: the changed or gone ones, at most 10 named) and one per approval (degraded when its file changed).
  In hook scope at most HOOK_HASH_BYTES are hashed; the rest is skipped, and said.
- Everything read from the WAL is untrusted: a path must be a plain relative path (inforce.safe_rel) and stay in
  the project after symlinks are followed, else it is reported, never opened; a recorded command line is quoted as
  data (cut to 120 characters), never suggested as a command.
"""

from __future__ import annotations

import os

from rehydrate.checks import DEGRADED, NA, OK, SKIPPED, Finding
from rehydrate.store.evidence import inforce, paths
from rehydrate.text import named, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rehydrate.checks import Context

NAME = "live-state"
HOOK_HASH_BYTES = 64 << 20  # the most a hook's check hashes of stamped files
RECOVER_HASH_BYTES = 4 << 30  # and `recover`'s
NAMED = 10
TREE_DEADLINE = {"hook": 4.0, "recover": 30.0}


def findings(context: Context) -> list[Finding]:
    since = context.since
    if since is None or context.state is None:
        return []
    root = context.state.root
    out: list[Finding] = []
    claims = [c for c in since.claims if isinstance(c, dict)]
    if claims:
        out.extend(_claims(context, root, claims))

    force = inforce.in_force(since.evidence)
    if force["stamps"] or force["approvals"]:
        out.extend(_stamps(context, root, force))
    return out


def _quote(text: object, limit: int = 120) -> str:
    """Recorded text (untrusted) as one inline quotation (text.quoted): its quotes and backslashes escaped, so that
    it cannot close its quotes and pass for the ledger's own words."""

    return quoted(text, limit)


def _name(text: object, most: int = 120) -> str:
    """A recorded path, time or exit code (untrusted) as it is when it is plainly a name, else quoted (text.named)."""

    return named(text, most)


def _approval(path: str, approval: dict[str, Any], found: object) -> Finding:
    """An approved file against the hash it was accepted with (found: its sha256 now; None: gone or unreadable)."""
    when = _name(approval["ts"], 40) if approval.get("ts") else "its acceptance"
    if found == approval.get("sha256"):
        return Finding(NAME, OK, f"approval {_name(path)} is the file accepted at {when} (sha256)")
    state = "is gone" if found is None else "changed"
    text = f"approval {_name(path)} {state} since it was accepted at {when} (sha256): the review no longer covers it"
    return Finding(NAME, DEGRADED, text, "have the reviewer approve it again, then `rehydrate accept` it")


def _command(receipt: dict[str, Any]) -> str:
    """The recorded command line as data: its words as a list of quotations (never a command to paste), each cut on
    its own, so that a cut never leaves one open."""
    argv = receipt.get("argv")
    if isinstance(argv, list) and argv:
        words = [quoted(a, 60) for a in argv[:6]]
        return "command [" + ", ".join(words) + (f", and {len(argv) - 6} more" if len(argv) > 6 else "") + "]"
    return "its command"


def _receipt_id(receipt: dict[str, Any]) -> str:
    """rc- and hex digits, as recorded; anything else is not shown (the record is untrusted)."""
    rid = receipt.get("id")
    ok = (
        isinstance(rid, str)
        and rid.startswith("rc-")
        and 3 < len(rid) <= 67
        and all(c in "0123456789abcdef" for c in rid[3:])
    )
    return str(rid) if ok else "(with no valid id)"


def _claims(context: Context, root: str, claims: list[dict[str, Any]]) -> list[Finding]:
    from rehydrate.store.evidence import worktree  # git's plumbing: only where there are claims to re-check

    tree: Any = None
    out = []
    for claim in claims:
        said = f"claim {_quote(claim.get('text'))}"
        receipt = claim.get("receipt")
        if not isinstance(receipt, dict):
            out.append(Finding(NAME, NA, f"{said} is unverified: no receipt backs it (`rehydrate run --claim`)"))
            continue
        rid = _receipt_id(receipt)
        cmd = _command(receipt)
        code = receipt.get("exit")
        if not isinstance(code, int) or isinstance(code, bool) or code != 0:
            text = f"{said} failed: {cmd} exited {_name(code, 12)} (receipt {rid})"
            nxt = "fix what failed and run it again through `rehydrate run --claim`, or checkpoint without the claim"
            out.append(Finding(NAME, DEGRADED, text, nxt))
            continue
        ran_on = [t for t in (receipt.get("tree"),) if inforce.is_hex(t)]
        if not ran_on:
            out.append(Finding(NAME, NA, f"{said} is unverified: receipt {rid} recorded no work tree to compare"))
            continue
        if tree is None:
            tree = worktree.tree_of(root, TREE_DEADLINE.get(context.scope, 4.0))
        if tree.sha is None:
            text = f"{said} not re-checked: the work tree now could not be hashed ({_quote(tree.why)})"
            nxt = f"run the command of receipt {rid} again through `rehydrate run` before relying on the claim"
            out.append(Finding(NAME, SKIPPED, text, nxt))
            continue
        if tree.sha in ran_on:
            text = (
                f"{said} verified: {cmd} exited 0 on the work tree there is now (receipt {rid}; "
                f"tree {tree.sha[:7]}: git add -A to a scratch index, git write-tree)"
            )
            out.append(Finding(NAME, OK, text))
            continue
        changed = worktree.changed_between(root, str(ran_on[-1]), tree.sha, NAMED)
        what = (
            f": {', '.join(_name(p) for p in changed)} changed"
            if changed
            else f" (tree {str(ran_on[-1])[:7]}, now {tree.sha[:7]})"
        )
        if receipt.get("tree_after") == tree.sha:  # the tree the command left: it changed files itself
            what += " (by the command itself: the claim holds for the tree it started on)"
        text = f"{said} is stale: the work tree changed since {cmd} exited 0 (receipt {rid}){what}"
        nxt = "run it again through `rehydrate run --claim` before relying on the claim"
        out.append(Finding(NAME, DEGRADED, text, nxt))
    return out


def _stamps(context: Context, root: str, force: dict[str, Any]) -> list[Finding]:
    project = os.path.dirname(os.path.abspath(root))
    budget = HOOK_HASH_BYTES if context.scope == "hook" else RECOVER_HASH_BYTES
    spent = 0
    changed: list[str] = []
    unchecked: list[str] = []
    out: list[Finding] = []

    def now(path: str) -> str | bool | None:
        """The file's sha256 now; None: gone or unsafe; False: not hashed (past the hook's budget)."""
        nonlocal spent
        if budget is not None:
            full = os.path.join(project, *path.split("/"))
            try:
                size = os.stat(full).st_size
            except (OSError, ValueError):
                size = 0
            if spent + size > budget:
                return False
            spent += size
        return paths.check_file(project, path)

    stamps: dict[str, str] = force["stamps"]
    for path, sha in sorted(stamps.items()):
        found = now(path)
        if found is False:
            unchecked.append(path)
        elif found != sha:
            changed.append(f"{_name(path)} ({'gone or unreadable' if found is None else 'changed'})")
    if stamps:
        ok = len(stamps) - len(changed) - len(unchecked)
        if changed:
            named = ", ".join(changed[:NAMED]) + (f" and {len(changed) - NAMED} more" if len(changed) > NAMED else "")
            text = f"{len(changed)} of {len(stamps)} stamped file(s) differ from their stamp: {named} (sha256)"
            nxt = "look at what changed in them (git diff); stamp them again with `rehydrate stamp` if it was meant"
            out.append(Finding(NAME, DEGRADED, text, nxt))
        elif ok:
            listed = ", ".join(_name(p) for p in sorted(stamps)[:3]) + (" ..." if len(stamps) > 3 else "")
            out.append(Finding(NAME, OK, f"{ok} stamped file(s) match their stamp: {listed} (sha256)"))
    for path, approval in sorted(force["approvals"].items()):
        found = now(path)
        if found is False:
            unchecked.append(path)
            continue
        out.append(_approval(path, approval, found))
    if unchecked:
        text = (
            f"{len(unchecked)} stamped or approved file(s) not hashed (more than {budget >> 20:,} MiB in all): "
            f"{', '.join(_name(p) for p in unchecked[:NAMED])}"
        )
        nxt = "run `rehydrate recover`, which hashes more" if context.scope == "hook" else "check them by hand"
        out.append(Finding(NAME, SKIPPED, text, nxt))
    return out
