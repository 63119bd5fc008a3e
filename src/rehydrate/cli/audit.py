"""`rehydrate audit`: every compaction in agent transcripts and what followed it, as text, JSON or an HTML page."""

from __future__ import annotations

import json
import os
import sys

from rehydrate.cli import extra_hint
from rehydrate.errors import RehydrateError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import TextIO

PROGRESS_AFTER = 20  # files: fewer are read too fast for a progress line to help


def args_audit(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Read Claude Code session files and Codex rollouts (PATH: a file, or every .jsonl under a "
        "folder; --all: the user's ~/.claude/projects and ~/.codex/sessions, or CLAUDE_CONFIG_DIR and "
        "CODEX_HOME). For each compaction: the context's size before and after it, files edited again that had "
        "been edited before it, identical tool calls repeated, tool errors on each side, and the model turns "
        "before the first edit; and what stood just before it (the task list, edited files, failed commands, the "
        "last requests, ids and numbers) with whether the harness's summary and rehydrate's capture kept each. "
        "Sessions are ranked by the symptoms. Record types and tools the readers do not know are counted by "
        "harness version (format drift)."
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="transcript files or folders")
    p.add_argument("--all", action="store_true", help="every transcript of the user's Claude Code and Codex")
    p.add_argument("--since", metavar="DATE", help="only files modified on or after DATE (YYYY-MM-DD)")
    p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="the symptoms only: no loss report and no format drift (each compaction's prefix is not read again)",
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write a self-contained page with a chart per session (needs the html extra)",
    )


def cmd_audit(args: argparse.Namespace) -> int:
    from rehydrate import audit

    if not args.paths and not args.all:
        raise UsageError("nothing to read", "give transcript files or folders, or --all")
    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing and len(missing) == len(args.paths) and not args.all:  # nothing to read: a mistyped path, not a report
        raise UsageError(f"no such file or folder: {', '.join(missing)}", "give transcript files or folders, or --all")
    if args.html:
        try:
            from rehydrate.audit import html_report
        except ImportError as e:
            raise UsageError(
                f"the HTML report needs Plotly, which is not installed ({e})", extra_hint("html", "plotly>=6,<8")
            ) from None
    files, errors = audit.discover(args.paths, args.all, args.since)
    stderr = getattr(sys.stderr, "_stream", sys.stderr)  # the progress line redraws itself with a CR
    show = stderr.isatty() and len(files) > PROGRESS_AFTER
    try:
        capture = None
        if not args.quick:  # the loss report compares with the PreCompact hook's own capture
            from rehydrate.harness.compaction import capture as precompact

            capture = precompact.capture
        data = audit.report(files, progress=_progress(stderr) if show else None, capture=capture)
    finally:
        if show:
            stderr.write("\r" + " " * 72 + "\r")
    data["errors"] = errors + data["errors"]
    if args.html:
        try:
            with open(args.html, "w", encoding="utf-8") as f:
                f.write(html_report.render(data))
        except OSError as e:
            raise RehydrateError(f"cannot write {args.html}: {e.strerror}") from None
        if not args.json:
            print(f"report written to {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps({**data, "command": "audit", "ok": not data["errors"]}, indent=2))
    else:
        sys.stdout.write(audit.render(data))
    return 0


def _progress(stream: TextIO) -> Callable[[int, int, str], None]:
    """A progress line on a terminal: which file of how many is being read."""
    from rehydrate.audit.text import shown

    def show(n: int, total: int, path: str) -> None:
        stream.write(f"\r[{n}/{total}] {shown(os.path.basename(path))[:60]:<60}")
        stream.flush()

    return show
