"""The brief a model request carries (harness/compaction/request.py, Gemini CLI's BeforeModel): after a compression,
after its summary, with the compaction recorded once; after `/clear`, in each request of the new conversation; never
in a request without either. Real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.harness.geminicalls import SESSION, carried, gemini, noted, ops

from conftest import hook_answer, hook_event, says_nothing
from rehydrate.store.state import State


def test_a_compressed_request_carries_the_brief_after_its_summary(repo: Path, state: State) -> None:
    sent = json.loads(hook_event(repo, "gemini", "BeforeModel-compressed"))["llm_request"]["messages"]
    assert gemini(repo, "PreCompress-manual")[:2] == (0, None)
    code, out, err = gemini(repo, "BeforeModel-compressed")
    assert code == 0, err
    messages = carried(out)
    assert len(messages) == 1 and messages[0]["role"] == "user"
    summary, brief = messages[0]["content"].split("\n\n", 1)
    assert summary == sent[0]["content"]  # the environment's context and the summary, as they came
    assert brief.startswith("A context compaction just happened") and brief.count("# rehydrate brief") == 1
    compactions = [r for r in map(json.loads, Path(state.wal_path).read_text().splitlines()) if r["op"] == "compaction"]
    assert len(compactions) == 1
    data = compactions[0]["data"]
    assert data["phase"] == "request" and data["trigger"] == "manual" and data["session_id"] == SESSION
    assert data["summary_chars"] == len(sent[0]["content"].split("</session_context>")[1])
    assert data["capture"]["harness"] == "gemini"
    given = noted(repo)[-1]
    assert given["op"] == "resume" and given["data"]["via"] == "request" and "brief" not in given["data"]
    # the next request of the same compressed history: the brief again (Gemini keeps nothing BeforeModel adds), once
    for _ in range(3):
        again = carried(gemini(repo, "BeforeModel-compressed")[1])
        assert again[0]["content"].count("# rehydrate brief") == 1
    assert ops(state).count("compaction") == 1  # one compression, one record
    assert state.verify().ok


def test_each_compression_and_each_session_is_its_own_compaction(repo: Path, state: State) -> None:
    event = json.loads(hook_event(repo, "gemini", "BeforeModel-compressed"))
    assert gemini(repo, "BeforeModel-compressed")[1] is not None
    event["llm_request"]["messages"][0]["content"] += "\n<!-- compressed again -->"
    assert hook_answer("gemini", json.dumps(event).encode(), repo)[1] is not None
    event["session_id"] = "another-session"
    assert hook_answer("gemini", json.dumps(event).encode(), repo)[1] is not None
    assert hook_answer("gemini", json.dumps(event).encode(), repo)[1] is not None
    assert ops(state).count("compaction") == 3


@pytest.mark.parametrize(
    "messages",
    [
        [
            {"role": "user", "content": "env"},
            {"role": "user", "content": "a prompt"},
            {"role": "model", "content": "Sure."},
            {"role": "model", "content": "Got it. Thanks for the additional context!"},
        ],
        [{"role": "user", "content": ""}, {"role": "model", "content": "Got it. Thanks for the additional context!"}],
        [{"role": "user", "content": "env"}, {"role": "user", "content": "x"}, {"role": "model", "content": "Got it."}],
        [],
    ],
    ids=["not-the-first-reply", "empty-summary", "another-reply", "no-messages"],
)
def test_a_request_without_a_compression_gets_nothing(repo: Path, state: State, messages: list[object]) -> None:
    event = hook_event(repo, "gemini", "BeforeModel", llm_request={"model": "m", "messages": messages})
    assert says_nothing("gemini", event, repo)


def test_a_conversation_whose_history_holds_no_brief_gets_it_in_each_request(repo: Path, state: State) -> None:
    """After `/clear`, Gemini CLI drops SessionStart's context: the new conversation's requests hold no brief."""
    event = json.loads(hook_event(repo, "gemini", "BeforeModel"))
    sent = event["llm_request"]["messages"]
    sent[0]["content"] = sent[0]["content"].split("<hook_context>")[0] + "Continue."  # no brief at the start
    before = Path(state.wal_path).read_bytes()
    for _ in range(2):
        messages = carried(hook_answer("gemini", json.dumps(event).encode(), repo)[1])
        assert len(messages) == 1 and messages[0]["content"].startswith(sent[0]["content"] + "\n\n# rehydrate brief")
        assert "A context compaction just happened" not in messages[0]["content"]  # no compaction: no notice
    assert Path(state.wal_path).read_bytes() == before  # nothing in the committed log
    assert [r["data"].get("via") for r in noted(repo)[-2:]] == ["request", "request"]
    # a request that is not the main conversation's (no environment's context first: a subagent's) gets nothing
    sent[0]["content"] = "You are a codebase investigator."
    assert says_nothing("gemini", json.dumps(event).encode(), repo)
