"""Codex CLI (pinned, real `codex exec`) against a mock OpenAI Responses server, with rehydrate's hooks.

Asserts on what the model was sent (the mock's request log), on the WAL and on the files, never on rehydrate's stdout.
The project is trusted in config.toml; the hooks are trusted for each `exec` run with `--dangerously-bypass-hook-trust`,
and through the app server (hooks/list, config/batchWrite) in the manual compaction test, as a client trusts them
(tests/harness/setup/test_trust.py covers the trust steps a user must take).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from e2e.e2e_harness import GOAL, SCHEMA, Harness, codex_config, codex_exec, make_harness, reject_many
from e2e.e2e_mock import MockModel, Reply, Request, Turns

pytestmark = pytest.mark.e2e

MODEL = "gpt-5.5"  # from Codex's own catalog: an unknown name gets fallback settings without apply_patch
SUMMARY = "SUMMARY-E2E-4d7e"
BRIEF = "# rehydrate brief"
NOTICE = "A context compaction just happened"


def turns(*replies: Reply) -> Turns:
    """The model's script: Codex's compaction requests get the summary; every other request the next reply."""
    return Turns(*replies, compaction=_is_compaction, summary=SUMMARY)


def _is_compaction(body: dict[str, Any]) -> bool:
    items = body.get("input") or [{}]
    return "CONTEXT CHECKPOINT COMPACTION" in json.dumps(items[-1])


def _main(requests: list[Request]) -> list[Request]:
    return [r for r in requests if not _is_compaction(r.body)]


def _configure(h: Harness, mock: MockModel, *extra: str) -> None:
    codex_config(h, mock.url, MODEL, *extra)


@pytest.fixture
def codex(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("codex", repo, tmp_path)
    r = rehydrate("install", "codex", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    h.env["MOCK_API_KEY"] = "dummy"
    return h


def _run(h: Harness, mock: MockModel, prompt: str, *config: str) -> None:
    """One `codex exec` run, the sandbox and approvals off: only the hooks can stop a call."""
    codex_exec(h, mock.url, MODEL, prompt, *config)


def _outputs(req: Request) -> list[dict[str, Any]]:
    return [i for i in req.body["input"] if i.get("type") in ("function_call_output", "custom_tool_call_output")]


def test_the_brief_with_the_goal_and_every_rejected_id_is_in_the_first_request_and_no_compaction_no_record(
    codex: Harness, tmp_path: Path
) -> None:
    with MockModel("openai", turns(Reply(text="hello")), tmp_path / "requests.jsonl") as mock:
        _run(codex, mock, "hello")
    first = mock.requests[0].text
    ids = codex.rejected_ids()
    assert BRIEF in first and GOAL in first
    assert [i for i in ids if i not in first] == []
    assert NOTICE not in first
    assert codex.ops("compaction") == []


def test_a_brief_of_40_non_latin_rejected_approaches_reaches_the_model_whole(codex: Harness, tmp_path: Path) -> None:
    """Codex caps hook output near 2,500 tokens counted at about 4 bytes a token."""
    ids = reject_many(codex.repo)
    assert len(ids) == 43
    with MockModel("openai", turns(Reply(text="hello")), tmp_path / "requests.jsonl") as mock:
        _run(codex, mock, "hello")
    first = mock.requests[0].text
    assert "truncated output" not in first
    assert GOAL in first and [i for i in ids if i not in first] == []


def _guarded_call(tool: str) -> Reply:
    if tool == "apply_patch":
        patch = "*** Begin Patch\n*** Update File: db/schema.sql\n@@\n-create table t (id int);\n+drop table t;\n"
        patch += "*** End Patch\n"
        return Reply(tool="apply_patch", custom=True, args={"input": patch})
    return Reply(tool="exec_command", args={"cmd": "rm db/schema.sql"})


@pytest.mark.parametrize("tool", ["apply_patch", "exec_command"])
def test_a_guarded_call_is_denied_and_the_model_is_told_which_rejected_approach(
    codex: Harness, tmp_path: Path, tool: str
) -> None:
    codex.config(guard="deny")
    rejected = codex.ops("reject")[0]["data"]
    with MockModel("openai", turns(_guarded_call(tool)), tmp_path / "requests.jsonl") as mock:
        _run(codex, mock, "change the schema")
    main = _main(mock.requests)
    assert len(main) == 2
    outputs = _outputs(main[1])
    assert len(outputs) == 1
    quoted = json.dumps(outputs[0], ensure_ascii=False)
    assert "blocked by PreToolUse hook" in quoted
    assert rejected["id"] in quoted and "Edit db/schema.sql directly" in quoted
    assert (codex.repo / "db" / "schema.sql").read_text() == SCHEMA


def test_under_the_default_guard_the_call_runs_and_the_model_is_warned(codex: Harness, tmp_path: Path) -> None:
    """Codex has no `ask`: the default guard warns (documented), the command still runs."""
    rejected = codex.ops("reject")[0]["data"]
    with MockModel("openai", turns(_guarded_call("exec_command")), tmp_path / "requests.jsonl") as mock:
        _run(codex, mock, "change the schema")
    main = _main(mock.requests)
    assert len(main) == 2
    warnings = [i for i in main[1].body["input"] if "matches an approach rejected" in json.dumps(i)]
    assert "matches an approach rejected" not in main[0].text
    assert len(warnings) == 1 and rejected["id"] in json.dumps(warnings[0], ensure_ascii=False)
    assert not (codex.repo / "db" / "schema.sql").exists()  # the warning does not stop it


@pytest.mark.parametrize("tool", ["apply_patch", "exec_command"])
def test_an_unguarded_call_goes_through(codex: Harness, tmp_path: Path, tool: str) -> None:
    codex.config(guard="deny")
    if tool == "apply_patch":
        call = Reply(
            tool="apply_patch",
            custom=True,
            args={"input": "*** Begin Patch\n*** Add File: notes.txt\n+fine\n*** End Patch\n"},
        )
    else:
        call = Reply(tool="exec_command", args={"cmd": "echo fine > notes.txt"})
    with MockModel("openai", turns(call), tmp_path / "requests.jsonl") as mock:
        _run(codex, mock, "write notes")
    outputs = _outputs(_main(mock.requests)[1])
    assert len(outputs) == 1 and "blocked" not in json.dumps(outputs[0])
    assert (codex.repo / "notes.txt").read_text() == "fine\n"


def test_an_automatic_compaction_is_recorded_once_and_the_next_request_carries_the_brief_with_the_notice(
    codex: Harness, tmp_path: Path
) -> None:
    call = Reply(tool="exec_command", args={"cmd": "echo hi"}, input_tokens=900_000)
    with MockModel("openai", turns(call), tmp_path / "requests.jsonl") as mock:
        _run(codex, mock, "say hi", "model_auto_compact_token_limit = 5000")
    at = [n for n, r in enumerate(mock.requests) if _is_compaction(r.body)]
    assert len(at) == 1, "the mock never saw the summarizer's request"
    after = mock.requests[at[0] + 1].text
    assert SUMMARY in after and NOTICE in after and GOAL in after
    assert [i for i in codex.rejected_ids() if i not in after] == []
    records = codex.ops("compaction")
    assert len(records) == 1 and records[0]["data"].get("trigger") == "auto"
    _the_end_is_fingerprinted(codex, "auto")


def _the_end_is_fingerprinted(codex: Harness, trigger: str) -> None:
    """PostCompact appended one `compacted` record: the summary's length and hash, read from the rollout (Codex's
    event carries no summary), never its text."""
    ends = codex.ops("compacted")
    assert len(ends) == 1, ends
    data = ends[0]["data"]
    assert data["trigger"] == trigger and data["summary_source"] == "message", data
    assert data["summary_chars"] >= len(SUMMARY) and SUMMARY not in json.dumps(data)
    assert len(data["summary_sha256"]) == 64


class AppServer:
    """`codex app-server` over stdio (JSON-RPC, one object a line): how a client trusts hooks and compacts by hand."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.messages.put(json.loads(line))

    def call(self, method: str, params: dict[str, Any], until: str | None = None) -> dict[str, Any]:
        """Send a request; return its result once it came (and, with until, once that notification came too)."""
        assert self.proc.stdin is not None
        self.ids += 1
        self.proc.stdin.write(json.dumps({"id": self.ids, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        result = None
        seen = until is None
        while result is None or not seen:
            msg = self.messages.get(timeout=60)
            if msg.get("id") == self.ids:
                assert "error" not in msg, msg
                result = msg["result"]
            elif msg.get("method") == until:
                seen = True
        return result


def test_a_manual_compaction_is_recorded_once_and_the_next_request_carries_the_brief_with_the_notice(
    codex: Harness, tmp_path: Path
) -> None:
    """Through the app server, with the hooks trusted the way a client does it (hooks/list, then config/batchWrite)."""
    with MockModel("openai", turns(), tmp_path / "requests.jsonl") as mock:
        _configure(codex, mock)
        with subprocess.Popen(
            [str(codex.exe), "app-server"],
            cwd=codex.repo,
            env=codex.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as proc:
            server = AppServer(proc)
            server.call("initialize", {"clientInfo": {"name": "rehydrate-e2e", "version": "1"}})
            hooks = server.call("hooks/list", {"cwds": [str(codex.repo)]})["data"][0]["hooks"]
            edits = [
                {"keyPath": f"hooks.state.{json.dumps(h['key'])}.trusted_hash", "value": h["currentHash"]}
                for h in hooks
            ]
            server.call("config/batchWrite", {"edits": [{**e, "mergeStrategy": "upsert"} for e in edits]})
            listed = server.call("hooks/list", {"cwds": [str(codex.repo)]})["data"][0]["hooks"]
            assert {h["trustStatus"] for h in listed} == {"trusted"}
            thread = server.call("thread/start", {"cwd": str(codex.repo)})["thread"]["id"]
            hello = {"threadId": thread, "input": [{"type": "text", "text": "hello"}]}
            server.call("turn/start", hello, until="turn/completed")
            assert codex.ops("compaction") == []
            server.call("thread/compact/start", {"threadId": thread}, until="turn/completed")
            before = len(mock.requests)
            follow = {"threadId": thread, "input": [{"type": "text", "text": "next"}]}
            server.call("turn/start", follow, until="turn/completed")
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)
    assert any(_is_compaction(r.body) for r in mock.requests[:before])
    after = mock.requests[before].text
    assert SUMMARY in after and NOTICE in after and GOAL in after
    assert [i for i in codex.rejected_ids() if i not in after] == []
    records = codex.ops("compaction")
    assert len(records) == 1 and records[0]["data"].get("trigger") == "manual"
    _the_end_is_fingerprinted(codex, "manual")


def test_install_then_uninstall_leaves_codex_files_byte_identical(repo: Path, tmp_path: Path) -> None:
    h = make_harness("codex", repo, tmp_path)
    agents = repo / "AGENTS.md"
    original = b"# Agents\n\nRun the tests before committing.\n"
    agents.write_bytes(original)
    r = rehydrate("install", "codex", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    assert agents.read_bytes() != original and (repo / ".codex" / "hooks.json").exists()
    h.env["MOCK_API_KEY"] = "dummy"
    with MockModel("openai", turns(), tmp_path / "requests.jsonl") as mock:
        _run(h, mock, "hello")
    assert BRIEF in mock.requests[0].text  # the hooks ran
    r = rehydrate("install", "codex", "--uninstall", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    assert agents.read_bytes() == original
    assert not (repo / ".codex").exists() or list((repo / ".codex").iterdir()) == []
