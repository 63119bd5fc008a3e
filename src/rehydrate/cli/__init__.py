"""The command line: the only module that prints or exits. `main(argv) -> int`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

from rehydrate import __version__
from rehydrate.errors import ExitCode, RehydrateError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any

JSON_VERSION = 1

DESCRIPTION = """\
Working state for AI coding agents that survives context compaction, crashes and hand-offs.
The state lives in plain files (state/ by default); every command checks them first and
repairs what is safe.

exit codes: 0 ok, 1 discrepancy or degraded, 2 usage error, 3 state missing or unreadable,
4 internal bug, 130 interrupted
"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text as usual, with the width found without argparse's import of shutil (hook-path start-up)."""

    def __init__(self, prog: str) -> None:
        try:
            columns = os.get_terminal_size(sys.stderr.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = int(os.environ.get("COLUMNS", "100")) if os.environ.get("COLUMNS", "").isdigit() else 100
        super().__init__(prog, width=max(40, min(columns, 120) - 2))

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Each line wrapped on its own: explicit line breaks kept, long lines folded."""
        import textwrap

        return "\n".join(
            textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent) if line else ""
            for line in text.splitlines()
        )


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # usage errors exit 2 through main, not from deep inside argparse
        where = self.prog.partition(" ")[2]  # main prints "rehydrate: " once; a subcommand is named after it
        raise UsageError(f"{where}: {message}" if where else message, f"see `{self.prog} --help`")


def _common(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    p.add_argument("--dir", metavar="DIR", help="the state folder (default: $REHYDRATE_DIR, else ./state found upward)")
    p.add_argument("--actor", metavar="NAME", help="whose WAL to write (default: $REHYDRATE_ACTOR, else 'agent')")
    if json_flag:
        p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that command's (the hook path builds one command, not ten)."""
    parser = _Parser(prog="rehydrate", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"rehydrate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    if only in (None, "init"):
        p = sub.add_parser(
            "init",
            help="create the state folder with a write-once goal and install the boot rule",
            description="Create state/ (00_goal.md, 10_invariants.md, 99_next.md, wal/ACTOR.jsonl). "
            "The goal is write-once: an existing one is never replaced. The boot rule goes, as a marked "
            "block, into AGENTS.md, CLAUDE.md and GEMINI.md where they exist, and into those --rules names.",
        )
        p.add_argument("--goal", required=True, help="the task, in a sentence or a few")
        p.add_argument("--done-when", metavar="TEXT", help="what counts as done")
        p.add_argument(
            "--rules",
            metavar="LIST",
            default="",
            help="instruction files to create if absent: comma-separated from agents,claude,gemini",
        )
        _common(p)

    if only in (None, "invariant"):
        p = sub.add_parser(
            "invariant",
            help="record a decision (append-only, one line)",
            description="Append a decision to 10_invariants.md through the WAL, with an id hashed from the actor, "
            "the time and the text (the same decision recorded twice gets two ids).",
        )
        p.add_argument("text", help="the decision")
        p.add_argument("--because", required=True, help="why: so that a later session does not undo it")
        _common(p)

    if only in (None, "reject"):
        p = sub.add_parser(
            "reject",
            help="record a rejected approach (it stays rejected)",
            description="Append a rejected approach to 10_invariants.md through the WAL.",
        )
        p.add_argument("approach", help="the approach that was tried or considered and ruled out")
        p.add_argument("--because", required=True, help="why it was ruled out")
        p.add_argument("--guard", metavar="PATTERN", help="a path glob or command pattern a harness hook can watch for")
        p.add_argument(
            "--contains",
            metavar="TEXT",
            help="a text the hook watches for in what is written (file content, replacement text, patch lines) or "
            "run (the command); with --guard, both must match",
        )
        _common(p)

    if only in (None, "checkpoint"):
        p = sub.add_parser(
            "checkpoint",
            help="record the step just finished and the next allowed action",
            description="Append a checkpoint record (binding git HEAD, branch and dirty files), then "
            "replace 99_next.md, the program counter.",
        )
        p.add_argument("--done", required=True, metavar="TEXT", help="what was just completed")
        p.add_argument("--next", required=True, metavar="TEXT", help="the next allowed action")
        p.add_argument("--goal", metavar="TEXT", help="the current goal (default: the previous checkpoint's)")
        _common(p)

    if only in (None, "handoff"):
        p = sub.add_parser(
            "handoff",
            help="replace 20_handoff.md, the note the next session reads in full",
            description="Replace 20_handoff.md through the WAL; the text comes from stdin or --file.",
        )
        p.add_argument("--file", metavar="F", help="read the note from F instead of stdin")
        _common(p)

    if only in (None, "resume"):
        p = sub.add_parser(
            "resume",
            help="print the brief a fresh context reads first",
            description="Reconcile the state, then print the brief in boot order within a character "
            "budget, ending with the ledger of checks. Logged as a resume record. Exit 1 if degraded.",
        )
        p.add_argument(
            "--budget", type=int, metavar="CHARS", help="the most characters the brief may use (default 9000)"
        )
        _common(p)

    if only in (None, "verify"):
        p = sub.add_parser(
            "verify",
            help="check the WAL chain, the latches and the views (exit 1 on any problem)",
            description="The full recognize step: every log's hash chain, 00 and 10 against what the "
            "WAL bound, each view against the WAL, a torn tail. --repair applies only the safe repairs: "
            "redo a lagging view, cut a torn tail (keeping a .broken copy), record lines added by hand.",
        )
        p.add_argument(
            "--repair",
            action="store_true",
            help="apply the safe repairs (redo lagging or missing views, cut a torn last line, restore a lost "
            "final newline, finish an interrupted rotate, remove stale temporary files, record lines added by hand) "
            "and say what was done",
        )
        _common(p)

    if only in (None, "rotate"):
        p = sub.add_parser(
            "rotate",
            help="archive the WAL at the end of a task and start a new one anchored to it",
            description="Move the WAL's records to state/archive/ and start a new log whose first "
            "record carries the old last hash, the goal and every recorded line of 10_invariants.md.",
        )
        _common(p)

    if only in (None, "status"):
        p = sub.add_parser(
            "status",
            help="one screen: goal, last checkpoint, next action, problems",
            description="Show the goal, the last checkpoint, the next action and any problem. Exit 1 "
            "if there is a problem.",
        )
        _common(p)

    if only in (None, "log"):
        p = sub.add_parser(
            "log",
            help="the history of records: every actor's log and the archives, oldest first",
            description="List every record of the state folder (state/wal/*.jsonl and state/archive/*.jsonl, every "
            "actor), oldest first: by time, then actor, then seq; one line each (seq, actor, op, time, a short "
            "summary), or with --json one JSON object per line (seq, actor, op, ts, data). A line that is not a "
            "valid record is named on stderr and skipped (exit 1). Read-only: it takes no lock and repairs nothing.",
        )
        p.add_argument("--op", action="append", metavar="OP", help="only records of this op (repeatable)")
        p.add_argument("--actor", action="append", metavar="NAME", help="only this actor's records (repeatable)")
        p.add_argument(
            "--since", metavar="TIME", help="only records at or after TIME (UTC: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS])"
        )
        p.add_argument(
            "--dir", metavar="DIR", help="the state folder (default: $REHYDRATE_DIR, else ./state found upward)"
        )
        p.add_argument("--json", action="store_true", help="one JSON object per line: seq, actor, op, ts, data")

    if only in (None, "hook"):
        p = sub.add_parser(
            "hook",
            help="answer a harness's hook call (JSON on stdin); always exits 0",
            description="Called by the harness, not by hand: reads the hook's JSON on stdin and acts by its event. "
            "SessionStart: the brief as additional context (after a compaction, said first). PreCompact and "
            "PostCompact: a `compaction` record in the WAL. PreToolUse: an edit or command matching a rejected "
            "approach's guard gets the decision set in state/config.json (`guard`: ask, deny or warn; ask by "
            "default). Whatever goes wrong, it exits 0 and prints what it can.",
        )
        p.add_argument("harness", choices=["claude", "codex", "gemini"], help="the harness that calls")

    if only in (None, "install"):
        p = sub.add_parser(
            "install",
            help="merge rehydrate's hooks into a harness's settings (and take them out)",
            description="Merge rehydrate into each harness's own files, keeping every other hook, key and line; "
            "installing twice changes nothing. claude: hooks in .claude/settings.json (~/.claude with --user); "
            "codex: hooks in .codex/hooks.json and the boot rule in AGENTS.md; gemini: hooks in "
            ".gemini/settings.json and the boot rule in GEMINI.md; cursor: .cursor/rules/rehydrate.mdc; copilot: "
            "the boot rule in .github/copilot-instructions.md; mcp: the MCP server in .mcp.json, "
            ".codex/config.toml and .gemini/settings.json. --uninstall takes it all out, restoring each file byte "
            "for byte when nothing else changed it since.",
        )
        p.add_argument(
            "harness",
            nargs="+",
            choices=["claude", "codex", "gemini", "cursor", "copilot", "mcp", "all"],
            help="the harnesses to install for (all: every one built)",
        )
        p.add_argument("--user", action="store_true", help="the user's settings instead of the project's")
        p.add_argument("--uninstall", action="store_true", help="take rehydrate's hooks out")
        p.add_argument("--dry-run", action="store_true", help="print the diff and change nothing")
        p.add_argument(
            "--check",
            action="store_true",
            help="change nothing; say whether the harness will run the hooks (installed, program found, project and "
            "hooks trusted) and what to do if not; exit 1 if it will not",
        )
        p.add_argument("--project", metavar="DIR", help="the project folder (default: the current folder)")
        p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")

    if only in (None, "mcp"):
        p = sub.add_parser(
            "mcp",
            help="serve the state as an MCP server over stdio (needs the mcp extra)",
            description="An MCP server over stdio with the tools resume, checkpoint, invariant, reject, handoff, "
            "verify and status. Needs the mcp extra (the official MCP SDK: `pip install '.[mcp]'` in a clone, or "
            "`pip install 'mcp>=2.3,<3'` into rehydrate's environment); `rehydrate install mcp` registers it.",
        )
        p.add_argument("--dir", metavar="DIR", help="the state folder (default: found as for every command)")
        p.add_argument("--actor", metavar="NAME", help="whose WAL to write (default: $REHYDRATE_ACTOR, else 'agent')")

    if only in (None, "audit"):
        p = sub.add_parser(
            "audit",
            help="find every compaction in agent transcripts, and what followed it that suggests lost context",
            description="Read Claude Code session files and Codex rollouts (PATH: a file, or every .jsonl under a "
            "folder; --all: the user's ~/.claude/projects and ~/.codex/sessions, or CLAUDE_CONFIG_DIR and "
            "CODEX_HOME). For each compaction: the context's size before and after it, files edited again that had "
            "been edited before it, identical tool calls repeated, tool errors on each side, and the model turns "
            "before the first edit. Sessions are ranked by these symptoms.",
        )
        p.add_argument("paths", nargs="*", metavar="PATH", help="transcript files or folders")
        p.add_argument("--all", action="store_true", help="every transcript of the user's Claude Code and Codex")
        p.add_argument("--since", metavar="DATE", help="only files modified on or after DATE (YYYY-MM-DD)")
        p.add_argument("--json", action="store_true", help="print one JSON object (with a version field)")
        p.add_argument(
            "--html",
            metavar="FILE",
            help="also write a self-contained page with a chart per session (needs the html extra)",
        )

    if only in (None, "cursor"):
        p = sub.add_parser(
            "cursor",
            help="pipelines: check or repair a cursor against its JSONL output; register one in the state",
            description="A pipeline writes one JSONL record per item (its index under --key) and keeps the index of "
            'the next item in a progress file ({"cursor": N}). The output is the truth. status: what both say. '
            "verify: exit 1 on any discrepancy (cursor ahead or behind, torn last line, an index that repeats, goes "
            "backwards or skips). repair: cut a torn last line (kept in a .broken file) and set the cursor from the "
            "output. register NAME: show the pipeline in the brief and check it in the ledger.",
        )
        p.add_argument(
            "action",
            choices=["status", "verify", "repair", "register"],
            help="status: what both say; verify: exit 1 on a discrepancy; repair: fix it from the output; "
            "register: show the pipeline in the brief",
        )
        p.add_argument("files", nargs="+", metavar="ARG", help="OUTPUT PROGRESS (register: NAME OUTPUT PROGRESS)")
        p.add_argument("--key", default="index", help="the field that holds each record's index (default: index)")
        p.add_argument("--total", type=int, metavar="N", help="register: how many items the pipeline has")
        _common(p)

    if only in (None, "demo"):
        p = sub.add_parser(
            "demo",
            help="show the whole loop on a throwaway git repository",
            description="Run init, decisions, a rejected approach and checkpoints in a temporary git "
            "repository, kill a writer between the WAL append and the view update, rewrite a line of "
            "10_invariants.md by hand, then verify, repair and print the brief a fresh context reads.",
        )
        p.add_argument("--keep", action="store_true", help="keep the temporary repository and print its path")
    return parser


# ---------------------------------------------------------------------------------------------------- output


def _emit_json(command: str, ok: bool, **fields: Any) -> None:
    # ASCII-only: a path or text holding undecodable bytes still makes valid JSON
    print(json.dumps({"version": JSON_VERSION, "command": command, "ok": ok, **fields}, indent=2))


def _report(out: Any, args: argparse.Namespace) -> None:
    """Repairs and leftover problems of a writing command go to stderr (stdout stays the command's answer)."""
    if args.json:
        return
    for r in out.repaired:
        print(f"rehydrate: repaired: {r}", file=sys.stderr)
    for p in out.problems:
        where = p.file + (f":{p.line}" if p.line else "")
        print(f"rehydrate: warning: {where}: {p.message} [{p.code}] (see `rehydrate verify`)", file=sys.stderr)


def _problems_json(out: Any) -> dict[str, Any]:
    return {"problems": [p.as_dict() for p in out.problems], "repaired": list(out.repaired)}


# ---------------------------------------------------------------------------------------------------- commands


def _open(args: argparse.Namespace) -> Any:
    from rehydrate.store.state import State

    return State.open(args.dir, args.actor)


def cmd_init(args: argparse.Namespace) -> int:
    from rehydrate import rules
    from rehydrate.store.locate import init_location
    from rehydrate.store.state import State

    create = rules.parse_names(args.rules)
    # the instruction files are checked (symlinks out of the project refused) before the state exists, so that a
    # refusal leaves no half-done init behind; the folder is found as State.init finds it
    planned = init_location(args.dir)
    rules.plan(os.path.dirname(planned), os.path.basename(planned), create)
    state, out = State.init(args.dir, args.goal, args.done_when, args.actor)
    project = os.path.dirname(state.root)
    installed = rules.install(project, os.path.relpath(state.root, project), create)
    if args.json:
        _emit_json(
            "init",
            True,
            state=state.root,
            actor=state.actor,
            record=out.record,
            rules=dict(installed),
            **_problems_json(out),
        )
        return 0
    _report(out, args)
    where = state.rel("")
    if project != os.path.abspath(os.getcwd()):  # say where: not the current folder (init from a subfolder)
        from rehydrate.store.locate import named

        at_root = named(args.dir) is None and os.path.lexists(os.path.join(project, ".git"))
        note = " at the repository's root, where the harness hooks look" if at_root else ""
        where = f"{state.root}{os.sep}{note}"
    print(
        f"initialized {where} (actor {state.actor}): 00_goal.md, 10_invariants.md, 99_next.md, wal/{state.actor}.jsonl"
    )
    for name, what in installed:
        print(f"boot rule: {name} {what}")
    if not installed:
        print("boot rule: no AGENTS.md, CLAUDE.md or GEMINI.md here; add one with --rules agents,claude,gemini")
    return 0


def _cmd_entry(args: argparse.Namespace, kind: str) -> int:
    state = _open(args)
    if kind == "invariant":
        out = state.invariant(args.text, args.because)
    else:
        out = state.reject(args.approach, args.because, args.guard, args.contains)
    rec = out.record
    if args.json:
        _emit_json(kind, True, id=rec["data"]["id"], line=rec["data"]["line"], seq=rec["seq"], **_problems_json(out))
        return 0
    _report(out, args)
    print(f"recorded {rec['data']['id']} in {state.rel('10_invariants.md')} (record {rec['seq']})")
    return 0


def cmd_invariant(args: argparse.Namespace) -> int:
    return _cmd_entry(args, "invariant")


def cmd_reject(args: argparse.Namespace) -> int:
    return _cmd_entry(args, "reject")


def cmd_checkpoint(args: argparse.Namespace) -> int:
    state = _open(args)
    out = state.checkpoint(args.done, args.next, args.goal)
    rec = out.record
    git = rec.get("git") or {}
    if args.json:
        _emit_json("checkpoint", True, seq=rec["seq"], ts=rec["ts"], git=git, **_problems_json(out))
        return 0
    _report(out, args)
    if git.get("repo") is False:
        where = f"no git ({git.get('reason', 'not a repository')})"
    else:
        head = str(git["head"])[:7] if git.get("head") else "(no commit yet)"
        dirty = git.get("dirty_count", len(git.get("dirty", [])))
        where = f"HEAD {head} on {git.get('branch') or 'a detached HEAD'}, {dirty} dirty file(s)"
    print(f"checkpoint {rec['seq']} written: {where}; next: {state.rel('99_next.md')}")
    return 0


def cmd_handoff(args: argparse.Namespace) -> int:
    if args.file:
        try:
            with open(args.file, encoding="utf-8", errors="replace") as f:
                text = f.read(8 << 20)
        except OSError as e:
            raise UsageError(f"cannot read {args.file}: {e.strerror}") from None
    else:
        if sys.stdin is None or sys.stdin.closed:
            raise UsageError("no handoff text: give it on stdin or with --file F")
        if sys.stdin.isatty():
            print("type the handoff note; end with Ctrl-D", file=sys.stderr)
        text = sys.stdin.buffer.read(8 << 20).decode("utf-8", "replace")
    state = _open(args)
    out = state.handoff(text)
    if args.json:
        _emit_json("handoff", True, seq=out.record["seq"], chars=len(out.record["data"]["text"]), **_problems_json(out))
        return 0
    _report(out, args)
    print(
        f"{state.rel('20_handoff.md')} replaced "
        f"({len(out.record['data']['text']):,} characters, record {out.record['seq']})"
    )
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from rehydrate import brief
    from rehydrate.store.locate import locate, resolve_actor
    from rehydrate.store.state import State

    try:
        state = State.open(args.dir, args.actor)
        result = brief.resume(state, args.budget)
    except UsageError:
        raise
    except Exception as e:
        if isinstance(e, RehydrateError):
            message, code = str(e), int(e.exit_code)
        else:
            message, code = f"internal error ({type(e).__name__}: {e}); details in {_crash_log(e)}", ExitCode.BUG
        text = brief.reduced(locate(args.dir), resolve_actor(args.actor), message, args.budget)
        if args.json:
            _emit_json("resume", False, brief=text, confidence="degraded (state)", error=message)
        else:
            sys.stdout.write(text)
            print(f"rehydrate: {message}", file=sys.stderr)
        return code
    degraded = result.confidence != "recovered"
    if args.json:
        _emit_json(
            "resume",
            not degraded,
            brief=result.text,
            confidence=result.confidence,
            findings=[f.as_dict() for f in result.findings],
            omitted=result.omitted,
            seq=result.record["seq"],
            **_problems_json(result),
        )
    else:
        sys.stdout.write(result.text)
    return ExitCode.DISCREPANCY if degraded else 0


def cmd_verify(args: argparse.Namespace) -> int:
    state = _open(args)
    out = state.verify(repair=args.repair)
    seq = out.record["seq"] if out.record else None
    if args.json:
        _emit_json("verify", out.ok, state=state.root, records=seq, **_problems_json(out))
        return 0 if out.ok else ExitCode.DISCREPANCY
    for r in out.repaired:
        print(f"repaired: {r}")
    for p in out.problems:
        where = p.file + (f":{p.line}" if p.line else "")
        fix = " (safe to repair: rehydrate verify --repair)" if p.repairable and not args.repair else ""
        print(f"problem: {where}: {p.message} [{p.code}]{fix}")
    if out.ok:
        print(f"ok: {state.rel('')} verified: {seq} record(s), hash chain intact, latches hold, views match the WAL")
        return 0
    print(f"{len(out.problems)} problem(s) in {state.rel('')}")
    return ExitCode.DISCREPANCY


def cmd_rotate(args: argparse.Namespace) -> int:
    state = _open(args)
    out = state.rotate()
    data = out.record["data"]
    if args.json:
        _emit_json(
            "rotate",
            True,
            archive=data["archive"],
            records=data["records"],
            seq=out.record["seq"],
            **_problems_json(out),
        )
        return 0
    _report(out, args)
    print(
        f"archived {data['records']} record(s) to {state.rel(data['archive'])}; "
        f"the new WAL starts at record {out.record['seq']}, anchored to the old last hash"
    )
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    state = _open(args)
    out = state.status()
    x = out.extra
    if args.json:
        _emit_json(
            "status",
            out.ok,
            state=state.root,
            actor=state.actor,
            goal=x["goal"],
            checkpoint=x["checkpoint"],
            next=x["next"],
            records=x["records"],
            **_problems_json(out),
        )
        return 0 if out.ok else ExitCode.DISCREPANCY
    print(f"state:       {state.root} (actor {state.actor}, {x['records']} record(s))")
    print(f"goal:        {x['goal']}")
    print(f"checkpoint:  {x['checkpoint']}")
    print(f"last done:   {x['next'].get('done', '?')}")
    print(f"next action: {x['next'].get('next', '?')}")
    for r in out.repaired:
        print(f"repaired:    {r}")
    if out.ok:
        print("problems:    none")
        return 0
    for p in out.problems:
        where = p.file + (f":{p.line}" if p.line else "")
        print(f"problem:     {where}: {p.message} [{p.code}]")
    return ExitCode.DISCREPANCY


def cmd_log(args: argparse.Namespace) -> int:
    from rehydrate.store import history, views
    from rehydrate.store.locate import locate

    found = history.read(locate(args.dir), ops=args.op, actors=args.actor, since=args.since)
    for d in found.damaged:  # a file's name, too, came with `git pull`: one line, cleaned
        print(f"rehydrate: skipped {views.clean(str(d), one_line=True)}", file=sys.stderr)
    if args.json:  # ASCII-only JSON: whatever a record holds, the line is valid and carries no control byte
        out = [json.dumps(e.as_dict()) for e in found.entries]
    else:  # every field that came from a file on one line, cleaned (a forged op or actor could hold a newline)

        def one(text: str) -> str:
            return views.clean(text, one_line=True)[:64]

        rows = [(e.seq, one(e.actor), one(e.op), one(e.ts[:19].replace("T", " ")), e.summary()) for e in found.entries]
        actor_w = max((len(r[1]) for r in rows), default=0)
        op_w = max((len(r[2]) for r in rows), default=0)
        out = [f"{seq:>6}  {actor:<{actor_w}}  {op:<{op_w}}  {when}  {what}" for seq, actor, op, when, what in rows]
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    return ExitCode.DISCREPANCY if found.damaged else 0


def cmd_hook(args: argparse.Namespace) -> int:
    from rehydrate.harness import hook

    return hook.main(args.harness)


def cmd_install(args: argparse.Namespace) -> int:
    from rehydrate.harness import install
    from rehydrate.store.locate import locate

    project = os.path.abspath(args.project or os.getcwd())
    state_rel = os.path.relpath(locate(None, project), project)
    names = install.HARNESSES if "all" in args.harness else tuple(dict.fromkeys(args.harness))
    if args.check:  # change nothing: will the harness run the hooks?
        if args.uninstall or args.dry_run:
            raise UsageError("--check changes nothing: it takes neither --uninstall nor --dry-run")
        report = []
        for harness in install.HOOK_HARNESSES if "all" in args.harness else names:
            checks = install.check(harness, project, user=args.user, state_rel=state_rel)
            ok = install.will_run(checks)
            report.append({"harness": harness, "will_run": ok, "checks": [c.as_dict() for c in checks]})
            if args.json:
                continue
            print(f"{harness}: the hooks {'will run' if ok else 'will NOT run'}")
            for c in checks:
                print(f"  {dict([(True, 'ok'), (False, 'NO'), (None, '??')])[c.ok]:<3} {c.name}: {c.detail}")
                if c.ok is not True and c.fix:
                    print(f"      do: {c.fix}")
        ok = all(r["will_run"] for r in report)
        if args.json:
            _emit_json("install", ok, check=True, harnesses=report)
        return 0 if ok else ExitCode.DISCREPANCY
    if args.uninstall:  # the reverse of the install: a file or folder two harnesses share goes with the first
        names = tuple(reversed(names))
    # every harness's files are read and checked before any is written: a refusal leaves nothing half-installed
    install.preflight(names, project, user=args.user, uninstall=args.uninstall, state_rel=state_rel)
    prog = install.program()
    results = []
    for harness in names:  # one after the other: two harnesses can share a file (Gemini's settings.json)
        changes = install.plan(
            harness, project, user=args.user, uninstall=args.uninstall, state_rel=state_rel, prog=prog
        )
        if not args.dry_run:
            install.apply(changes, uninstall=args.uninstall)
        for change in changes:
            results.append({"harness": harness, "path": change.path, "changed": change.changed, "what": change.note})
            if args.json:
                continue
            if args.dry_run:
                sys.stdout.write(change.diff() or f"{change.path}: no change\n")
            else:
                print(f"{harness}: {change.path}: {change.note if change.changed else 'already as it should be'}")
    note = None if args.uninstall or not set(names) & set(install.RUNS_PROGRAM) else install.program_note(prog)
    steps: dict[str, list[str]] = {}
    if not args.uninstall and not args.dry_run:  # what the user must still do for the hooks to run
        for harness in names:
            if harness in install.HOOK_HARNESSES:
                checks = install.check(harness, project, user=args.user, state_rel=state_rel)
                steps[harness] = [c.fix for c in checks if c.ok is not True and c.fix and c.name != "command"]
    if args.json:
        _emit_json(
            "install",
            True,
            dry_run=args.dry_run,
            uninstall=args.uninstall,
            files=results,
            program={"command": prog.argv0, "bare": prog.bare, "note": note},
            next=steps,
        )
        return 0
    if note:
        print(f"note: {note}")
    for harness, todo in steps.items():
        for step in todo:
            print(f"next ({harness}): {step}")
    if steps:
        print("check with: rehydrate install --check " + " ".join(steps))
    return 0


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
                f"the HTML report needs Plotly, which is not installed ({e})", _extra_hint("html", "plotly>=6,<8")
            ) from None
    files, errors = audit.discover(args.paths, args.all, args.since)
    safe_stderr = sys.stderr
    sys.stderr = getattr(safe_stderr, "_stream", safe_stderr)  # the progress line redraws itself with a CR
    try:
        data = audit.report(files, progress=sys.stderr.isatty() and len(files) > 20)
    finally:
        sys.stderr = safe_stderr
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


def cmd_cursor(args: argparse.Namespace) -> int:
    from rehydrate import cursor

    if args.action == "register":
        if len(args.files) != 3:
            raise UsageError("register takes NAME OUTPUT PROGRESS")
        state = _open(args)
        name, output, progress = args.files
        cursor.register(state.root, name, output, progress, args.key, args.total)
        print(f"registered {name}: {output} with {progress}")
        return 0
    if len(args.files) != 2:
        raise UsageError(f"{args.action} takes OUTPUT PROGRESS")
    output, progress = args.files
    done: list[str] = []
    if args.action == "repair":
        c, done = cursor.repair(output, progress, args.key)
        c = cursor.check(output, progress, args.key)
    else:
        c = cursor.check(output, progress, args.key)
    ok = not c.problems
    if args.json:
        _emit_json(
            "cursor",
            ok,
            action=args.action,
            cursor=c.cursor if c.cursor is not None else c.expected,
            last_index=c.last_index,
            records=c.records,
            problems=[p.as_dict() for p in c.problems],
            repaired=done,
        )
    else:
        for line in done:
            print(f"repaired: {line}")
        last = "none" if c.last_index is None else str(c.last_index)
        print(f"cursor {c.cursor if c.cursor is not None else '?'}; output: {c.records} record(s), last index {last}")
        for p in c.problems:
            where = f"{output}:{p.line}" if p.line else progress
            print(f"problem: {where}: {p.message} [{p.code}]")
    return 0 if ok or args.action == "status" else ExitCode.DISCREPANCY


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from rehydrate import mcp_server
    except ImportError as e:
        raise UsageError(
            f"the MCP server needs the official mcp SDK, which is not installed ({e})",
            _extra_hint("mcp", "mcp>=2.3,<3"),
        ) from None
    return mcp_server.serve(args.dir, args.actor)


def _extra_hint(extra: str, requirement: str) -> str:
    """How to add an optional extra to the environment this rehydrate runs in (the package is not on an index)."""
    import shlex

    python = shlex.quote(sys.executable or "python3")
    return f"{python} -m pip install {shlex.quote(requirement)} (or, in a clone: pip install '.[{extra}]')"


def cmd_demo(args: argparse.Namespace) -> int:
    from rehydrate.cli import demo

    return demo.run(keep=args.keep)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "init": cmd_init,
    "invariant": cmd_invariant,
    "reject": cmd_reject,
    "checkpoint": cmd_checkpoint,
    "handoff": cmd_handoff,
    "resume": cmd_resume,
    "verify": cmd_verify,
    "rotate": cmd_rotate,
    "status": cmd_status,
    "log": cmd_log,
    "hook": cmd_hook,
    "install": cmd_install,
    "mcp": cmd_mcp,
    "audit": cmd_audit,
    "cursor": cmd_cursor,
    "demo": cmd_demo,
}


def _crash_log(exc: BaseException) -> str:
    import tempfile
    import time
    import traceback

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    text = f"rehydrate {__version__} {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\nargv: {sys.argv!r}\n\n"
    text += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    for folder in (os.path.join(base, "rehydrate"), tempfile.gettempdir()):
        try:
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, "crash.log")
            with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text + "\n")
            return path
        except (OSError, ValueError):
            continue
    return "(no writable place for a crash log)"


def _command_of(args_list: list[str]) -> str | None:
    """The command named in argv (the first word that is one), or None (JSON null)."""
    return next((a for a in args_list if a in COMMANDS), None)


def _fail(args_list: list[str], code: int, message: str, hint: str | None = None) -> int:
    """An error that ends the command: a text line on stderr, and with --json one JSON object on stdout too."""
    print(f"rehydrate: {message}" + (f"\n  hint: {hint}" if hint else ""), file=sys.stderr)
    if "--json" in args_list:
        error = {"exit_code": code, "message": message, "hint": hint}
        print(
            json.dumps(
                {"version": JSON_VERSION, "command": _command_of(args_list), "ok": False, "error": error}, indent=2
            )
        )
    return code


# What never reaches a terminal from a file's content: C0 controls but tab and newline (escape sequences, NUL, CR,
# backspace), DEL, C1 controls, and the bidirectional and line-separator controls that reorder or hide text.
_UNSAFE = {
    c: None
    for c in (
        *range(0x00, 0x09),
        *range(0x0B, 0x20),
        *range(0x7F, 0xA0),
        0x061C,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0x2028,
        0x2029,
    )
}


def terminal_safe(text: str) -> str:
    """text without the characters that could drive a terminal or disguise what it shows."""
    return text.translate(_UNSAFE)


class _SafeStream:
    """A text stream whose writes pass through terminal_safe: every field a command prints came from files that
    arrived by `git pull` (goal, checkpoint titles, quoted lines, paths), so none may carry a control sequence."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # undecodable bytes in paths or text must never crash the output
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    args_list = list(sys.argv[1:] if argv is None else argv)
    raw_streams = sys.stdout, sys.stderr
    if not args_list or args_list[0] != "demo":  # the demo prints its own (fixed) bold headings, nothing from files
        sys.stdout, sys.stderr = _SafeStream(sys.stdout), _SafeStream(sys.stderr)
    try:
        return _main(args_list)
    finally:
        sys.stdout, sys.stderr = raw_streams


def _main(args_list: list[str]) -> int:
    parser = build_parser(args_list[0] if args_list and args_list[0] in COMMANDS else None)
    try:
        args = parser.parse_args(args_list)
        if not args.command:
            parser.print_help(sys.stderr)
            return ExitCode.USAGE
        return int(COMMANDS[args.command](args))
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0
    except RehydrateError as e:
        hint, command = e.hint, _command_of(args_list)
        if isinstance(e, UsageError) and command and args_list[0].startswith("-"):  # rehydrate --json status
            hint = f"options go after the command: `rehydrate {command} {args_list[0]}`"
        return _fail(args_list, int(e.exit_code), e.message, hint)
    except KeyboardInterrupt:
        print("rehydrate: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as e:
        path = _crash_log(e)
        return _fail(
            args_list,
            ExitCode.BUG,
            f"internal error ({type(e).__name__}: {e}); details in {path}",
            "this is a bug; please report it with that file",
        )
