"""Gemini CLI (pinned, real CLI in `-p` mode) against a mock Gemini streamGenerateContent server, with rehydrate's
hooks.

Asserts on what the model was sent (the mock's request log), on the WAL and on the files, never on rehydrate's stdout.
The folder is trusted in ~/.gemini/trustedFolders.json (else `-p` exits 55); the API key is selected in settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_harness import GOAL, SCHEMA, Harness, gemini_settings, make_harness, reject_many
from e2e_mock import MockModel, Reply, Request, Turns

from conftest import rehydrate

pytestmark = pytest.mark.e2e

MODEL = "gemini-2.5-flash"
BRIEF = "# rehydrate brief"
NOTICE = "A context compaction just happened"


def _prepare(h: Harness) -> None:
    gemini_settings(h)


@pytest.fixture
def gemini(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("gemini", repo, tmp_path)
    r = rehydrate("install", "gemini", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    _prepare(h)
    return h


def _run(h: Harness, mock: MockModel, prompt: str) -> None:
    h.env["GOOGLE_GEMINI_BASE_URL"] = mock.url
    p = h.run("-p", prompt, "--yolo", "-m", MODEL, "-o", "json")
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])


def _responses(req: Request) -> list[dict[str, Any]]:
    parts = req.body["contents"][-1]["parts"]
    return [p["functionResponse"] for p in parts if "functionResponse" in p]


def test_the_brief_with_the_goal_and_every_rejected_id_is_in_the_first_request(gemini: Harness, tmp_path: Path) -> None:
    with MockModel("gemini", Turns(Reply(text="hello")), tmp_path / "requests.jsonl") as mock:
        _run(gemini, mock, "hello")
    first = mock.requests[0].text
    assert BRIEF in first and GOAL in first
    assert [i for i in gemini.rejected_ids() if i not in first] == []
    assert NOTICE not in first


def test_a_brief_of_40_non_latin_rejected_approaches_reaches_the_model_whole(gemini: Harness, tmp_path: Path) -> None:
    ids = reject_many(gemini.repo)
    assert len(ids) == 43
    with MockModel("gemini", Turns(Reply(text="hello")), tmp_path / "requests.jsonl") as mock:
        _run(gemini, mock, "hello")
    first = mock.requests[0].text
    assert GOAL in first and [i for i in ids if i not in first] == []


def test_no_compaction_no_record(gemini: Harness, tmp_path: Path) -> None:
    """Issue 9 item 7: Gemini CLI fires PreCompress before every model request, whether it compresses or not."""
    call = Reply(tool="run_shell_command", args={"command": "echo hi"})
    logs = sorted((gemini.repo / "state" / "wal").glob("*.jsonl"))
    before = [log.read_bytes() for log in logs]
    with MockModel("gemini", Turns(call), tmp_path / "requests.jsonl") as mock:
        _run(gemini, mock, "say hi")
    assert all(NOTICE not in r.text for r in mock.requests)
    assert gemini.ops("compaction") == []
    # its notes go to the worktree's journal: the committed log is unchanged by requests that compress nothing
    assert [log.read_bytes() for log in logs] == before and len(gemini.ops("precompress")) >= 2


def _guarded_call(tool: str) -> Reply:
    if tool == "write_file":
        return Reply(tool="write_file", args={"file_path": "db/schema.sql", "content": "drop table t;\n"})
    if tool == "replace":
        args = {"file_path": "db/schema.sql", "old_string": "id int", "new_string": "id text", "instruction": "x"}
        return Reply(tool="replace", args=args)
    return Reply(tool="run_shell_command", args={"command": "rm db/schema.sql"})


@pytest.mark.parametrize("tool", ["write_file", "replace", "run_shell_command"])
def test_a_guarded_call_is_denied_and_the_model_is_told_which_rejected_approach(
    gemini: Harness, tmp_path: Path, tool: str
) -> None:
    gemini.config(guard="deny")
    rejected = gemini.ops("reject")[0]["data"]
    with MockModel("gemini", Turns(_guarded_call(tool)), tmp_path / "requests.jsonl") as mock:
        _run(gemini, mock, "change the schema")
    assert len(mock.requests) == 2
    responses = _responses(mock.requests[1])
    assert len(responses) == 1
    quoted = json.dumps(responses[0], ensure_ascii=False)
    assert "blocked" in quoted and rejected["id"] in quoted and "Edit db/schema.sql directly" in quoted
    assert (gemini.repo / "db" / "schema.sql").read_text() == SCHEMA


def test_under_the_default_guard_the_call_runs(gemini: Harness, tmp_path: Path) -> None:
    """Gemini CLI has no `ask`: the default guard warns the user (issue 9 item 10, documented), the call still runs."""
    with MockModel("gemini", Turns(_guarded_call("run_shell_command")), tmp_path / "requests.jsonl") as mock:
        _run(gemini, mock, "change the schema")
    assert len(mock.requests) == 2
    assert "blocked" not in json.dumps(_responses(mock.requests[1]))
    assert not (gemini.repo / "db" / "schema.sql").exists()


def test_an_unguarded_call_goes_through(gemini: Harness, tmp_path: Path) -> None:
    """(A shell command goes through in the default-guard test above.)"""
    gemini.config(guard="deny")
    call = Reply(tool="write_file", args={"file_path": str(gemini.repo / "notes.txt"), "content": "fine\n"})
    with MockModel("gemini", Turns(call), tmp_path / "requests.jsonl") as mock:
        _run(gemini, mock, "write notes")
    responses = _responses(mock.requests[1])
    assert len(responses) == 1 and "blocked" not in json.dumps(responses[0]), responses
    assert (gemini.repo / "notes.txt").read_text() == "fine\n"


def test_install_then_uninstall_leaves_gemini_files_byte_identical(repo: Path, tmp_path: Path) -> None:
    h = make_harness("gemini", repo, tmp_path)
    rules = repo / "GEMINI.md"
    original_rules = b"# Gemini\n\nKeep answers short.\n"
    rules.write_bytes(original_rules)
    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    original_settings = b'{\n  "ui": {"theme": "Default"}\n}\n'
    settings.write_bytes(original_settings)
    r = rehydrate("install", "gemini", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    assert settings.read_bytes() != original_settings and rules.read_bytes() != original_rules
    _prepare(h)
    with MockModel("gemini", Turns(), tmp_path / "requests.jsonl") as mock:
        _run(h, mock, "hello")
    assert BRIEF in mock.requests[0].text  # the hooks ran
    r = rehydrate("install", "gemini", "--uninstall", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    assert settings.read_bytes() == original_settings
    assert rules.read_bytes() == original_rules
