"""Claude Code (pinned, real CLI in print mode) against a mock Anthropic Messages server, with rehydrate's hooks.

Asserts on what the model was sent (the mock's request log), on the WAL and on the files, never on rehydrate's stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from e2e.e2e_harness import GOAL, SCHEMA, Harness, make_harness, reject_many
from e2e.e2e_mock import MockModel, Reply, Request, Turns

pytestmark = pytest.mark.e2e

MODEL = "claude-sonnet-4-5"
SUMMARY = "SUMMARY-E2E-91c2"
BRIEF = "# rehydrate brief"
NOTICE = "A context compaction just happened"


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    return json.dumps(messages[-1].get("content"), ensure_ascii=False)


def turns(*replies: Reply) -> Turns:
    """The model's script: Claude Code's compaction requests get the summary; every other request the next reply."""
    return Turns(*replies, compaction=_is_compaction, summary=f"<analysis>a</analysis>\n<summary>{SUMMARY}</summary>")


def _is_compaction(body: dict[str, Any]) -> bool:
    last = _last_user_text(body)
    return "Respond with TEXT ONLY" in last and "<summary>" in last


def _main(requests: list[Request]) -> list[Request]:
    """The requests of the conversation itself (no summarizer)."""
    return [r for r in requests if not _is_compaction(r.body)]


@pytest.fixture
def claude(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("claude", repo, tmp_path)
    r = rehydrate("install", "claude", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    h.env.update(
        ANTHROPIC_API_KEY="dummy",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
    )
    return h


def _run(h: Harness, mock: MockModel, prompt: str, *extra: str) -> str:
    """One print-mode run; returns its session id."""
    h.env["ANTHROPIC_BASE_URL"] = mock.url
    p = h.run("-p", prompt, "--output-format", "stream-json", "--verbose", "--model", MODEL, *extra)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    result = json.loads(p.stdout.strip().splitlines()[-1])
    assert result["type"] == "result", result
    return str(result["session_id"])


def _tool_results(req: Request) -> list[dict[str, Any]]:
    content = req.body["messages"][-1]["content"]
    return [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]


def test_the_brief_with_the_goal_and_every_rejected_id_is_in_the_first_request_and_no_compaction_no_record(
    claude: Harness, tmp_path: Path
) -> None:
    with MockModel("anthropic", turns(Reply(text="hello")), tmp_path / "requests.jsonl") as mock:
        _run(claude, mock, "hello")
    first = mock.requests[0]
    ids = claude.rejected_ids()
    assert len(ids) == 3
    text = json.dumps(first.body["messages"][0], ensure_ascii=False)
    assert BRIEF in text and GOAL in text
    assert [i for i in ids if i not in text] == []
    assert NOTICE not in first.text  # no compaction happened: no notice
    assert claude.ops("compaction") == []  # and no record
    assert len(claude.ops("resume")) == 1


def test_a_brief_of_40_non_latin_rejected_approaches_reaches_the_model_whole(claude: Harness, tmp_path: Path) -> None:
    ids = reject_many(claude.repo)
    assert len(ids) == 43
    with MockModel("anthropic", turns(Reply(text="hello")), tmp_path / "requests.jsonl") as mock:
        _run(claude, mock, "hello")
    first = mock.requests[0].text
    assert GOAL in first and [i for i in ids if i not in first] == []


def _guarded_call(tool: str, repo: Path) -> Reply:
    target = str(repo / "db" / "schema.sql")
    if tool == "Write":
        return Reply(tool="Write", args={"file_path": target, "content": "drop table t;\n"})
    if tool == "Edit":
        return Reply(tool="Edit", args={"file_path": target, "old_string": "id int", "new_string": "id text"})
    return Reply(tool="Bash", args={"command": "rm db/schema.sql", "description": "remove the schema"})


@pytest.mark.parametrize(("tool", "mode"), [("Write", "deny"), ("Edit", "deny"), ("Bash", "deny"), ("Write", None)])
def test_a_guarded_call_is_denied_and_the_model_is_told_which_rejected_approach(
    claude: Harness, tmp_path: Path, tool: str, mode: str | None
) -> None:
    """Under deny, and under the default (ask, which print mode takes as a denial)."""
    if mode:
        claude.config(guard=mode)
    rejected = claude.ops("reject")[0]["data"]
    # Claude Code refuses to write a file the model has not read, before any hook: read it first.
    read = Reply(tool="Read", args={"file_path": str(claude.repo / "db" / "schema.sql")})
    script = turns(read, _guarded_call(tool, claude.repo))
    with MockModel("anthropic", script, tmp_path / "requests.jsonl") as mock:
        # The harness's own permissions allow the call: only the hook stops it.
        _run(claude, mock, "change the schema", "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
    main = _main(mock.requests)
    assert len(main) == 3, [r.text[-300:] for r in main]
    results = _tool_results(main[2])
    assert len(results) == 1 and results[0].get("is_error") is True
    quoted = json.dumps(results[0]["content"], ensure_ascii=False)
    assert rejected["id"] in quoted and "Edit db/schema.sql directly" in quoted
    assert (claude.repo / "db" / "schema.sql").read_text() == SCHEMA  # not written, not removed


def test_a_superseded_rejection_stops_nothing_and_the_brief_names_it_out_of_force(
    claude: Harness, tmp_path: Path
) -> None:
    """The rejected approach that guards db/schema.sql, superseded by a decision that says why: the real Claude Code,
    under guard=deny, writes the file, and the brief in its first request quotes the new decision, not the old
    rejection, and names the old one's id as out of force."""
    claude.config(guard="deny")
    rejected = claude.ops("reject")[0]["data"]
    lift = ["invariant", "Edit db/schema.sql for the seed data", "--because", "seeds are not migrations"]
    assert rehydrate(*lift, "--supersedes", rejected["id"], cwd=claude.repo).code == 0
    read = Reply(tool="Read", args={"file_path": str(claude.repo / "db" / "schema.sql")})
    with MockModel("anthropic", turns(read, _guarded_call("Write", claude.repo)), tmp_path / "r.jsonl") as mock:
        _run(claude, mock, "change the schema", "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
    main = _main(mock.requests)
    assert len(main) == 3, [r.text[-300:] for r in main]
    results = _tool_results(main[2])
    assert len(results) == 1 and not results[0].get("is_error"), results
    assert (claude.repo / "db" / "schema.sql").read_text() == "drop table t;\n"
    brief = json.dumps(main[0].body["messages"][0], ensure_ascii=False)
    assert BRIEF in brief and f"superseding {rejected['id']}: Edit db/schema.sql for the seed data" in brief
    assert "Edit db/schema.sql directly" not in brief
    assert f"(no longer in force): {rejected['id']} (" in brief


@pytest.mark.parametrize("tool", ["Write", "Bash"])
def test_an_unguarded_call_goes_through(claude: Harness, tmp_path: Path, tool: str) -> None:
    claude.config(guard="deny")
    target = claude.repo / "notes.txt"
    if tool == "Write":
        call = Reply(tool="Write", args={"file_path": str(target), "content": "fine\n"})
    else:
        call = Reply(tool="Bash", args={"command": "echo fine > notes.txt", "description": "write notes"})
    with MockModel("anthropic", turns(call), tmp_path / "requests.jsonl") as mock:
        _run(claude, mock, "write notes", "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
    results = _tool_results(_main(mock.requests)[1])
    assert len(results) == 1 and not results[0].get("is_error"), results
    assert target.read_text() == "fine\n"


def test_a_manual_compaction_is_recorded_once_and_the_next_request_carries_the_brief_with_the_notice(
    claude: Harness, tmp_path: Path
) -> None:
    with MockModel("anthropic", turns(), tmp_path / "requests.jsonl") as mock:
        session = _run(claude, mock, "hello")
        assert claude.ops("compaction") == []
        _run(claude, mock, "/compact", "--resume", session)
        assert any(_is_compaction(r.body) for r in mock.requests), "the mock never saw the summarizer's request"
        before = len(mock.requests)
        _run(claude, mock, "next", "--resume", session)
    after = mock.requests[before]
    assert SUMMARY in after.text  # the compacted conversation
    assert NOTICE in after.text and GOAL in after.text
    assert [i for i in claude.rejected_ids() if i not in after.text] == []
    records = claude.ops("compaction")
    assert len(records) >= 1 and all(r["data"].get("trigger") == "manual" for r in records)


def test_an_automatic_compaction_is_recorded_and_the_next_request_carries_the_brief_with_the_notice(
    claude: Harness, tmp_path: Path
) -> None:
    with MockModel("anthropic", turns(Reply(text="hello", input_tokens=190_000)), tmp_path / "requests.jsonl") as mock:
        session = _run(claude, mock, "hello")
        assert claude.ops("compaction") == []
        _run(claude, mock, "next", "--resume", session, "--autocompact", "100000")
    at = [n for n, r in enumerate(mock.requests) if _is_compaction(r.body)]
    assert len(at) == 1, "the mock saw no summarizer's request, or more than one"
    after = mock.requests[at[0] + 1].text
    assert SUMMARY in after and NOTICE in after and GOAL in after
    assert [i for i in claude.rejected_ids() if i not in after] == []
    records = claude.ops("compaction")
    assert len(records) == 1 and records[0]["data"].get("trigger") == "auto"


def test_a_manual_compaction_appends_exactly_one_compaction_record(claude: Harness, tmp_path: Path) -> None:
    """PreCompact records the compaction; PostCompact records its end (`compacted`, the summary's length and hash)."""
    with MockModel("anthropic", turns(), tmp_path / "requests.jsonl") as mock:
        session = _run(claude, mock, "hello")
        _run(claude, mock, "/compact", "--resume", session)
    assert len(claude.ops("compaction")) == 1
    assert claude.ops("compaction")[0]["data"]["trigger"] == "manual"
    ends = claude.ops("compacted")
    assert len(ends) == 1 and ends[0]["data"]["summary_chars"] > 0


def test_after_a_compaction_and_a_resume_the_next_request_carries_one_brief(claude: Harness, tmp_path: Path) -> None:
    """SessionStart compact and SessionStart resume each injected a whole brief."""
    with MockModel("anthropic", turns(), tmp_path / "requests.jsonl") as mock:
        session = _run(claude, mock, "hello")
        _run(claude, mock, "/compact", "--resume", session)
        before = len(mock.requests)
        _run(claude, mock, "next", "--resume", session)
    assert mock.requests[before].text.count(BRIEF) == 1


@pytest.mark.parametrize("reminder", [None, 1])
def test_the_stop_hook_adds_no_model_turn(claude: Harness, tmp_path: Path, reminder: int | None) -> None:
    if reminder is not None:
        claude.config(stop_reminder_after=reminder)
    call = Reply(tool="Bash", args={"command": "echo hi", "description": "say hi"})
    with MockModel("anthropic", turns(call, Reply(text="finished")), tmp_path / "requests.jsonl") as mock:
        _run(claude, mock, "say hi", "--allowedTools", "Bash")
    # the tool call, then the answer to its result: nothing after it
    assert len(mock.requests) == 2, [_last_user_text(r.body)[-300:] for r in mock.requests[2:]]


def test_install_then_uninstall_leaves_claude_code_files_byte_identical(repo: Path, tmp_path: Path) -> None:
    h = make_harness("claude", repo, tmp_path)
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = (
        b'{\n  "permissions": {"allow": ["Bash(ls:*)"]},\n'
        b'  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n}\n'
    )
    settings.write_bytes(original)
    assert rehydrate("install", "claude", cwd=repo).code == 0
    assert settings.read_bytes() != original
    h.env.update(ANTHROPIC_API_KEY="dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1")
    with MockModel("anthropic", turns(), tmp_path / "requests.jsonl") as mock:
        _run(h, mock, "hello")
    assert BRIEF in mock.requests[0].text  # the hooks ran
    r = rehydrate("install", "claude", "--uninstall", cwd=repo)
    assert r.code == 0, r.err
    assert settings.read_bytes() == original
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
