"""`rehydrate run` (a receipt), `rehydrate stamp` (files' hashes) and `rehydrate accept` (a reviewer's approval):
the evidence a checkpoint's claims are checked against (store/evidence/)."""

from __future__ import annotations

import argparse
import os
import sys

from rehydrate import runner
from rehydrate.cli import common_options, emit_json, flagged, open_state, problems_json, report
from rehydrate.errors import RehydrateError, UsageError
from rehydrate.store.evidence import inforce, paths, prepare, worktree
from rehydrate.text import clean
from rehydrate.transcripts.ended import ended

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

POSITIONALS = {"argv": "CMD", "files": "FILE", "file": "FILE"}


def args_run(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run CMD (no shell: quote a pipeline as `sh -c '...'`); its output passes through unchanged and its exit "
        "code is this command's. run returns when CMD exits: a background job it leaves is not waited for (its "
        "output is read 0.5 s more at most, then its pipes are closed). Then append a receipt record: the command "
        "line, exit code, duration, the sha256 of its stdout and stderr, git HEAD, and the hash of the work tree it "
        "ran on (tracked and untracked files "
        "git does not ignore; the state folder left out). The last line on stderr is `receipt: ID`: name it in "
        "`rehydrate checkpoint --claim TEXT --receipt ID`, or give --claim here and the next checkpoint carries it."
    )
    p.add_argument("--claim", metavar="TEXT", help="what a success shows (`tests pass`): the next checkpoint claims it")
    common_options(p, json_flag=False)
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ...", help="the command and its arguments")


def cmd_run(args: argparse.Namespace) -> int:
    args.json = False  # stdout is the command's
    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("no command to run", "put it after `--`: rehydrate run -- pytest -q", field="argv")
    claim = inforce.clean_claim(args.claim) if args.claim is not None else None
    state = open_state(args)  # the state must open before the command runs: a receipt nobody can record is none
    state.reconcile(repair=False)
    tree = worktree.tree_of(state.root)
    try:
        ran = runner.run(argv)
    except runner.NotRun as e:
        print(f"rehydrate: run: {argv[0]}: {e.strerror} (no receipt recorded)", file=sys.stderr)
        return 127 if e.errno == 2 else 126
    after = worktree.tree_of(state.root) if tree.sha is not None else tree
    line = " ".join(clean(a, one_line=True) for a in argv)
    data: dict[str, object] = {
        "argv": [clean(a, one_line=True) for a in argv] if len(line) <= prepare.MAX_ARGV else [],
        "cwd": os.path.relpath(os.getcwd(), paths.project_of(state)).replace(os.sep, "/"),
        "exit": ran.code,
        "duration": round(ran.duration, 3),
        "stdout": ran.stdout,
        "stderr": ran.stderr,
        "bytes": ran.bytes,
        "tree": tree.sha,
    }
    if not data["argv"]:
        data["command"] = line[: prepare.MAX_ARGV] + " ..."
    if tree.sha is None:
        data["tree_why"] = tree.why
    if after.sha is not None and after.sha != tree.sha:
        data["tree_after"] = after.sha
    if ran.cut:  # a background job held stdout or stderr when the command exited: the hashes stop there
        data["output_cut"] = True
    if claim is not None:
        data["claim"] = claim
    try:
        out = state.receipt(data)
    except RehydrateError as e:  # the command's own code matters most: said, and kept when it is not 0
        print(f"rehydrate: run: the receipt was not recorded: {flagged(e, args)}", file=sys.stderr)
        return ran.code or e.exit_code
    report(out, args)
    rec = out.record
    assert rec is not None
    if tree.sha is None:
        print(f"rehydrate: run: no tree recorded ({tree.why}): a claim on it stays unverified", file=sys.stderr)
    print(f"receipt: {inforce.receipt_id(rec)}", file=sys.stderr)
    return ran.code


def args_stamp(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Record the sha256 of each FILE (under the project, outside the state folder). Every later check (the brief's "
        "ledger, `rehydrate recover`) reports a stamped file that changed since, under live-state."
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="the files to stamp")
    p.add_argument("--drop", action="append", default=[], metavar="FILE", help="stop checking FILE (repeatable)")
    common_options(p)


def cmd_stamp(args: argparse.Namespace) -> int:
    state = open_state(args)
    out = state.stamp(args.files, args.drop)
    rec = out.record
    assert rec is not None
    data = rec["data"]
    if args.json:
        emit_json(
            "stamp", True, seq=rec["seq"], files=data["files"], dropped=data.get("dropped", []), **problems_json(out)
        )
        return 0
    report(out, args)
    for path, sha in data["files"].items():
        print(f"stamped {path} sha256:{sha[:12]}")
    for path in data.get("dropped", []):
        print(f"dropped {path}")
    total = len(data["evidence"]["stamps"]) + len(data["evidence"]["approvals"])
    print(f"record {rec['seq']}: {total} file(s) stamped or approved in force")
    return 0


def args_accept(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Accept FILE, an approval a reviewing agent wrote (for example APPROVED), only when the reviewer's "
        "transcript shows that its session reached its end (its last turn a finished answer of the model, no tool "
        "call waiting) and that the model named FILE (its path or name whole: UNAPPROVED does not name APPROVED). "
        "Records the sha256 of FILE and of the transcript; the checks "
        "report the approval if FILE changes since. Otherwise refuses (exit 1), saying why."
    )
    p.add_argument("file", metavar="FILE", help="the approval file")
    p.add_argument("--transcript", required=True, metavar="PATH", help="the reviewer's session transcript (JSONL)")
    common_options(p)


def cmd_accept(args: argparse.Namespace) -> int:
    state = open_state(args)
    rel = paths.rel_path(state, args.file)
    project = paths.project_of(state)
    try:
        found = ended(args.transcript, os.path.join(project, rel), project)
    except OSError as e:
        raise UsageError(
            f"the transcript {args.transcript} cannot be read ({e.strerror or e})", field="transcript"
        ) from None
    refusal = None
    if not found.finished:
        refusal = f"the reviewer's session has not reached its end: {found.why}"
    elif not found.named:
        refusal = f"the reviewer's transcript does not name {rel}: nothing shows that the reviewer wrote it"
    if refusal is not None:
        if args.json:
            emit_json("accept", False, file=rel, refused=refusal, harness=found.harness)
        else:
            print(f"rehydrate: accept: refused: {refusal} ({args.transcript})", file=sys.stderr)
        return 1
    transcript_sha = paths.file_sha(args.transcript, 1 << 40)
    data = {
        "file": rel,
        "sha256": paths.file_sha(os.path.join(project, rel)),
        "transcript": clean(os.path.abspath(args.transcript), one_line=True),
        "transcript_sha256": transcript_sha,
        "harness": found.harness,
        "session": clean(found.session, one_line=True)[:200] if found.session else None,
    }
    if data["sha256"] is None or transcript_sha is None:
        raise UsageError(f"{rel} or the transcript changed while it was read; try again")
    out = state.accept(data)
    rec = out.record
    assert rec is not None
    if args.json:
        emit_json("accept", True, seq=rec["seq"], **data, **problems_json(out))
        return 0
    report(out, args)
    print(f"accepted {rel} sha256:{str(data['sha256'])[:12]} ({found.harness} session ended; record {rec['seq']})")
    return 0
