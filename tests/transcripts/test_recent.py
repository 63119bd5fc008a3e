"""transcripts.recent.read_since: the transcript's tail since a checkpoint, read backwards and bounded, on the real
transcripts of shared/fixtures (read in place, their line numbers 1-based), the Gemini chat of tests/fixtures, and
small ones built here from their shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.transcripts.tails import BIG, call, jsonl_file, read, result, user

from conftest import REAL_TRANSCRIPTS, needs_real_transcripts
from rehydrate import safejson
from rehydrate.transcripts import recent as recent_mod
from rehydrate.transcripts.model import stamp
from rehydrate.transcripts.recent import read_since

CLAUDE = REAL_TRANSCRIPTS / "claude-code-2.1.39-manual-compact.jsonl"
CODEX = REAL_TRANSCRIPTS / "codex-0.89.0-exec.jsonl"
GEMINI = Path(__file__).parent.parent / "fixtures" / "transcripts" / "gemini-0.61.0-chat.jsonl"
CODEX_171 = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex-0.171.0-autocompact.jsonl"
CLAUDE_ROOT = "/home/USER/projects/spotter-worktrees/spotter-4te"
CODEX_ROOT = "/Users/philipp/dev/agentlogs/fixtures"
GEMINI_ROOT = "/home/user/project"
real = needs_real_transcripts()


def _head(path: Path, n: int, dest: Path) -> Path:
    """The first n lines of a file, as a new file."""
    with path.open("rb") as f:
        dest.write_bytes(b"".join(line for _, line in zip(range(n), f, strict=False)))
    return dest


@real
def test_claude_prompts_failures_and_compaction_at_the_plans_lines() -> None:
    r = read(CLAUDE, project=CLAUDE_ROOT)
    assert (r.harness, r.read_from, r.cut, r.foreign, r.line_base, r.bad_lines) == ("claude", 0, False, False, 0, 0)
    assert [(m.line, m.text) for m in r.user] == [
        (7, r.user[0].text),
        (1491, "continue implementation"),
    ]  # l.1482-1485: the summary, the caveat, /compact and its stdout are not prompts
    assert r.user[0].text.startswith("Work on bead spotter-4te.")
    failed = {f.line: f for f in r.failed}
    assert failed[661].command.startswith("git add -A && git commit") and failed[661].error.startswith("Pre-commit")
    assert (failed[916].exit, failed[916].error) == (1, "(eval):1: permission denied:")
    assert {1209, 1463} <= set(failed) and all(f.tool == "Bash" for f in r.failed)
    assert r.compacted_at == ["2026-02-12T14:48:36.922Z"]
    assert r.edited[:2] == ["mix.exs", "lib/spotter/telemetry/otel.ex"]  # relative to the project
    assert r.todos is None  # the user records' `todos: []` is no task list: it hides nothing and shows nothing
    assert r.tool_calls > r.changing_calls > 0


@real
def test_claude_before_the_compaction_its_last_assistant_text_is_line_1473(tmp_path: Path) -> None:
    r = read(_head(CLAUDE, 1485, tmp_path / "t.jsonl"))
    assert r.assistant is not None and r.assistant.line == 1473
    assert r.assistant.text.startswith("Perfect! I have successfully completed")
    assert [m.line for m in r.user] == [7]  # 1482-1485 are not the user's words


@real
def test_claude_a_failed_edit_is_not_an_edited_file(tmp_path: Path) -> None:
    lines = CLAUDE.read_bytes().split(b"\n")
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join([lines[6], lines[257], lines[258]]) + b"\n")  # l.7, the Edit l.258, its error l.259
    assert b"<tool_use_error>" in lines[258]
    r = read(path)
    assert (r.edited, r.tool_calls, r.changing_calls) == ([], 1, 1)


@real
def test_since_reads_back_only_to_the_checkpoint() -> None:
    data = CLAUDE.read_bytes()
    since = "2026-02-12T14:50:00.000Z"
    r = read(CLAUDE, since)
    assert not r.cut and r.line_base is None and 0 < r.read_from < r.size
    assert data[r.read_from - 1 : r.read_from] == b"\n"  # the window starts at a line
    base = data[: r.read_from].count(b"\n")
    assert [(m.line + base, m.text) for m in r.user] == [(1491, "continue implementation")]
    assert r.compacted_at == [] and r.first_ts is not None and r.first_ts > since
    assert r.lines == data[r.read_from :].count(b"\n")
    before = json.loads(data[: r.read_from - 1].rsplit(b"\n", 1)[-1])  # the line it stopped at
    assert stamp(before["timestamp"]) is not None and stamp(before["timestamp"]) <= since  # type: ignore[operator]


def test_cost_follows_the_bytes_since_the_checkpoint(tmp_path: Path) -> None:
    """Nothing before the checkpoint's record is read: a prefix of garbage there is never seen (no bad line)."""
    path = tmp_path / "t.jsonl"
    old = {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "message": {"content": "old"}, "cwd": "/p"}
    new = {"type": "user", "timestamp": "2026-01-02T00:00:00.5Z", "message": {"content": "new"}, "cwd": "/p"}
    with path.open("wb") as f:
        f.write(json.dumps({"type": "user", "sessionId": "s", "cwd": "/p"}).encode() + b"\n")
        f.write(b"\xff not json\n" * 100_000)
        f.write((json.dumps(old) + "\n" + json.dumps(new) + "\n").encode())
    r = read(path, "2026-01-01T12:00:00+00:00")
    assert [m.text for m in r.user] == ["new"] and r.bad_lines == 0 and r.lines == 1
    assert r.read_from == path.stat().st_size - len(json.dumps(new)) - 1
    cut = read(path, "2026-01-01T12:00:00Z", max_bytes=4096)  # the whole window fits
    assert not cut.cut and [m.text for m in cut.user] == ["new"]
    whole = read(path, None, max_bytes=1 << 16)
    assert whole.cut and whole.read_from >= whole.size - (1 << 16) and 0 < whole.bad_lines < 100_000


@real
def test_max_bytes_caps_the_read_and_says_so() -> None:
    r = read(CLAUDE, "2026-02-12T14:00:00Z", max_bytes=100_000)
    assert r.cut and r.size - 100_000 <= r.read_from < r.size and r.line_base is None


@real
def test_progress_lines_are_refused_by_their_bytes_before_parsing() -> None:
    parsed: list[bytes] = []

    def loads(raw: str | bytes) -> Any:
        parsed.append(raw if isinstance(raw, bytes) else raw.encode())
        return safejson.loads(raw)

    r = read_since(str(CLAUDE), None, loads=loads, max_bytes=BIG, harness="claude")
    tail = parsed[recent_mod._HEAD_RECORDS :]  # after the head's records (its harness and project)
    kinds = [json.loads(raw).get("type") for raw in tail]
    assert r.lines == 2385 and len(tail) < 700  # of 1,697 progress lines, only those holding a used type parsed
    assert "file-history-snapshot" not in kinds and 0 < kinds.count("progress") <= 25
    assert len(r.user) == 2  # and nothing used was refused


def test_claude_todowrite_tasks_and_todos_before_the_checkpoint(tmp_path: Path) -> None:
    def tool(ts: str, ident: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        block = {"type": "tool_use", "id": ident, "name": name, "input": tool_input}
        return {"type": "assistant", "timestamp": ts, "message": {"content": [block]}}

    def result(ts: str, ident: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": ident, "content": "ok"}
        return {"type": "user", "timestamp": ts, "message": {"content": [block]}, **(extra or {})}

    todos = {"todos": [{"content": "Fix the root cause", "status": "in_progress", "activeForm": "Fixing"}]}
    todos_items = [("Fix the root cause", "in_progress")]
    recs = [
        tool("2026-01-01T00:00:01Z", "t1", "TodoWrite", todos),
        result("2026-01-01T00:00:02Z", "t1"),
        {"type": "user", "timestamp": "2026-01-01T00:00:03Z", "message": {"content": "go on"}},
    ]
    path = jsonl_file(tmp_path / "a.jsonl", recs)
    r = read(path, "2026-01-01T00:00:02.500Z")
    assert r.todos is not None and (r.todos.tool, r.todos.before_checkpoint) == ("TodoWrite", True)
    assert r.todos.items == [("Fix the root cause", "in_progress")]
    assert read(path, "2026-01-01T00:00:02.500Z", todos_back=0).todos is None
    prompt = {"type": "user", "timestamp": "2026-01-01T00:00:04Z", "message": {"content": "x"}, "todos": []}
    r = read(jsonl_file(tmp_path / "p.jsonl", [*recs, prompt]), "2026-01-01T00:00:02.500Z")
    assert r.todos is not None and (r.todos.tool, r.todos.items) == ("TodoWrite", todos_items)  # [] hides nothing
    tasks = [
        tool("2026-01-01T00:00:04Z", "a", "TaskCreate", {"subject": "Lexer", "description": "d"}),
        result("2026-01-01T00:00:05Z", "a", {"toolUseResult": {"task": {"id": "1", "subject": "Lexer"}}}),
        tool("2026-01-01T00:00:06Z", "b", "TaskCreate", {"subject": "Parser", "description": "d"}),
        result("2026-01-01T00:00:07Z", "b", {"toolUseResult": {"task": {"id": "2", "subject": "Parser"}}}),
        tool("2026-01-01T00:00:08Z", "c", "TaskUpdate", {"taskId": "1", "status": "completed"}),
        result("2026-01-01T00:00:09Z", "c"),
    ]
    r = read(jsonl_file(tmp_path / "b.jsonl", recs + tasks), "2026-01-01T00:00:02.500Z")
    assert r.todos is not None and r.todos.tool == "task tools" and not r.todos.before_checkpoint
    assert r.todos.items == [("Lexer", "completed"), ("Parser", "pending")]
    # tasks created before the checkpoint, only updated after it: the look-back folds their creation in
    r = read(jsonl_file(tmp_path / "c.jsonl", recs + tasks), "2026-01-01T00:00:07.500Z")
    assert r.todos is not None and r.todos.items == [("Lexer", "completed"), ("Parser", "pending")]
    assert not r.todos.before_checkpoint  # its last change came after the checkpoint
    # without the look-back, a task is known by its id and what the update says
    r = read(jsonl_file(tmp_path / "c.jsonl", recs + tasks), "2026-01-01T00:00:07.500Z", todos_back=0)
    assert r.todos is not None and r.todos.items == [("task #1", "completed")]


def test_claude_user_messages_exclude_what_the_harness_and_our_hooks_wrote(tmp_path: Path) -> None:
    def user(text: Any, **extra: Any) -> dict[str, Any]:
        return {"type": "user", "timestamp": "2026-01-01T00:00:01Z", "message": {"content": text}, **extra}

    recs = [
        user("<system-reminder>## Ledger [tok] confidence: recovered</system-reminder>"),
        user("Caveat: The messages below were generated by the user"),
        user("<command-name>/compact</command-name>"),
        user("<local-command-stdout>\u001b[2mCompacted\u001b[22m</local-command-stdout>"),
        user("meta", isMeta=True),
        user("summary", isCompactSummary=True),
        user([{"type": "text", "text": "in blocks"}]),
        user("plain"),
    ]
    r = read(jsonl_file(tmp_path / "t.jsonl", recs))
    assert [(m.line, m.text) for m in r.user] == [(7, "in blocks"), (8, "plain")]


@real
def test_codex_prompt_patch_and_agent_message_at_the_plans_lines() -> None:
    r = read(CODEX, project=CODEX_ROOT)
    assert (r.harness, r.foreign, r.failed, r.todos) == ("codex", False, [], None)
    assert [m.line for m in r.user] == [6]  # l.3-5 (AGENTS.md, environment context) are not prompts
    assert r.edited == ["JOKE.md"]  # the apply_patch of l.24, its exit_code 0 at l.26; the shell write l.11 is not
    assert r.assistant is not None and r.assistant.line == 36 and r.assistant.text.startswith("Created `JOKE.md`")
    assert (r.tool_calls, r.changing_calls) == (4, 4)


def test_codex_0_171_prompt_and_answer_come_from_item_completed() -> None:
    """Codex 0.171 records no user_message: the prompt is a UserMessage item_completed (l.10), beside a role-user
    message (l.9) that AGENTS.md's text shares (l.4); the answer after the compaction an AgentMessage (l.32)."""
    r = read(CODEX_171, project=GEMINI_ROOT)
    assert (r.harness, r.foreign, r.todos) == ("codex", False, None)
    assert [(m.line, m.text) for m in r.user] == [(10, "now do the binding powers in calc/parser.py PROMPT-5e1b")]
    assert r.edited == ["calc/parser.py"]
    assert [(f.command, f.exit, f.line) for f in r.failed] == [("exit 3", 3, 19)]
    assert r.assistant is not None and (r.assistant.line, r.assistant.text) == (32, "The parser tests fail.")
    assert len(r.compacted_at) == 1


EXEC_OUT = "Chunk ID: 1\nWall time: 1\nProcess exited with code 2\nOutput:\nE  boom\n"


def test_codex_plan_failures_and_compaction(tmp_path: Path) -> None:
    def item(ts: str, payload: dict[str, Any], kind: str = "response_item") -> dict[str, Any]:
        return {"timestamp": ts, "type": kind, "payload": payload}

    meta = item("2026-01-01T00:00:00.000000Z", {"id": "x", "cwd": "/p/q"}, "session_meta")
    plan = {"plan": [{"step": "Parse", "status": "in_progress"}], "explanation": "x"}
    recs = [
        meta,
        item("2026-01-01T00:00:01Z", {"type": "function_call", "name": "update_plan", "arguments": json.dumps(plan)}),
        item(
            "2026-01-01T00:00:02Z",
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "a",
                "arguments": json.dumps({"cmd": "pytest -q"}),
            },
        ),
        item(
            "2026-01-01T00:00:03Z",
            {
                "type": "function_call_output",
                "call_id": "a",
                "output": EXEC_OUT,
            },
        ),
        item(
            "2026-01-01T00:00:04Z",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "b",
                "arguments": json.dumps({"command": ["bash", "-lc", "make"]}),
            },
        ),
        item(
            "2026-01-01T00:00:05Z",
            {
                "type": "function_call_output",
                "call_id": "b",
                "output": json.dumps({"output": "no rule\n", "metadata": {"exit_code": 1}}),
            },
        ),
        item(
            "2026-01-01T00:00:06Z",
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "c",
                "arguments": json.dumps({"cmd": "pytest -q"}),
            },
        ),
        item(
            "2026-01-01T00:00:07Z",
            {"type": "function_call_output", "call_id": "c", "output": "Process exited with code 0\nOutput:\n"},
        ),
        {"timestamp": "2026-01-01T00:00:08Z", "type": "compacted", "payload": {"message": ""}},
        item("2026-01-01T00:00:08Z", {"type": "context_compacted"}, "event_msg"),
    ]
    r = read(jsonl_file(tmp_path / "t.jsonl", recs), "2026-01-01T00:00:01.5Z", project="/p")
    assert r.todos is not None and (r.todos.tool, r.todos.before_checkpoint, r.todos.items) == (
        "update_plan",
        True,
        [("Parse", "in_progress")],
    )
    assert [(f.tool, f.command, f.exit, f.error, f.later_ok) for f in r.failed] == [
        ("exec_command", "pytest -q", 2, "E boom", True),
        ("shell", "make", 1, "no rule", False),
    ]
    assert r.compacted_at == ["2026-01-01T00:00:08.000Z"]


def test_gemini_chat_last_wins_rewinds_and_hook_context() -> None:
    r = read(GEMINI, "2026-03-02T10:00:04Z", project=GEMINI_ROOT)
    assert (r.harness, r.foreign) == ("gemini", False)
    assert [m.text for m in r.user] == ["now do binding powers"]
    assert r.assistant is not None and r.assistant.text.startswith("The parser is written")  # g3 was rewound
    assert r.edited == ["calc/parser.py"]  # the failed replace is not an edit; the checkpoint run is before since
    assert [(f.command, f.exit, f.error) for f in r.failed] == [("pytest -q", 1, "2 failed, 31 passed")]
    assert r.todos is not None and r.todos.items == [
        ("Write the parser", "completed"),
        ("Binding powers", "in_progress"),
    ]
    assert (r.tool_calls, r.changing_calls) == (4, 3)
    whole = read(GEMINI)
    assert [m.text for m in whole.user] == ["write the calculator's parser", "now do binding powers"]
    assert whole.todos is not None and whole.todos.line == 17  # g4 as appended last


def test_gemini_a_rewind_drops_that_message_and_every_later_one(tmp_path: Path) -> None:
    later = [
        {"id": "u9", "timestamp": "2026-03-02T10:00:30.000Z", "type": "user", "content": "try another way"},
        {"id": "g9", "timestamp": "2026-03-02T10:00:31.000Z", "type": "gemini", "content": "another way"},
        {"$rewindTo": "u9"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text(GEMINI.read_text() + "".join(json.dumps(r) + "\n" for r in later))
    r = read(path, "2026-03-02T10:00:04Z")
    assert [m.text for m in r.user] == ["now do binding powers"]
    assert r.assistant is not None and r.assistant.text.startswith("The parser is written")
    gone = read(path, "2026-03-02T10:00:04Z", max_bytes=len(json.dumps(later[-1])) + 200)  # not in the window: all
    assert gone.cut and gone.user == [] and gone.assistant is None


@real
@pytest.mark.parametrize(("path", "root"), [(CLAUDE, CLAUDE_ROOT), (CODEX, CODEX_ROOT), (GEMINI, GEMINI_ROOT)])
def test_a_transcript_of_another_project_is_foreign_and_gives_nothing(path: Path, root: str, tmp_path: Path) -> None:
    assert not read(path, project=root).foreign
    r = read(path, project=str(tmp_path))
    assert r.foreign and (r.user, r.assistant, r.todos, r.edited, r.failed, r.tool_calls) == ([], None, None, [], [], 0)


def test_bad_lines_huge_lines_and_what_is_not_a_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    user = {"type": "user", "sessionId": "s", "timestamp": "2026-01-01T00:00:01Z", "message": {"content": "hi"}}
    path.write_bytes(
        json.dumps(user).encode() + b"\n[1]\nnot json\n" + b"[" * 100_000 + b"\n" + b"x" * 300_000 + b'\n{"type":"us'
    )
    r = read(path)
    assert [m.text for m in r.user] == ["hi"] and r.bad_lines == 5 and r.lines == 6
    with pytest.raises(OSError):
        read(tmp_path / "missing.jsonl")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        read(tmp_path / "fifo")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read(empty).lines == 0


@real
def test_it_runs_on_the_hook_path_without_json_re_or_anything_outside_the_stdlib() -> None:
    src = Path(recent_mod.__file__).parents[2]
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(src)!r})\n"
        "from rehydrate import safejson\n"
        "from rehydrate.transcripts.recent import read_since\n"
        "for path, root in zip(sys.argv[1::2], sys.argv[2::2]):\n"
        "    r = read_since(path, '2026-01-01T00:00:00Z', loads=safejson.loads, max_bytes=4 << 20, project=root)\n"
        "    assert r.user and not r.foreign, path\n"
        "print(sorted(sys.modules))\n"
    )
    argv = [str(CLAUDE), CLAUDE_ROOT, str(CODEX), CODEX_ROOT, str(GEMINI), GEMINI_ROOT]
    out = subprocess.run([sys.executable, "-S", "-c", code, *argv], capture_output=True, text=True, check=True)
    modules = set(eval(out.stdout))
    assert not modules & {"json", "json.decoder", "json.encoder", "re", "enum", "hashlib", "_hashlib", "typing"}
    ours = {m for m in modules if m.startswith("rehydrate")}
    assert ours <= {
        "rehydrate",
        "rehydrate.safejson",
        "rehydrate.transcripts",
        "rehydrate.transcripts.recent",
        "rehydrate.transcripts.claude",
        "rehydrate.transcripts.codex",
        "rehydrate.transcripts.gemini",
        "rehydrate.transcripts.jsonl",
        "rehydrate.transcripts.model",
        "rehydrate.transcripts.formats",
        "rehydrate.transcripts.failures",
        "rehydrate.transcripts.claude.tail",
        "rehydrate.transcripts.claude.tasks",
    }
    stdlib = set(sys.stdlib_module_names)
    assert all(m.split(".")[0] in stdlib or m in ours or m == "__main__" for m in modules)


# -- what the harnesses write today: task tools, own line numbers, drift ---------------------------------------------


def test_lines_are_the_file_s_own_when_numbered_and_a_late_read_says_none_otherwise(tmp_path: Path) -> None:
    early = [user(f"2026-01-01T00:00:0{i}Z", f"old {i}") for i in range(1, 6)]
    late = [user("2026-01-01T00:01:00Z", "new one")]
    path = jsonl_file(tmp_path / "a.jsonl", early + late)
    r = read(path, "2026-01-01T00:00:30Z", numbered=True)
    assert r.read_from > 0 and r.line_base == 5 and [m.line for m in r.user] == [6]
    r = read(path, "2026-01-01T00:00:30Z")
    assert r.line_base is None and [m.line for m in r.user] == [1]  # counted from the read's start: shown as none
    old = recent_mod.COUNT_MAX
    try:
        recent_mod.COUNT_MAX = 10  # the lines before the read cost too much to count: none rather than a wrong one
        assert read(path, "2026-01-01T00:00:30Z", numbered=True).line_base is None
    finally:
        recent_mod.COUNT_MAX = old


def test_a_task_list_snapshot_and_a_subagent_s_updates_are_folded(tmp_path: Path) -> None:
    listed = {
        "tasks": [
            {"id": "2", "subject": "Parser", "status": "pending"},
            {"id": "1", "subject": "Lexer", "status": "completed"},
        ]
    }
    sub = {
        "type": "progress",
        "timestamp": "2026-01-01T00:00:09Z",
        "data": {
            "type": "agent_progress",
            "message": call("2026-01-01T00:00:09Z", "s1", "TaskUpdate", {"taskId": "2", "status": "in_progress"}),
        },
    }
    sub_result = {
        "type": "progress",
        "timestamp": "2026-01-01T00:00:10Z",
        "data": {"type": "agent_progress", "message": result("2026-01-01T00:00:10Z", "s1", "Updated task #2")},
    }
    recs = [
        call("2026-01-01T00:00:01Z", "l1", "TaskList", {}),
        result("2026-01-01T00:00:02Z", "l1", "#2 [pending] Parser\n#1 [completed] Lexer", toolUseResult=listed),
        user("2026-01-01T00:00:03Z", "go on"),
        sub,
        sub_result,
    ]
    path = jsonl_file(tmp_path / "a.jsonl", recs)
    r = read(path, "2026-01-01T00:00:05Z", numbered=True)  # the snapshot lies before the checkpoint
    assert r.todos is not None and r.todos.tool == "task tools" and r.todos.line == 5
    assert r.todos.items == [("Lexer", "completed"), ("Parser", "in_progress")]  # in order of creation


def test_what_the_reader_does_not_know_is_counted_with_the_harness_version(tmp_path: Path) -> None:
    recs = [
        {"type": "user", "version": "9.9.9", "timestamp": "2026-01-01T00:00:01Z", "message": {"content": "hi"}},
        {"type": "brand-new-record", "timestamp": "2026-01-01T00:00:02Z"},
        {"type": "system", "subtype": "new_marker", "timestamp": "2026-01-01T00:00:03Z"},
        call("2026-01-01T00:00:04Z", "x", "TaskDelete", {"taskId": "1"}),
        call("2026-01-01T00:00:05Z", "y", "mcp__linear__get_issue", {}),
        {"type": "progress", "timestamp": "2026-01-01T00:00:06Z", "data": {"type": "hook_progress"}},
    ]
    r = read(jsonl_file(tmp_path / "a.jsonl", recs))
    assert r.version == "9.9.9"
    assert r.unknown == {"type:brand-new-record": 1, "subtype:system:new_marker": 1, "tool:TaskDelete": 1}
    codex = read(CODEX_171)
    assert codex.version == "0.171.0" and "type:world_state" in codex.unknown


@pytest.mark.parametrize("budget", [10, 70_000, 200_000, 1 << 30])
def test_the_marked_blocks_read_back_gives_the_lines_the_plain_read_back_gives(tmp_path: Path, budget: int) -> None:
    """The task list's look-back splits only the blocks that hold a mark: with a mark every block holds, it gives
    every line the plain backward read gives, at the same offsets, a line longer than a block and one cut by the
    budget included; with a mark no block holds, nothing."""
    sizes = [5, 70_000, 1, 300, 65_536, 65_535, 2, 140_000, 7]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(bytes([97 + i % 26]) * n + b"\n" for i, n in enumerate(sizes)))
    end = path.stat().st_size
    with path.open("rb") as f:
        plain = [(o, line) for o, line in recent_mod._backwards(f, end, budget) if line.strip() and o < end]
        marked = list(recent_mod._marked(f, end, budget, (b"",)))
        assert marked == plain and (budget < 200_000 or len(marked) >= 3)
        assert list(recent_mod._marked(f, end, budget, (b"never there",))) == []
