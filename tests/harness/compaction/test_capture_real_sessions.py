"""The capture at a compaction, judged on real sessions: every compaction of the 12 public sessions in
tests/fixtures/transcripts/compactions (Claude Code 2.1.5 to 2.1.45, TodoWrite and the task tools; Codex 0.141 and
0.142, with and without plans; NOTICE.md there says where each comes from) replayed as it happened.

For each compaction: the session's lines up to it are written where a harness would have them, a state is made with
a checkpoint taken at a point before the compaction region, the REAL PreCompact hook runs (in process, so that the
records can carry the session's own times), then the REAL SessionStart hook (source compact), and the brief it gives
must carry what the session's structured records show just before the compaction: the task list with its statuses,
the last requests (prompts, slash commands, queued messages, the words of a rejected tool call), the edited paths,
the failed commands and the lines of their output that say what failed.

The expectations come from tests/transcripts/realsessions.py, a small reader written apart from rehydrate's (it
imports nothing of it), never from the capture's own code.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from tests.transcripts import realsessions

from rehydrate.harness import hook
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal

FIXTURES = realsessions.FIXTURES
FILES = sorted(FIXTURES.glob("*.jsonl.gz"))
BEFORE_ALL = "2000-01-01T00:00:00.000Z"  # a checkpoint before the session's first record
LATE = 40  # the "late" checkpoint: this many stamped records before the compaction


def _cases() -> list[tuple[str, int]]:
    return [(path.name, k) for path in FILES for k in range(len(realsessions.compactions(path)))]


def _lines(path: Path) -> list[bytes]:
    with gzip.open(path, "rb") as f:
        return f.read().split(b"\n")


def _stamps(lines: list[bytes], end: int) -> list[str]:
    """The records' own stamps before line `end`, in order."""
    out = []
    for raw in lines[:end]:
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("timestamp"), str):
            out.append(rec["timestamp"])
    return out


def _plain(text: str) -> str:
    """A brief's text with its quotes' `> ` marks off and every run of white space one space: what it says."""
    lines = [ln[2:] if ln.startswith("> ") else "" if ln == ">" else ln for ln in text.split("\n")]
    return " ".join(" ".join(lines).split())


def _said(text: str, most: int) -> str:
    return " ".join(text.split())[:most]


class Replay:
    """One compaction of one session, replayed: the brief after it and the capture its record holds."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch, name: str, k: int, late: bool) -> None:
        source = FIXTURES / name
        lines = _lines(source)
        bounds = realsessions.compactions(source)
        self.boundary = bounds[k]
        stamps = _stamps(lines, self.boundary)
        if late:
            self.since = stamps[-min(LATE, len(stamps))]
        else:
            self.since = _stamps(lines, bounds[k - 1] + 1)[-1] if k else BEFORE_ALL
        self.harness = "codex" if name.startswith("codex") else "claude"
        transcript = tmp / "session.jsonl"
        transcript.write_bytes(b"\n".join(lines[: self.boundary]) + b"\n")
        root = tmp / "project"
        root.mkdir()
        monkeypatch.setattr(wal, "now", lambda: _wal_stamp(self.since))
        st, _ = State.init(str(root / "state"), "Replay the session", "the brief carries what the session did")
        st.checkpoint(done="the work before", next="go on")
        monkeypatch.setattr(wal, "now", lambda: _wal_stamp(stamps[-1]))
        event = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(root)}
        pre = hook.run(self.harness, json.dumps({**event, "hook_event_name": "PreCompact", "trigger": "auto"}).encode())
        assert (pre.code, pre.stderr) == (0, "")
        start = {**event, "hook_event_name": "SessionStart", "source": "compact"}
        answer = hook.run(self.harness, json.dumps(start).encode())
        assert answer.code == 0, answer.stderr
        self.brief: str = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"]
        self.plain = _plain(self.brief)
        last = (root / "state" / "wal" / "agent.jsonl").read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        self.capture: dict[str, Any] = json.loads(last)["data"]["capture"]
        self.facts = realsessions.facts(source, self.boundary, _after(self.since), subagent_tasks=True)
        earlier = realsessions.facts(source, bounds[k - 1], None) if k else None
        self.requests = self.facts.requests[len(earlier.requests) :] if earlier else self.facts.requests


def _wal_stamp(ts: str) -> str:
    """A transcript's stamp as the WAL writes one (milliseconds, Z)."""
    whole, _, frac = ts.rstrip("Z").partition(".")
    return f"{whole[:19]}.{(frac + '000')[:3]}Z"


def _after(ts: str) -> str:
    return _wal_stamp(ts)


@pytest.mark.parametrize(("name", "k"), _cases())
def test_the_brief_after_a_real_compaction_carries_what_the_session_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, k: int
) -> None:
    r = Replay(tmp_path, monkeypatch, name, k, late=False)
    assert r.capture["v"] == 2 and r.capture["error"] is None
    assert not r.capture["read"]["cut"]
    for text, status in r.facts.tasks:
        assert f"- [{status}] {_said(text, 120)}" in r.plain, (text, status)
    if not r.facts.tasks:
        assert r.capture["todos"] is None
    for request in r.requests[-3:]:
        assert _said(request, 100) in r.plain, request
    kinds = {u["kind"] for u in r.capture["user"]}
    assert kinds <= {"prompt", "command", "queued", "rejected"}
    for path in r.facts.edited:
        assert path in r.plain, path
    for failed in r.facts.failed[-3:]:
        assert _said(failed.command.split("\n")[0], 60) in r.plain, failed.command
        telling = realsessions.error_lines(failed.output)
        if telling:
            assert any(_said(line, 40) in r.plain for line in telling), (failed.command, telling)
    assert not (set(r.capture["unknown"]) & {"type:user", "type:assistant"})


@pytest.mark.parametrize(("name", "k"), _cases())
def test_a_task_list_made_long_before_the_checkpoint_is_carried_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, k: int
) -> None:
    r = Replay(tmp_path, monkeypatch, name, k, late=True)
    for text, status in r.facts.tasks:
        assert f"- [{status}] {_said(text, 120)}" in r.plain, (text, status)
    shown = r.capture["todos"]["items"] if r.capture["todos"] else []
    assert sorted(map(tuple, shown)) == sorted((_said(t, 200), s) for t, s in r.facts.tasks)


def test_every_line_label_is_the_files_own_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Labels count the file's lines, not the lines from where the read started (a checkpoint late in the file)."""
    name = "claude-code-2.1.20-tasks.jsonl.gz"
    r = Replay(tmp_path, monkeypatch, name, 0, late=True)
    lines = _lines(FIXTURES / name)
    assert r.capture["read"]["from"] > 0
    for entry in [*r.capture["user"], *r.capture["failed"], r.capture["assistant"]]:
        assert entry["line"] is not None
        rec = json.loads(lines[entry["line"] - 1])
        assert rec.get("timestamp", "")[:19] == (entry.get("ts") or rec["timestamp"])[:19] or "failed" in str(entry)
        assert rec["type"] in ("user", "assistant", "queue-operation")
