"""Gemini CLI (pinned, real CLI in `-p` mode) against a mock Gemini streamGenerateContent server, with rehydrate's
hooks.

Asserts on what the model was sent (the mock's request log), on the WAL and on the files, never on rehydrate's stdout.
The folder is trusted in ~/.gemini/trustedFolders.json (else `-p` exits 55); the API key is selected in settings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from e2e.e2e_harness import GOAL, SCHEMA, Harness, Terminal, gemini_settings, make_harness, reject_many
from e2e.e2e_mock import MockModel, Reply, Request, Turns

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
    """Gemini CLI fires PreCompress before every model request, whether it compresses or not."""
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
    """Gemini CLI has no `ask`: the default guard warns the user (documented), the call still runs."""
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


SUMMARY = "<state_snapshot><overall_goal>the summary the mock wrote SUMMARY-5e1d</overall_goal></state_snapshot>"


def _summarizing(body: dict[str, Any]) -> bool:
    """A request of Gemini CLI's compression service (its summary, then its check of it), not of the conversation."""
    contents = body.get("contents") or [{}]
    return "state_snapshot>" in json.dumps(contents[-1])  # its last message asks for a <state_snapshot>


def _conversation(requests: list[Request]) -> list[Request]:
    """The conversation's requests (streamed), not the compression service's."""
    return [r for r in requests if ":streamGenerateContent" in r.path]


def _enter(t: Terminal, text: str, done: Callable[[float], bool], what: str) -> None:
    """text typed, then Enter until done(seconds) says it was taken. The CLI echoes keys at once but ignores an Enter
    while it is still busy with the last turn (its hooks, its display), and takes an Enter within 30 ms of a typed
    character for a new line (a paste, in a terminal without bracketed paste): a cursor key, which types nothing,
    goes before each Enter. An Enter on an empty input does nothing, so one too many is harmless."""
    t.type(text)
    t.wait_text(text)
    for _ in range(30):
        t.type("\x1b[C\r")
        if done(2.0):
            return
    raise AssertionError(f"{what} never happened after {text!r}; the terminal's last output:\n{t.screen()[-3000:]}")


def _prompt(t: Terminal, mock: MockModel, text: str, answers: int) -> list[Request]:
    """text typed into the interactive CLI and sent; the conversation's requests once there are `answers` of them."""

    def arrived(seconds: float) -> bool:
        try:
            mock.wait_for(lambda rs: len(_conversation(rs)) >= answers, seconds)
        except AssertionError:
            return False
        return True

    _enter(t, text, arrived, f"request {answers}")
    return _conversation(mock.requests)


def _carries(req: Request) -> tuple[int, int]:
    """(how many briefs, how many compaction notices) the request's messages carry."""
    return req.text.count(BRIEF), req.text.count(NOTICE)


def test_after_an_automatic_compression_each_request_carries_the_brief_once(gemini: Harness, tmp_path: Path) -> None:
    """The interactive CLI: a first answer that reports most of the window used, so that the next prompt's turn
    compresses the history first; each request of it after that carries the brief after the summary, once."""
    logs = sorted((gemini.repo / "state" / "wal").glob("*.jsonl"))
    big = Reply(text="first answer", input_tokens=900_000)
    call = Reply(tool="run_shell_command", args={"command": "echo hi"})
    turns = Turns(big, call, Reply(text="second answer"), compaction=_summarizing, summary=SUMMARY)
    with MockModel("gemini", turns, tmp_path / "requests.jsonl") as mock:
        gemini.env["GOOGLE_GEMINI_BASE_URL"] = mock.url
        with Terminal(gemini, "--yolo", "-m", MODEL) as t:
            t.wait_text("Type your message")
            before = [log.read_bytes() for log in logs]
            first = _prompt(t, mock, "say hi", 1)[0]
            t.wait_text("first answer")
            assert [log.read_bytes() for log in logs] == before  # a request that compressed nothing wrote nothing
            requests = _prompt(t, mock, "go on", 3)
            t.wait_text("second answer")
    assert _carries(first) == (1, 0)  # the session's brief (SessionStart), no notice
    summarized = [r for r in mock.requests if _summarizing(r.body)]
    assert summarized and all(NOTICE not in r.text for r in summarized)  # the summarizer is sent no brief
    after = requests[1:]
    assert len(after) == 2 and all(SUMMARY in r.text for r in after)
    assert [_carries(r) for r in after] == [(1, 1), (1, 1)]  # the request with the tool's answer too
    compactions = gemini.ops("compaction")
    assert len(compactions) == 1
    assert compactions[0]["data"]["trigger"] == "auto" and compactions[0]["data"]["phase"] == "request"
    # a later run resumes the compressed session: its chat file holds neither the summary nor what a request carried
    with MockModel("gemini", Turns(Reply(text="resumed")), tmp_path / "resumed.jsonl") as mock:
        gemini.env["GOOGLE_GEMINI_BASE_URL"] = mock.url
        p = gemini.run("-p", "where were we", "--resume", "latest", "--yolo", "-m", MODEL, "-o", "json")
        assert p.returncode == 0, p.stderr[-2000:]
    assert GOAL in mock.requests[0].text and BRIEF in mock.requests[0].text.split("where were we")[0]


def test_compress_by_hand_then_clear(gemini: Harness, tmp_path: Path) -> None:
    """`/compress` in the interactive CLI: the next request carries the brief with the notice; `/clear` then starts
    a conversation with the brief and no notice."""
    first = Reply(text="first answer", input_tokens=50_000)  # under the threshold; more than the summary's
    turns = Turns(first, Reply(text="after compress"), compaction=_summarizing, summary=SUMMARY)
    with MockModel("gemini", turns, tmp_path / "requests.jsonl") as mock:
        gemini.env["GOOGLE_GEMINI_BASE_URL"] = mock.url
        with Terminal(gemini, "--yolo", "-m", MODEL) as t:
            t.wait_text("Type your message")
            _prompt(t, mock, "say hi", 1)
            t.wait_text("first answer")
            at = t.mark()
            _enter(t, "/compress", lambda s: t.shows("Chat history compressed from 50000", s, at), "the compression")
            after = _prompt(t, mock, "go on", 2)[-1]
            t.wait_text("after compress")
            at = t.mark()
            _enter(t, "/clear", lambda s: t.shows("Tips for getting started", s, at), "the clearing")
            cleared = _prompt(t, mock, "fresh start", 3)[-1]
    assert SUMMARY in after.text and _carries(after) == (1, 1)
    compactions = gemini.ops("compaction")
    assert len(compactions) == 1 and compactions[0]["data"]["trigger"] == "manual"
    # Gemini CLI 0.61 drops SessionStart's context after /clear: the request carries the brief, without the notice
    assert SUMMARY not in cleared.text and _carries(cleared) == (1, 0)
