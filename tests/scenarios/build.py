"""The recovery scenarios' helpers (plan 3.1): a real project built through the real CLI in a temporary folder (its
own HOME), `rehydrate recover --json` and each harness's SessionStart hook run on it as subprocesses, and the
brief's ledger parsed so that it can be compared with recover's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes import gh

HOOKS = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"
HARNESSES = ("claude", "codex", "gemini")
SOURCE = {"claude": "compact", "codex": "compact", "gemini": "startup"}  # gemini has no SessionStart compact
GOAL, DONE, NEXT = "Ship the parser", "the tokenizer", "binding powers"
RECOVER_ONLY = frozenset({"gh"})  # ledger lines `recover` has and a hook's brief never does (user checks too)
WHO = {
    "GIT_AUTHOR_NAME": "Agent",
    "GIT_AUTHOR_EMAIL": "agent@example.com",
    "GIT_COMMITTER_NAME": "Agent",
    "GIT_COMMITTER_EMAIL": "agent@example.com",
}


@dataclass
class Expect:
    """What `recover --json` must say: exit code, confidence ("recovered" or "degraded"), the degraded check names
    (in order), each named check's set of statuses (exactly), words each named check's findings hold (joined),
    words the ledger's next must hold and must not hold, words the ask must hold (ask None when empty), words the
    hook's brief must hold."""

    code: int
    confidence: str
    degraded: list[str] = field(default_factory=list)
    statuses: dict[str, set[str]] = field(default_factory=dict)
    finding_has: dict[str, list[str]] = field(default_factory=dict)
    next_has: list[str] = field(default_factory=list)
    next_not: list[str] = field(default_factory=list)
    ask_has: list[str] = field(default_factory=list)
    brief_has: list[str] = field(default_factory=list)


@dataclass
class Scenario:
    """A scenario: its number and name, how to build it in a temporary folder, what recover says, and what the
    hooks say when it is not simply recover's ledger (hook_expect "silent": every hook says nothing)."""

    name: str
    build: Callable[[Path], Proj]
    expect: Expect
    hook_expect: str | None = None
    marks: tuple[Any, ...] = ()


@dataclass
class Proj:
    """A project folder (root, its state in root/state) and the environment every command runs with (a HOME under
    the scenario's folder, PATH as the scenario wants)."""

    root: Path
    env: dict[str, str]

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "rehydrate", *args],
            cwd=self.root,
            env=self.env,
            input="",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert not check or done.returncode == 0, f"rehydrate {' '.join(args)}: {done.stdout}{done.stderr}"
        return done

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=self.root,
            env={**self.env, **WHO},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done.stdout.strip()

    def checkpoint(self, done: str = DONE, next: str = NEXT) -> None:
        self.cli("checkpoint", "--done", done, "--next", next)

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (self.root / "state" / "wal" / "agent.jsonl").read_bytes().splitlines()]

    def reads(self) -> list[dict[str, Any]]:
        """The journal's records (store/local/journal.py: the reads, logged outside the state folder)."""
        from rehydrate.store.local import place as local

        path = Path(local.local_dir(str(self.root / "state"))) / "journal" / "agent.jsonl"
        return [json.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []

    def ckpt_ts(self) -> str:
        return str(next(r for r in reversed(self.records()) if r["op"] in ("checkpoint", "init"))["ts"])

    def after(self, seconds: float) -> str:
        """A timestamp `seconds` after the last checkpoint's, in the WAL's format (for transcript records)."""
        return _stamp(self.ckpt_ts(), seconds)

    def before(self, seconds: float) -> str:
        return _stamp(self.ckpt_ts(), -seconds)

    def precompact(self, harness: str, transcript: str | None) -> tuple[int, str, str]:
        """The harness's real compaction hook (claude and codex PreCompact auto, gemini PreCompress auto) with the
        transcript path, so that the capture runs: (exit code, stdout, stderr)."""
        name = {"claude": "PreCompact-auto", "codex": "PreCompact", "gemini": "PreCompress-auto"}[harness]
        return self.hook(harness, name, transcript)

    def hook(self, harness: str, name: str, transcript: str | None, **changes: Any) -> tuple[int, str, str]:
        """`rehydrate hook harness` with the documented event `name` (tests/fixtures/hooks), in root, a fresh
        session id and the transcript path (a path under HOME that does not exist when None): (code, out, err)."""
        event = json.loads((HOOKS / harness / f"{name}.json").read_text())
        event.update(
            cwd=str(self.root),
            session_id=str(uuid.uuid4()),
            transcript_path=transcript or str(Path(self.env["HOME"]) / "no-transcript.jsonl"),
            **changes,
        )
        done = subprocess.run(
            [sys.executable, "-m", "rehydrate", "hook", harness],
            cwd=self.root,
            env=self.env,
            input=json.dumps(event).encode(),
            capture_output=True,
            timeout=120,
            check=False,
        )
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    def recover(self, *args: str) -> tuple[int, dict[str, Any]]:
        done = self.cli("recover", "--json", *args, check=False)
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode, json.loads(done.stdout)

    def session_start(
        self, harness: str, transcript: str | None = None, source: str | None = None
    ) -> tuple[int, str, str]:
        """The harness's SessionStart hook (default source: claude and codex compact, gemini startup) with a fresh
        session id, as a subprocess in root: (exit code, the brief or "" when the hook said nothing, stderr)."""
        code, out, err = self.hook(harness, f"SessionStart-{source or SOURCE[harness]}", transcript)
        return code, (_context(json.loads(out)) if out.strip() else ""), err


def _stamp(ts: str, seconds: float) -> str:
    from datetime import datetime, timedelta, timezone

    when = datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc) + timedelta(seconds=seconds)
    return when.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _context(answer: Any) -> str:
    """The brief in a hook's answer: the first `additionalContext` string, wherever the harness nests it."""
    if isinstance(answer, dict):
        if isinstance(answer.get("additionalContext"), str):
            return str(answer["additionalContext"])
        for value in answer.values():
            found = _context(value)
            if found:
                return found
    return ""


def environment(tmp: Path, path: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of every command of a scenario: a HOME under tmp (with its own git config), no state folder
    or actor from outside, no GitHub token, PATH as given (default: this process's)."""
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Agent\n\temail = agent@example.com\n[init]\n\tdefaultBranch = main\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REHYDRATE_", "GH_", "GITHUB_", "CLAUDE_"))}
    env.pop("CODEX_HOME", None)
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1", **extra)
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        env[var] = str(home / var.lower())
    if path is not None:
        env["PATH"] = path
    return env


def project(tmp: Path, *, git: bool = True, root: Path | None = None, path: str | None = None) -> Proj:
    """A project with a state: a real git repository with one commit (app.py) unless git is False, or root when
    given (a clone already made); PATH: path, by default a folder with git only; `rehydrate init` and one
    checkpoint (done DONE, next NEXT) through the real CLI."""
    if path is None:  # no gh reachable unless the scenario gives one: the real gh of this machine is never asked
        path = gh.bin_path(tmp)
    proj = Proj(root or tmp / "project", environment(tmp, path))
    proj.root.mkdir(parents=True, exist_ok=True)
    if git and root is None:
        proj.git("init", "-q", "-b", "main")
        (proj.root / "app.py").write_text("print('hello')\n")
        proj.git("add", "app.py")
        proj.git("commit", "-q", "-m", "first")
    proj.cli("init", "--goal", GOAL)
    proj.checkpoint()
    return proj


# ---------------------------------------------------------------------------------------------------- ledgers


def ledger_of(brief: str) -> dict[str, Any]:
    """The brief's last section, `## Ledger <token>`: {"checks": [(name, status, finding)], "confidence",
    "next", "ask"} (next: the `next safe action` line; ask: the `ask a human` line)."""
    head = brief.rfind("\n## Ledger ")
    assert head >= 0, f"no ledger in the brief:\n{brief}"
    found: dict[str, Any] = {"checks": [], "confidence": None, "next": None, "ask": None, "quotes": _quotes(brief)}
    for line in brief[head + 1 :].splitlines()[1:]:
        if line.startswith("- "):
            name, _, rest = line[2:].partition(": ")
            status, _, finding = rest.partition(": ")
            found["checks"].append((name, status, finding))
        elif line.startswith("confidence: "):
            found["confidence"] = line.removeprefix("confidence: ")
        elif line.startswith("next safe action: "):
            found["next"] = line.removeprefix("next safe action: ")
        elif line.startswith("ask a human: "):
            found["ask"] = line.removeprefix("ask a human: ")
    return found


def _quotes(brief: str) -> list[dict[str, str]]:
    """The brief's "## Quoted in the ledger": [{"ref", "text"}] in order (each quote's one line)."""
    at = brief.find("\n## Quoted in the ledger\n")
    if at < 0:
        return []
    out: list[dict[str, str]] = []
    lines = brief[at + 1 :].split("\n## ", 1)[0].splitlines()[1:]
    for i, line in enumerate(lines):
        if " quote: Q" in line and line.startswith("["):
            ref = line.split(" quote: ", 1)[1].split(",", 1)[0]
            out.append({"ref": ref, "text": lines[i + 1].removeprefix("> ")})
    return out


def _by_gh(line: tuple[str, str, str]) -> bool:
    """A live-state line of gh's (checks/git/gh.py): recover asks gh, a hook only when it is missing (the n/a line),
    else it defers gh to recover (the ledger's deferred note)."""
    return line[0] == "live-state" and ("gh " in line[2] or "PR #" in line[2])


def assert_same_ledger(answer: dict[str, Any], brief: dict[str, Any], recover_only: Iterable[str] = ()) -> None:
    """The brief's ledger holds recover's lines (but the recover-only ones: gh, the user's checks), in order, with
    the same statuses and findings (a line the brief shortened: its start), the same confidence and next step."""
    skip = set(RECOVER_ONLY) | set(recover_only)
    mine = [(c["name"], c["status"], spelled(answer, c["finding"])) for c in answer["checks"] if c["name"] not in skip]
    mine = [c for c in mine if not _by_gh(c)]
    theirs = [(n, st, spelled(brief, f)) for n, st, f in brief["checks"] if not _by_gh((n, st, f))]
    assert [(n, s) for n, s, _ in theirs] == [(n, s) for n, s, _ in mine], (theirs, mine)
    for (_, _, shown), (_, _, full) in zip(theirs, mine, strict=True):
        assert shown == full or (shown.endswith("…") and full.startswith(shown[:-1])), (shown, full)
    kept = [d for d in answer["degraded"] if d not in skip]
    assert brief["confidence"] == ("recovered" if not kept else f"degraded ({', '.join(kept)})")
    if answer["ask"] is None:
        assert spelled(brief, brief["next"]) == spelled(answer, answer["next"]), (brief["next"], answer["next"])
    else:
        assert answer["ask"] in (brief["ask"] or brief["next"] or ""), brief


# ---------------------------------------------------------------------------------------------------- the contract

KEYS = ["version", "command", "ok", "confidence", "degraded", "checks", "next", "ask", "quotes"]
CHECK_KEYS = ["name", "status", "finding", "next"]
STATUSES = ("ok", "degraded", "failed", "skipped", "n/a")


QUOTE_KEYS = ["ref", "what", "source", "text"]


def spelled(answer: dict[str, Any], text: str) -> str:
    """A finding's or the next action's text with each quote it names (Q1, ...) in its place, in double quotes."""
    for q in reversed(answer.get("quotes") or []):
        text = text.replace(q["ref"], f'"{q["text"]}"')
    return text


def assert_contract(answer: dict[str, Any]) -> None:
    """`rehydrate recover --json`'s shape, pinned: exactly these keys, in this order, with these types."""
    assert list(answer) == KEYS, list(answer)
    assert isinstance(answer["quotes"], list)
    for i, q in enumerate(answer["quotes"]):
        assert list(q) == QUOTE_KEYS and q["ref"] == f"Q{i + 1}" and all(isinstance(q[k], str) for k in q), q
        said = [c["finding"] for c in answer["checks"]] + [c["next"] or "" for c in answer["checks"]]
        assert any(q["ref"] in t for t in said), q  # every quote is named by the ledger
    assert answer["version"] == 1 and answer["command"] == "recover"
    assert isinstance(answer["ok"], bool) and answer["ok"] is (answer["confidence"] == "recovered")
    assert answer["confidence"] in ("recovered", "degraded")
    assert isinstance(answer["degraded"], list) and all(isinstance(d, str) for d in answer["degraded"])
    assert (answer["confidence"] == "recovered") is (answer["degraded"] == [])
    assert isinstance(answer["checks"], list) and answer["checks"]
    for c in answer["checks"]:
        assert list(c) == CHECK_KEYS, c
        assert isinstance(c["name"], str) and isinstance(c["finding"], str) and c["status"] in STATUSES, c
        assert c["next"] is None or isinstance(c["next"], str), c
    assert isinstance(answer["next"], str) and answer["next"]
    assert answer["ask"] is None or (
        isinstance(answer["ask"], str) and answer["next"] == "stop and ask: " + answer["ask"]
    )
