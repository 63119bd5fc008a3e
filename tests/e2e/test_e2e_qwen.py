"""Qwen Code (pinned, the real CLI from npm in `-p` mode) against a mock OpenAI Chat Completions server, with
rehydrate's hooks in .qwen/settings.json.

Asserts on what the model was sent (the mock's request log), on the WAL and on the files, never on rehydrate's
stdout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import rehydrate
from e2e.e2e_harness import GOAL, SCHEMA, Harness, make_harness
from e2e.e2e_mock import MockModel, Reply, Request, Turns

pytestmark = pytest.mark.e2e

MODEL = "mock-model"
BRIEF = "# rehydrate brief"
NOTICE = "A context compaction just happened"
SUMMARY = "<state_snapshot>SUMMARY-QWEN-3b9e</state_snapshot>"  # Qwen aborts a compaction whose summary lacks one


def _summarizing(body: dict[str, Any]) -> bool:
    """Qwen Code's request for a compaction's summary (its system prompt asks for one; no tools)."""
    return "summarizes a conversation" in json.dumps((body.get("messages") or [{}])[0])


def turns(*replies: Reply, tokens: int = 100) -> Turns:
    """The script; the summary reports about as many tokens as the conversation did (else Qwen finds the compacted
    history larger than the original and gives up)."""
    script = Turns(*replies, compaction=_summarizing, summary=SUMMARY)
    summary = Reply(text=SUMMARY, input_tokens=tokens - 1000 if tokens > 1000 else tokens)

    def answer(body: dict[str, Any]) -> Reply:
        return summary if _summarizing(body) else script(body)

    return answer  # type: ignore[return-value]


@pytest.fixture
def qwen(repo: Path, tmp_path: Path) -> Harness:
    h = make_harness("qwen", repo, tmp_path)
    r = rehydrate("install", "qwen", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    return h


def _run(h: Harness, mock: MockModel, prompt: str, *args: str) -> None:
    h.env.update(
        OPENAI_BASE_URL=f"{mock.url}/v1",
        OPENAI_API_KEY="dummy",
        OPENAI_MODEL=MODEL,
        QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
    )
    settings = h.home / ".qwen" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(
        json.dumps({"privacy": {"usageStatisticsEnabled": False}, "general": {"disableAutoUpdate": True}})
    )
    p = h.run("-p", prompt, "--yolo", *args, timeout=180)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])


def _conversation(requests: list[Request]) -> list[Request]:
    return [r for r in requests if not _summarizing(r.body)]


def _tool_results(req: Request) -> list[str]:
    return [str(m.get("content")) for m in req.body["messages"] if m.get("role") == "tool"]


def test_the_brief_with_the_goal_and_every_rejected_id_is_in_the_first_request(qwen: Harness, tmp_path: Path) -> None:
    logs = sorted((qwen.repo / "state" / "wal").glob("*.jsonl"))
    before = [log.read_bytes() for log in logs]
    call = Reply(tool="run_shell_command", args={"command": "echo hi"})
    with MockModel("chat", turns(call), tmp_path / "requests.jsonl") as mock:
        _run(qwen, mock, "hello")
    first = mock.requests[0].text
    assert first.count(BRIEF) == 1 and GOAL in first and NOTICE not in first
    assert [i for i in qwen.rejected_ids() if i not in first] == []
    assert len(mock.requests) == 2 and [log.read_bytes() for log in logs] == before


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"file_path": "db/schema.sql", "content": "drop table t;\n"}),
        ("edit", {"file_path": "db/schema.sql", "old_string": "id int", "new_string": "id text"}),
        ("run_shell_command", {"command": "rm db/schema.sql"}),
    ],
    ids=["write_file", "edit", "run_shell_command"],
)
def test_a_guarded_call_is_denied_and_the_model_is_told_which_rejected_approach(
    qwen: Harness, tmp_path: Path, tool: str, args: dict[str, Any]
) -> None:
    qwen.config(guard="deny")
    rejected = qwen.ops("reject")[0]["data"]
    if "file_path" in args:
        args = {**args, "file_path": str(qwen.repo / args["file_path"])}
    with MockModel("chat", turns(Reply(tool=tool, args=args)), tmp_path / "requests.jsonl") as mock:
        _run(qwen, mock, "change the schema")
    results = _tool_results(mock.requests[1])
    assert len(results) == 1 and rejected["id"] in results[0] and "Edit db/schema.sql directly" in results[0]
    assert (qwen.repo / "db" / "schema.sql").read_text() == SCHEMA


def test_after_an_automatic_compaction_the_brief_comes_back_with_the_notice(qwen: Harness, tmp_path: Path) -> None:
    """A reported prompt far over the window compacts the history before the next request: PreCompact, PostCompact
    (the summary's hash), then SessionStart compact, whose brief replaces the session's in Qwen's system prompt."""
    big = Reply(tool="run_shell_command", args={"command": "echo one"}, input_tokens=900_000)
    calls = [Reply(tool="run_shell_command", args={"command": f"echo {n}"}) for n in range(3)]
    with MockModel("chat", turns(big, *calls, tokens=900_000), tmp_path / "requests.jsonl") as mock:
        _run(qwen, mock, "go")
    assert any(_summarizing(r.body) for r in mock.requests), "Qwen never asked for a summary"
    compactions = qwen.ops("compaction")
    assert len(compactions) == 1 and compactions[0]["data"]["trigger"] == "auto"
    ends = qwen.ops("compacted")
    assert len(ends) == 1 and len(ends[0]["data"]["summary_sha256"]) == 64
    after = [r for r in _conversation(mock.requests) if "SUMMARY-QWEN-3b9e" in r.text]
    carrying = [r for r in after if NOTICE in r.text]
    assert carrying, "no request after the compaction carried the brief"
    assert all(r.text.count(BRIEF) == 1 for r in after)  # the notice's brief replaced the session's: never two
    assert GOAL in carrying[0].text


def test_install_then_uninstall_leaves_qwen_files_byte_identical(repo: Path, tmp_path: Path) -> None:
    h = make_harness("qwen", repo, tmp_path)
    rules = repo / "QWEN.md"
    original_rules = b"# Qwen\n\nKeep answers short.\n"
    rules.write_bytes(original_rules)
    settings = repo / ".qwen" / "settings.json"
    settings.parent.mkdir()
    original_settings = b'{\n  "ui": {"theme": "Default"}\n}\n'
    settings.write_bytes(original_settings)
    with MockModel("chat", turns(), tmp_path / "before.jsonl") as mock:  # Qwen rewrites its settings file once
        _run(h, mock, "hello")  # (a `$version` key): that is its own change, made before rehydrate's
    original_settings = settings.read_bytes()
    r = rehydrate("install", "qwen", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    with MockModel("chat", turns(), tmp_path / "requests.jsonl") as mock:
        _run(h, mock, "hello")
    assert BRIEF in mock.requests[0].text  # the hooks ran
    r = rehydrate("install", "qwen", "--uninstall", cwd=repo, env={"PATH": h.env["PATH"]})
    assert r.code == 0, r.err
    assert settings.read_bytes() == original_settings and rules.read_bytes() == original_rules


def test_compress_by_hand_then_resume_the_compressed_session(qwen: Harness, tmp_path: Path) -> None:
    """`/compress` in a resumed `-p` run (Qwen takes it there): recorded as a manual compaction and its end; the next
    resumed run starts with the brief (the compaction took the session's away), once."""
    first = Reply(text="first answer", input_tokens=50_000)  # under the automatic threshold; more than the summary's
    with MockModel("chat", turns(first, Reply(text="resumed"), tokens=50_000), tmp_path / "requests.jsonl") as mock:
        _run(qwen, mock, "hello")
        _run(qwen, mock, "/compress", "--continue")
        assert any(_summarizing(r.body) for r in mock.requests), "Qwen never asked for a summary"
        compactions = qwen.ops("compaction")
        assert len(compactions) == 1 and compactions[0]["data"]["trigger"] == "manual"
        assert len(qwen.ops("compacted")) == 1
        start = len(mock.requests)
        _run(qwen, mock, "go on", "--continue")
    after = _conversation(mock.requests[start:])[0].text
    assert after.count(BRIEF) == 1 and GOAL in after and "SUMMARY-QWEN-3b9e" in after
