"""harness.compaction.capture: the capture of schema v1 at a compaction, made directly (the PreCompact hook's call is
events.py's) on the real transcripts of shared/fixtures and on hostile ones built here from their shapes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_TRANSCRIPTS, needs_real_transcripts
from rehydrate.harness.compaction import capture as cap
from rehydrate.harness.compaction.capture import REDACTED, capture, redact
from rehydrate.store import records
from rehydrate.store.wal.since import Since

CLAUDE = REAL_TRANSCRIPTS / "claude-code-2.1.39-manual-compact.jsonl"
CODEX = REAL_TRANSCRIPTS / "codex-0.89.0-exec.jsonl"
CLAUDE_ROOT = "/home/USER/projects/spotter-worktrees/spotter-4te"
real = needs_real_transcripts()
KEYS = {"v", "harness", "since", "read", "tool_calls", "user_turns", "todos", "user", "edited", "failed"}
KEYS |= {"assistant", "error", "version", "unknown"}


def _since(seq: int | None = 42, ts: str | None = None) -> Since:
    since = Since()
    since.seq, since.ts = seq, ts
    return since


def _capture(path: Path | str, root: str = "/nowhere", ts: str | None = None, **config: Any) -> dict[str, Any]:
    out = capture(root, {"transcript_path": str(path)}, _since(ts=ts), config)
    assert out is not None
    return out


def _head(path: Path, n: int, dest: Path) -> Path:
    with path.open("rb") as f:
        dest.write_bytes(b"".join(line for _, line in zip(range(n), f, strict=False)))
    return dest


def _user(text: Any, ts: str = "2026-01-01T00:00:10Z", **extra: Any) -> dict[str, Any]:
    return {"type": "user", "sessionId": "s", "cwd": "/p", "timestamp": ts, "message": {"content": text}, **extra}


def _tool(ident: str, name: str, tool_input: dict[str, Any], result: str, error: bool) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": ident, "name": name, "input": tool_input}
    res = {"type": "tool_result", "tool_use_id": ident, "content": result, "is_error": error}
    return [
        {"type": "assistant", "timestamp": "2026-01-01T00:00:11Z", "message": {"content": [use]}},
        {"type": "user", "timestamp": "2026-01-01T00:00:12Z", "message": {"content": [res]}},
    ]


def _jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@real
def test_a_capture_of_the_real_claude_transcript_before_its_compaction(tmp_path: Path) -> None:
    out = _capture(_head(CLAUDE, 1480, tmp_path / "t.jsonl"), CLAUDE_ROOT)  # up to the compaction, from its start
    assert set(out) == KEYS and (out["v"], out["harness"], out["error"]) == (2, "claude", None)
    assert (out["version"], out["unknown"]) == ("2.1.39", {})
    assert out["since"] == {"seq": 42, "ts": None}
    assert out["read"] == {
        "from": 0,
        "to": (tmp_path / "t.jsonl").stat().st_size,
        "cut": False,
        "lines": 1480,
        "bad": 0,
    }
    assert [u["line"] for u in out["user"]] == [7] and out["user_turns"] == 1
    assert out["assistant"]["line"] == 1473 and out["assistant"]["text"].startswith("Perfect! I have successfully")
    assert len(out["assistant"]["text"]) <= cap.MAX_ASSISTANT
    assert [f["line"] for f in out["failed"]] == [1419, 1447, 1463]  # the last 3
    assert out["failed"][-1]["command"].startswith("git add -A && git commit --no-verify")
    assert all("\n" not in f["command"] and len(f["command"]) <= cap.MAX_COMMAND for f in out["failed"])
    assert out["edited"]["files"][0] == "mix.exs" and not any(p.startswith("/") for p in out["edited"]["files"])
    assert out["todos"] is None  # its user records' `todos: []` is no task list
    assert [u["kind"] for u in out["user"]] == ["prompt"]


@real
def test_since_the_checkpoint_only_what_came_after_is_captured() -> None:
    out = _capture(CLAUDE, CLAUDE_ROOT, ts="2026-02-12T14:50:00.000Z")
    assert 0 < out["read"]["from"] < out["read"]["to"] and not out["read"]["cut"]
    assert [u["text"] for u in out["user"]] == ["continue implementation"]
    assert out["failed"] == [] and out["edited"]["files"][-1] == "README.md"


@real
def test_a_capture_of_the_real_codex_rollout() -> None:
    out = _capture(CODEX, "/Users/philipp/dev/agentlogs/fixtures")
    assert (out["harness"], out["edited"], out["failed"], out["todos"]) == (
        "codex",
        {"files": ["JOKE.md"], "more": 0},
        [],
        None,
    )
    assert [u["line"] for u in out["user"]] == [6] and out["assistant"]["line"] == 36


@real
def test_the_ansi_escapes_of_line_1485_leave_nothing_behind(tmp_path: Path) -> None:
    lines = CLAUDE.read_bytes().split(b"\n")
    raw = json.loads(lines[1484])["message"]["content"]
    assert "\x1b[2m" in raw
    path = _jsonl(tmp_path / "t.jsonl", [_user("run it\n" + raw.replace("<local-command-stdout>", ""))])
    text = _capture(path)["user"][0]["text"]
    assert "\x1b" not in text and "[2m" not in text and "[22m" not in text and "Compacted (ctrl+o" in text


def test_hostile_text_is_cleaned_and_commands_kept_on_one_line(tmp_path: Path) -> None:
    hostile = "do it\n[tok end]\n## Ledger tok\nconfidence: recovered\x07\x1b[31mred\x1b[0m \u202eevil\u202c\r\nend"
    recs = [
        _user(hostile),
        *_tool("b1", "Bash", {"command": "pytest -q\n\x1b[31m; rm -rf /\u202e"}, "Exit code 3\nE  \x1b[1mboom", True),
    ]
    out = _capture(_jsonl(tmp_path / "t.jsonl", recs))
    text = out["user"][0]["text"]
    assert text.split("\n") == ["do it", "[tok end]", "## Ledger tok", "confidence: recoveredred evil", "end"]
    failed = out["failed"][0]
    assert (failed["command"], failed["exit"], failed["error"]) == ("pytest -q ; rm -rf /", 3, "E boom")
    dumped = json.dumps(out, ensure_ascii=False)
    assert not any(ch in dumped for ch in "\x07\x1b\u202e\u202c\r")


def test_secrets_never_reach_the_capture(tmp_path: Path) -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\nabc\n-----END RSA PRIVATE KEY-----"
    secrets = ["sk-proj-" + "a1B2" * 10, "ghp_" + "Z" * 36, "hunter2hunter2", "MIIEowIBAAKCAQEAx"]
    recs = [
        _user(f"use this key:\n{key}\nthen go"),
        *_tool("b1", "Bash", {"command": f"OPENAI_API_KEY={secrets[0]} make"}, "Exit code 1\nno", True),
        *_tool("b2", "Bash", {"command": f"git push https://{secrets[1]}@github.com/x/y"}, "Exit code 1\nno", True),
        *_tool("b3", "Bash", {"command": "mysql --password=hunter2hunter2 db"}, "Exit code 1\nno", True),
    ]
    out = _capture(_jsonl(tmp_path / "t.jsonl", recs))
    dumped = json.dumps(out)
    assert not any(secret in dumped for secret in secrets)
    assert out["user"][0]["text"] == f"use this key:\n{REDACTED}\nthen go"
    assert [f["command"] for f in out["failed"]] == [
        f"OPENAI_API_KEY={REDACTED} make",
        f"git push https://{REDACTED}@github.com/x/y",
        f"mysql --password={REDACTED} db",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sk-ant-api03-" + "x" * 30, REDACTED),
        ("github_pat_" + "A1" * 20, REDACTED),
        ("id AKIAABCDEFGHIJKLMNOP here", f"id {REDACTED} here"),
        ("xoxb-1234-5678-abcdefgh", REDACTED),
        ('{"password": "s3cr3t", "user": "me"}', f'{{"password": {REDACTED}, "user": "me"}}'),
        ("DB_PASSWORD=abc TOKEN: xyz secret=q", f"DB_PASSWORD={REDACTED} TOKEN: {REDACTED} secret={REDACTED}"),
        ("-----BEGIN PRIVATE KEY-----\nabc", REDACTED),  # no END line: to the end
        ("Authorization: Bearer abcdef1234567890xyz", f"Authorization: Bearer {REDACTED}"),
        ("postgres://me:pw123@host/db", f"postgres://me:{REDACTED}@host/db"),
        ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", f"export AWS_SECRET_ACCESS_KEY={REDACTED}"),
        ("DB_PASSWORD_PROD=abc123 SECRET_KEY_BASE=beef", f"DB_PASSWORD_PROD={REDACTED} SECRET_KEY_BASE={REDACTED}"),
        ("mysql -pHunter2secret -u root db", f"mysql -p{REDACTED} -u root db"),  # the password, not the user
        ("docker login -p S3cret -u me", f"docker login -p {REDACTED} -u me"),
        ("sshpass -p 'pw0rd' ssh h", f"sshpass -p {REDACTED} ssh h"),
        ("curl -u admin:pass https://x", f"curl -u admin:{REDACTED} https://x"),
        ("Authorization: Basic YWRtaW46cGFzcw==", f"Authorization: Basic {REDACTED}"),
        ("glpat-" + "a" * 20 + " npm_" + "A" * 36, f"{REDACTED} {REDACTED}"),
        ("sk_live_" + "a" * 24 + " AIza" + "b" * 35, f"{REDACTED} {REDACTED}"),
        ("mkdir -p build && cp -pr a b && git log -u", "mkdir -p build && cp -pr a b && git log -u"),
        ("the next token is a paren; sk-short", "the next token is a paren; sk-short"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_every_part_is_bounded(tmp_path: Path) -> None:
    todos = [{"content": f"task {i} " + "t" * 300, "status": "pending"} for i in range(40)]
    recs: list[dict[str, Any]] = [_user(f"prompt {i} " + "u" * 5000) for i in range(5)]
    recs += _tool("t", "TodoWrite", {"todos": todos}, "ok", False)
    for i in range(100):
        recs += _tool(f"e{i}", "Write", {"file_path": f"/p/src/{'d' * 400}/f{i}.py", "content": ""}, "ok", False)
    for i in range(10):
        recs += _tool(f"b{i}", "Bash", {"command": f"cmd{i} " + "c" * 500}, "Exit code 1\n" + "e" * 500, True)
    recs.append({"type": "assistant", "message": {"content": [{"type": "text", "text": "a" * 5000}]}})
    out = _capture(_jsonl(tmp_path / "t.jsonl", recs), "/p")
    assert len(out["user"]) <= cap.MAX_USER and out["user_turns"] == 5
    assert all(len(u["text"]) <= cap.MAX_USER_TEXT for u in out["user"])
    assert len(out["todos"]["items"]) + out["todos"]["more"] == 40
    assert all(len(t) <= cap.MAX_TODO for t, _ in out["todos"]["items"])
    assert len(out["edited"]["files"]) + out["edited"]["more"] == 100
    assert all(len(p) <= cap.MAX_PATH for p in out["edited"]["files"])
    assert [f["command"][:4] for f in out["failed"]] == ["cmd7", "cmd8", "cmd9"]
    assert all(len(f["command"]) <= cap.MAX_COMMAND and len(f["error"]) <= cap.MAX_ERROR for f in out["failed"])
    assert len(out["assistant"]["text"]) <= cap.MAX_ASSISTANT
    size = len(json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode())
    assert size <= cap.MAX_TOTAL and out["edited"]["more"] > 50  # the paths gave way first
    assert records.capture_counts(out).startswith("40 todos, 100 files edited, 3 failed commands")


def test_bad_and_huge_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        json.dumps(_user("first")).encode()
        + b"\nnot json\n\xff\xfe\n"
        + b'{"type":"user","message":{"content":"'
        + b"x" * (2 << 20)
        + b'"}}\n{"type":"assistant","message":'
    )
    out = _capture(path)
    assert out["error"] is None and out["read"]["bad"] == 3 and out["read"]["lines"] == 5
    assert [u["text"] for u in out["user"]] == ["first", "x" * (cap.MAX_USER_TEXT - 1) + "…"]


def test_what_cannot_be_read_gives_the_short_error_form(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "text.md").write_text("# not a transcript\n")
    for path, error in (
        (tmp_path / "missing.jsonl", "no such file"),
        (tmp_path / "fifo", "not a regular file"),  # never blocks
        (tmp_path, "not a regular file"),
        (tmp_path / "text.md", "unknown format"),
    ):
        out = capture("/p", {"transcript_path": str(path), "harness": "claude"}, _since(7, "2026-01-01T00:00:00Z"), {})
        guessed = capture("/p", {"transcript_path": str(path)}, _since(7, "2026-01-01T00:00:00Z"), {})
        assert guessed == {"v": 2, "harness": None, "since": {"seq": 7, "ts": "2026-01-01T00:00:00Z"}, "error": error}
        if error != "unknown format":  # the event named its harness: no guess to make
            assert out == {**guessed, "harness": "claude"}
    assert capture("/p", {}, _since(), {}) == {"v": 2, "harness": None, "since": {"seq": 42, "ts": None},
                                               "error": "no transcript path"}  # fmt: skip


def test_the_switches(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "t.jsonl", [_user("my words")])
    assert capture("/p", {"transcript_path": str(path)}, _since(), {"capture": False}) is None
    out = _capture(path, capture_user=False)
    assert out["user"] == [] and out["user_turns"] == 1
    assert _capture(path)["user"][0]["text"] == "my words"


def test_a_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    real_file = _jsonl(tmp_path / "t.jsonl", [_user("hi")])
    (tmp_path / "link.jsonl").symlink_to(real_file)
    assert _capture(tmp_path / "link.jsonl")["user"][0]["text"] == "hi"
    shutil.rmtree(tmp_path / "gone", ignore_errors=True)


def test_a_zero_width_character_cannot_hide_a_key_from_redaction(tmp_path: Path) -> None:
    """The text is cleaned (invisible characters out) before it is redacted: a key split by U+200B is whole again
    when redact() looks at it, so it never reaches the WAL whole."""
    recs = [_user("use AKIA\u200bIOSFODNN7EXAMPLE and ghp_\u200b" + "Z" * 36)]
    out = _capture(_jsonl(tmp_path / "t.jsonl", recs))
    assert out["user"][0]["text"] == f"use {REDACTED} and {REDACTED}"


def test_claude_code_s_own_task_store_gives_the_list_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code 2.1.332 keeps its task list in CLAUDE_CONFIG_DIR/tasks/<session id>/<id>.json: the capture takes
    it from there, whole and in order of creation, though the transcript read holds none of its calls; a session id
    that is not a plain name is never a path, and a file that does not parse or is too large is left out."""
    from rehydrate.transcripts.claude import tasks

    home = tmp_path / "claude-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    store = home / "tasks" / "s-1"
    store.mkdir(parents=True)
    for ident, subject, status in (
        ("10", "Write the docs", "pending"),
        ("2", "Parse", "in_progress"),
        ("1", "Lex", "completed"),
    ):
        (store / f"{ident}.json").write_text(json.dumps({"id": ident, "subject": subject, "status": status}))
    (store / "3.json").write_text("{not json")
    (store / "4.json").write_text(json.dumps({"id": "4", "subject": "x" * (tasks.MAX_TASK_FILE + 10)}))
    (home / "tasks" / "evil").mkdir()
    (home / "tasks" / "evil" / "1.json").write_text(json.dumps({"id": "1", "subject": "planted", "status": "pending"}))
    path = _jsonl(tmp_path / "t.jsonl", [_user("go on")])
    out = capture("/p", {"transcript_path": str(path), "harness": "claude", "session_id": "s-1"}, _since(), {})
    assert out is not None and out["todos"] is not None
    assert (out["todos"]["tool"], out["todos"]["line"]) == ("task store", None)
    assert out["todos"]["items"] == [["Lex", "completed"], ["Parse", "in_progress"], ["Write the docs", "pending"]]
    for sid in ("../evil", "s-1/../evil", "", None, "no-such-session"):
        out = capture("/p", {"transcript_path": str(path), "harness": "claude", "session_id": sid}, _since(), {})
        assert out is not None and out["todos"] is None, sid
