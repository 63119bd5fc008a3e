"""GitHub Copilot CLI (pinned, the real CLI from npm in `-p` mode) against a mock OpenAI Chat Completions server (a
custom provider: no GitHub sign-in), with rehydrate's hooks in .github/hooks/rehydrate.json.

Asserts on what the model was sent (the mock's request log), on the WAL and on the files, never on rehydrate's
stdout. The folder is trusted in $COPILOT_HOME/config.json: in -p mode Copilot skips an untrusted folder's hooks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from e2e.e2e_harness import GOAL, SCHEMA, Harness, copilot_env, copilot_run, make_harness
from e2e.e2e_mock import MockModel, Reply, Request, Turns

pytestmark = pytest.mark.e2e

BRIEF = "# rehydrate brief"
NOTICE = "A context compaction just happened"
SUMMARY = "SUMMARY-COPILOT-81c2"
COMPACTED_HISTORY = "Some of the conversation history has been summarized"  # what Copilot puts before a summary


def _summarizing(body: dict[str, Any]) -> bool:
    """Copilot's request for a compaction's summary (its last message asks for one), not the conversation's."""
    messages = body.get("messages") or [{}]
    return "Please create a detailed summary of the conversation so far" in json.dumps(messages[-1])


def turns(*replies: Reply) -> Turns:
    return Turns(*replies, compaction=_summarizing, summary=SUMMARY)


@pytest.fixture
def copilot(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("copilot", repo, tmp_path)
    r = rehydrate("install", "copilot", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    return h


def _run(h: Harness, mock: MockModel, prompt: str, *args: str) -> str:
    """One run; the session id Copilot prints for resuming it."""
    copilot_env(h, mock.url)
    p = copilot_run(h, prompt, *args)
    found = re.search(r"--resume=([0-9a-f-]{36})", p.stdout + p.stderr)
    return found.group(1) if found else ""


def _tool_results(req: Request) -> list[str]:
    return [str(m.get("content")) for m in req.body["messages"] if m.get("role") == "tool"]


def test_the_brief_with_the_goal_and_every_rejected_id_is_in_the_first_request(
    copilot: Harness, tmp_path: Path
) -> None:
    logs = sorted((copilot.repo / "state" / "wal").glob("*.jsonl"))
    before = [log.read_bytes() for log in logs]
    call = Reply(tool="bash", args={"command": "echo hi", "description": "say hi"})
    with MockModel("chat", turns(call), tmp_path / "requests.jsonl") as mock:
        _run(copilot, mock, "hello")
    first = mock.requests[0].text
    assert first.count(BRIEF) == 1 and GOAL in first and NOTICE not in first
    assert [i for i in copilot.rejected_ids() if i not in first] == []
    assert len(mock.requests) == 2 and all(NOTICE not in r.text for r in mock.requests)
    # requests and tool calls that compact nothing leave the committed log as it was
    assert [log.read_bytes() for log in logs] == before


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("edit", {"path": "db/schema.sql", "old_str": "id int", "new_str": "id text"}),
        ("create", {"path": "db/schema.sql", "file_text": "drop table t;\n"}),
        ("bash", {"command": "rm db/schema.sql", "description": "remove it"}),
    ],
    ids=["edit", "create", "bash"],
)
@pytest.mark.parametrize("guard", ["deny", "ask"])
def test_a_guarded_call_is_blocked_and_the_model_is_told_which_rejected_approach(
    copilot: Harness, tmp_path: Path, tool: str, args: dict[str, Any], guard: str
) -> None:
    """deny blocks; ask (the default) blocks too in -p mode, where nobody can answer."""
    copilot.config(guard=guard)
    rejected = copilot.ops("reject")[0]["data"]
    with MockModel("chat", turns(Reply(tool=tool, args=args)), tmp_path / "requests.jsonl") as mock:
        _run(copilot, mock, "change the schema")
    results = _tool_results(mock.requests[1])
    assert len(results) == 1 and "Denied by preToolUse hook" in results[0], results
    assert rejected["id"] in results[0] and "Edit db/schema.sql directly" in results[0]
    assert (copilot.repo / "db" / "schema.sql").read_text() == SCHEMA


def test_an_unguarded_call_goes_through(copilot: Harness, tmp_path: Path) -> None:
    copilot.config(guard="deny")
    call = Reply(tool="create", args={"path": str(copilot.repo / "notes.txt"), "file_text": "fine\n"})
    with MockModel("chat", turns(call), tmp_path / "requests.jsonl") as mock:
        _run(copilot, mock, "write notes")
    assert "Denied" not in json.dumps(_tool_results(mock.requests[1]))
    assert (copilot.repo / "notes.txt").read_text() == "fine\n"


def test_after_a_compaction_the_next_tool_result_carries_the_brief_with_the_notice_once(
    copilot: Harness, tmp_path: Path
) -> None:
    """Automatic compactions (a small prompt budget, large tool outputs): Copilot drops sessionStart's context and
    sends no event after one; each is recorded, and the next tool result carries the brief with the notice, once."""
    big = {"command": "python3 -c \"print('x' * 12000)\"", "description": "print a lot"}
    calls = [Reply(tool="bash", args=big) for _ in range(6)]
    with MockModel("chat", turns(*calls, Reply(text="all done")), tmp_path / "requests.jsonl") as mock:
        copilot.env["COPILOT_PROVIDER_MAX_PROMPT_TOKENS"] = "16000"
        _run(copilot, mock, "print a lot, six times")
    summarized = [n for n, r in enumerate(mock.requests) if _summarizing(r.body)]
    assert summarized, "Copilot never asked for a summary"
    compactions = copilot.ops("compaction")
    assert len(compactions) == len(summarized) and {c["data"]["trigger"] for c in compactions} == {"auto"}
    # Copilot compacts in the background: a request may still go out with the whole history while it summarizes.
    # Every request whose history was compacted (it starts with the summary) carries the brief, once.
    compacted = [r for r in mock.requests if not _summarizing(r.body) and COMPACTED_HISTORY in r.text]
    assert compacted, "no request went out with a compacted history"
    for r in compacted:
        assert r.text.count(NOTICE) == 1 and r.text.count(BRIEF) == 1 and GOAL in r.text
    briefs = [r for r in copilot.ops("resume")]
    assert len(briefs) == 1 + len(compactions)  # the session's, then one after each compaction


def test_a_resumed_session_gets_the_brief_again_and_a_compaction_is_recorded(copilot: Harness, tmp_path: Path) -> None:
    """Copilot builds sessionStart's context again at each resume and keeps none of the earlier one: a resumed run
    gets the whole brief, never a pointer to one; `/compact` records the compaction."""
    with MockModel("chat", turns(Reply(text="first")), tmp_path / "requests.jsonl") as mock:
        session = _run(copilot, mock, "hello")
        assert session, "Copilot printed no session id to resume"
        assert _run(copilot, mock, "again", f"--resume={session}") == session
        resumed = mock.requests[-1].text
        _run(copilot, mock, "/compact", f"--resume={session}")
        compactions = copilot.ops("compaction")
        assert len(compactions) == 1 and compactions[0]["data"]["trigger"] == "manual"
        start = len(mock.requests)
        _run(copilot, mock, "go on", f"--resume={session}")
    assert resumed.count(BRIEF) == 1 and GOAL in resumed and "was given the brief" not in resumed
    after = mock.requests[start].text
    assert after.count(BRIEF) == 1 and GOAL in after


def test_install_then_uninstall_leaves_copilot_files_byte_identical(repo: Path, tmp_path: Path) -> None:
    h = make_harness("copilot", repo, tmp_path)
    instructions = repo / ".github" / "copilot-instructions.md"
    instructions.parent.mkdir()
    original = b"# Copilot\n\nKeep answers short.\n"
    instructions.write_bytes(original)
    r = rehydrate("install", "copilot", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    hooks = repo / ".github" / "hooks" / "rehydrate.json"
    assert hooks.exists() and instructions.read_bytes() != original
    entries = json.loads(hooks.read_text())["hooks"]["preToolUse"]
    assert all(
        e["bash"].endswith("hook copilot preToolUse") and "hook copilot preToolUse" in e["powershell"] for e in entries
    )
    with MockModel("chat", turns(), tmp_path / "requests.jsonl") as mock:
        _run(h, mock, "hello")
    assert BRIEF in mock.requests[0].text  # the hooks ran
    r = rehydrate("install", "copilot", "--uninstall", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    assert instructions.read_bytes() == original
    assert not hooks.exists() and not hooks.parent.exists()
