"""transcripts.ended: whether a reviewer's session reached its end (a finished model turn, no tool call waiting) and
named a file, for each harness's format; on the real transcripts of shared/fixtures too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import REAL_TRANSCRIPTS, needs_real_transcripts

from rehydrate.transcripts.ended import ended, whole


def _jsonl(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def claude(*steps: tuple[str, object]) -> list[dict]:
    out: list[dict] = [{"type": "summary", "summary": "x"}]
    for kind, content in steps:
        out.append({"type": kind, "sessionId": "s-1", "message": {"role": kind, "content": content}})
    return out


PROMPT = ("user", "Review calc/ and write APPROVED when it is good")
WRITE = ("assistant", [{"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/p/APPROVED"}}])
RESULT = ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}])
DONE = ("assistant", [{"type": "text", "text": "Reviewed; approved."}])


@pytest.mark.parametrize(
    ("steps", "finished", "why"),
    [
        ((PROMPT, WRITE, RESULT, DONE), True, "finished answer"),
        ((PROMPT, WRITE), False, "1 tool call(s) wait for their result"),
        ((PROMPT, WRITE, RESULT), False, "a tool's result the model has not answered"),
        ((PROMPT, WRITE, RESULT, DONE, ("user", "one more thing")), False, "the model has not answered it"),
        ((PROMPT,), False, "the model has not answered it"),
    ],
)
def test_claude_code(tmp_path: Path, steps: tuple, finished: bool, why: str) -> None:
    found = ended(_jsonl(tmp_path / "t.jsonl", claude(*steps)), "/p/APPROVED", "/p")
    assert (found.harness, found.finished, found.session) == ("claude", finished, "s-1")
    assert why in found.why
    assert found.named == (WRITE in steps)


def test_claude_code_the_prompt_naming_the_file_does_not_count(tmp_path: Path) -> None:
    found = ended(_jsonl(tmp_path / "t.jsonl", claude(PROMPT, DONE)), "/p/APPROVED", "/p")
    assert found.finished and not found.named


def test_claude_code_side_chains_and_meta_records_do_not_count(tmp_path: Path) -> None:
    records = claude(PROMPT, WRITE, RESULT, DONE)
    records.append({**claude(WRITE)[1], "isSidechain": True})  # a sub-agent's call, still open: not the session's
    records.append({"type": "user", "isMeta": True, "message": {"role": "user", "content": "Caveat: ..."}})
    found = ended(_jsonl(tmp_path / "t.jsonl", records), "/p/APPROVED", "/p")
    assert found.finished and found.named


def codex(*items: dict) -> list[dict]:
    meta = {"type": "session_meta", "payload": {"id": "c-1", "cwd": "/p"}}
    return [meta, *({"type": "response_item", "payload": i} for i in items)]


C_PROMPT = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "review, write APPROVED"}]}
C_CALL = {"type": "function_call", "name": "shell", "call_id": "k1", "arguments": '{"command":["touch","APPROVED"]}'}
C_OUT = {"type": "function_call_output", "call_id": "k1", "output": "done"}
C_DONE = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Approved."}]}


@pytest.mark.parametrize(
    ("items", "finished"),
    [((C_PROMPT, C_CALL, C_OUT, C_DONE), True), ((C_PROMPT, C_CALL), False), ((C_PROMPT, C_CALL, C_OUT), False)],
)
def test_codex(tmp_path: Path, items: tuple, finished: bool) -> None:
    found = ended(_jsonl(tmp_path / "t.jsonl", codex(*items)), "/p/APPROVED", "/p")
    assert (found.harness, found.finished, found.session, found.named) == ("codex", finished, "c-1", True)


def gemini(*messages: dict) -> list[dict]:
    return [{"sessionId": "g-1", "projectHash": "h", "startTime": "t", "lastUpdated": "t", "kind": "main"}, *messages]


G_PROMPT = {"id": "m1", "type": "user", "content": "review, write APPROVED"}
G_CALL = {
    "id": "m2",
    "type": "gemini",
    "content": "",
    "toolCalls": [{"id": "x", "name": "write_file", "args": {"file_path": "/p/APPROVED"}}],
}
G_DONE = {"id": "m3", "type": "gemini", "content": "Approved."}


@pytest.mark.parametrize(
    ("messages", "finished"),
    [
        ((G_PROMPT, G_CALL, G_DONE), True),
        ((G_PROMPT, G_CALL), False),
        ((G_PROMPT, G_CALL, G_DONE, {"$rewindTo": "m3"}), False),  # the answer was rewound
        ((G_PROMPT, G_CALL, G_DONE, {**G_DONE, "content": ""}), False),  # written again, now empty
    ],
)
def test_gemini(tmp_path: Path, messages: tuple, finished: bool) -> None:
    found = ended(_jsonl(tmp_path / "t.jsonl", gemini(*messages)), "/p/APPROVED", "/p")
    assert (found.harness, found.finished, found.session, found.named) == ("gemini", finished, "g-1", True)


def test_not_a_transcript_and_not_a_file(tmp_path: Path) -> None:
    found = ended(_jsonl(tmp_path / "t.jsonl", [{"hello": 1}]), "/p/APPROVED", "/p")
    assert not found.finished and "not a Claude Code, Codex or Gemini CLI transcript" in found.why
    with pytest.raises(OSError):
        ended(str(tmp_path), "/p/APPROVED", "/p")
    with pytest.raises(OSError):
        ended(str(tmp_path / "absent.jsonl"), "/p/APPROVED", "/p")


@needs_real_transcripts()
def test_real_transcripts() -> None:
    codex_exec = ended(str(REAL_TRANSCRIPTS / "codex-0.89.0-exec.jsonl"), "/p/JOKE.md", "/p")
    assert (codex_exec.harness, codex_exec.finished, codex_exec.named) == ("codex", True, True)
    assert codex_exec.session == "019bf4b5-e7b0-75a0-8bf2-05fbf1b13c9b"
    claude_compact = ended(str(REAL_TRANSCRIPTS / "claude-code-2.1.39-manual-compact.jsonl"), "/p/NOPE.md", "/p")
    assert claude_compact.harness == "claude" and claude_compact.finished and not claude_compact.named


def test_an_api_error_is_not_an_answer_and_a_name_in_the_records_metadata_is_not_the_models(tmp_path: Path) -> None:
    records = claude(PROMPT, WRITE, RESULT, DONE)
    error = {
        "type": "assistant",
        "isApiErrorMessage": True,
        "sessionId": "s-1",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "API Error: 529 overloaded"}]},
    }
    found = ended(_jsonl(tmp_path / "t.jsonl", [*records, error]), "/p/APPROVED", "/p")
    assert not found.finished and "API error" in found.why
    records = claude(PROMPT, DONE)
    records[-1]["cwd"] = "/p/APPROVED"  # the harness's own field, not the model's words
    assert not ended(_jsonl(tmp_path / "u.jsonl", records), "/p/APPROVED", "/p").named


def test_codex_a_prompt_starting_with_a_hash_is_a_prompt(tmp_path: Path) -> None:
    again = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "# re-review please"}]}
    found = ended(_jsonl(tmp_path / "t.jsonl", codex(C_PROMPT, C_CALL, C_OUT, C_DONE, again)), "/p/APPROVED", "/p")
    assert not found.finished and "the model has not answered it" in found.why


@pytest.mark.parametrize(
    ("text", "name", "found"),
    [
        ("Verdict: APPROVED", "APPROVED", True),
        ("APPROVED.", "APPROVED", True),  # a sentence's full stop ends the name
        ("wrote APPROVED, then stopped", "APPROVED", True),
        ("echo ok > APPROVED\n", "APPROVED", True),
        ("'APPROVED'", "APPROVED", True),
        ("`./APPROVED`", "APPROVED", True),  # the same file, spelt from the project's folder
        ("Verdict: UNAPPROVED", "APPROVED", False),
        ("APPROVED_BY_NOBODY", "APPROVED", False),
        ("APPROVED-v2", "APPROVED", False),
        ("APPROVED.md", "APPROVED", False),  # another file
        (".APPROVED", "APPROVED", False),
        ("APPROVED/notes", "APPROVED", False),  # a folder of that name
        ("BROKEN", "OK", False),
        ("it is OK.", "OK", True),
        ("OKAY", "OK", False),
        ("src/a.py", "src/a.py", True),
        ("see src/a.py:12", "src/a.py", True),
        ("lib/src/a.py", "src/a.py", False),  # another path ending the same way
        ("src/a.pyc", "src/a.py", False),
        ("src/a.py.orig", "src/a.py", False),
        ("../APPROVED", "APPROVED", False),  # a file of the parent folder
        ("ÉAPPROVED", "APPROVED", False),  # a letter is a letter in any script
        ("", "OK", False),
    ],
)
def test_a_name_counts_only_whole(text: str, name: str, found: bool) -> None:
    assert whole(text, name) is found


def test_a_name_inside_a_json_string_argument_counts_and_escapes_do_not_glue_it(tmp_path: Path) -> None:
    call = {**C_CALL, "arguments": json.dumps({"command": ["sh", "-c", "printf 'x\\n' >APPROVED"]})}
    found = ended(_jsonl(tmp_path / "t.jsonl", codex(C_PROMPT, call, C_OUT, C_DONE)), "/p/APPROVED", "/p")
    assert found.named
    said = ("assistant", [{"type": "text", "text": "Checked.\nAPPROVED"}])  # \n in JSON: `\nAPPROVED`
    assert ended(_jsonl(tmp_path / "u.jsonl", claude(PROMPT, said)), "/p/APPROVED", "/p").named
    said = ("assistant", [{"type": "text", "text": "Verdict: UNAPPROVED (the tests fail)"}])
    assert not ended(_jsonl(tmp_path / "v.jsonl", claude(PROMPT, said)), "/p/APPROVED", "/p").named
