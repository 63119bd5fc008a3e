"""The audit's loss report (audit/loss.py) on the 12 real sessions of tests/fixtures/transcripts/compactions (Claude
Code 2.1.5 to 2.1.45, Codex 0.141 and 0.142; NOTICE.md there says where each comes from): for every compaction, the
facts that stood before it are those an independent reader finds (tests/transcripts/realsessions.py, which imports
nothing of rehydrate), the harness's summary is read from the transcript by the test itself, and rehydrate's capture
carries every task, edited path and request, and the last failed commands."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.transcripts import realsessions

from rehydrate import audit
from rehydrate.audit import loss
from rehydrate.harness.compaction import capture as precompact

FILES = sorted(realsessions.FIXTURES.glob("*.jsonl.gz"))
CODEX_171 = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts" / "codex-0.171.0-autocompact.jsonl"


def _plain(path: Path, tmp: Path) -> Path:
    """The session decompressed into tmp (the audit reads plain JSONL, as the harnesses write it)."""
    out = tmp / path.name.removesuffix(".gz")
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def _one_line(text: str, most: int) -> str:
    return " ".join(text.split())[:most].rstrip()


def _summary(records: list[dict[str, Any] | None], boundary: int) -> str:
    """The harness's summary at this boundary, read here: Claude Code's isCompactSummary record after it; Codex's
    compacted message and its kept user and assistant messages (not AGENTS.md's nor the environment's)."""
    rec = records[boundary] or {}
    if rec.get("type") == "compacted":
        payload = rec["payload"]
        parts = [payload.get("message") or ""]
        for item in payload.get("replacement_history") or []:
            if item.get("type") == "message" and item.get("role") in ("user", "assistant"):
                text = "\n".join(c.get("text", "") for c in item.get("content") or [])
                if not text.lstrip().startswith(("<environment_context>", "# AGENTS.md")):
                    parts.append(text)
        return "\n".join(parts)
    following = (r for r in records[boundary + 1 :] if r is not None)
    summary = next(r for r in following if r.get("isCompactSummary") is True)
    content = summary["message"]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def _assistant_texts(records: list[dict[str, Any] | None], boundary: int, since: str | None) -> list[str]:
    """The last 3 assistant texts before the boundary and after since, newest first (a text repeated at once is one:
    Codex may write it twice)."""
    found: list[str] = []
    for rec in records[:boundary]:
        if rec is None or (since is not None and str(rec.get("timestamp", "")) <= since):
            continue
        text = ""
        if rec.get("type") == "assistant":
            blocks = rec["message"].get("content") if isinstance(rec["message"].get("content"), list) else []
            text = "\n\n".join(b["text"] for b in blocks if b.get("type") == "text" and b["text"].strip())
        payload = rec.get("payload") if rec.get("type") == "event_msg" else None
        if payload and payload.get("type") == "agent_message":
            text = payload["message"].strip()
        if payload and payload.get("type") == "item_completed" and payload["item"].get("type") == "AgentMessage":
            text = "\n".join(c.get("text", "") for c in payload["item"]["content"]).strip()
        if text and (not found or found[-1] != text):
            found.append(text)
    return found[::-1][:3]


def _tokens(text: str) -> list[str]:
    """The README's rule, written again here: runs of letters, digits and ._- (starting with a letter or digit), ._-
    cut off their ends, 2 characters or more."""
    found = (t.rstrip("._-") for t in re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*", text))
    return [t for t in found if len(t) >= 2]


def _numbers(texts: list[str]) -> list[str]:
    """The tokens that hold a digit, each once, at most 30."""
    out = dict.fromkeys(t for text in texts for t in _tokens(text) if re.search(r"[0-9]", t))
    return list(out)[:30]


def _interrupted(records: list[dict[str, Any] | None], boundary: int) -> set[str]:
    """The first lines of the Codex commands still running that the agent stopped with a Ctrl-C (write_stdin)."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    sessions: dict[str, str] = {}
    out = set()
    for rec in records[:boundary]:
        payload = (rec or {}).get("payload") or {}
        if payload.get("type") == "function_call":
            calls[payload["call_id"]] = (payload["name"], json.loads(payload["arguments"]))
        elif payload.get("type") == "function_call_output" and payload.get("call_id") in calls:
            name, args = calls[payload["call_id"]]
            output = str(payload.get("output"))
            running = re.search(r"Process running with session ID (\d+)", output)
            if name == "exec_command" and running:
                sessions[running.group(1)] = args["cmd"]
            if name == "write_stdin" and "\x03" in args.get("chars", "") and "exited with code 130" in output:
                out.add(_one_line(_first_line(sessions.get(str(args["session_id"]), "")), 200))
    return out


def _first_line(command: str) -> str:
    return next((line.strip() for line in command.split("\n") if line.strip()), "")


@pytest.mark.parametrize("source", FILES, ids=[p.name for p in FILES])
def test_each_real_compactions_facts_and_who_kept_them(tmp_path: Path, source: Path) -> None:
    path = _plain(source, tmp_path)
    data = audit.report([str(path)], capture=precompact.capture)
    (s,) = data["sessions"]
    records = realsessions.read_records(path)
    raw = path.read_bytes().split(b"\n")
    bounds = realsessions.compactions(source)
    assert [c["line"] for c in s["compactions"]] == [b + 1 for b in bounds]
    since: str | None = None
    earlier = 0  # the requests before the previous compaction
    for c, boundary in zip(s["compactions"], bounds, strict=True):
        facts = realsessions.facts(source, boundary, since, subagent_tasks=True)
        got = c["loss"]
        assert got["since"] == since and got["capture"] == {"error": None, "cut": False}
        at = len(b"\n".join(raw[:boundary])) + 1  # the boundary's first byte: the window ends there
        assert (
            got["window"]["to"] == at and (got["window"]["from"] == 0) == (since is None) and not got["window"]["cut"]
        )
        by_kind: dict[str, list[dict[str, Any]]] = {k: [f for f in got["facts"] if f["kind"] == k] for k in loss.KINDS}
        # what stood: the independent reader's facts
        assert [(f["text"], f["detail"]) for f in by_kind["task"]] == [(_one_line(t, 100), st) for t, st in facts.tasks]
        assert [f["text"] for f in by_kind["edited"]] == facts.edited
        failed = {f["text"] for f in by_kind["failed"]}
        expected = {_one_line(_first_line(f.command), 200) for f in facts.failed}
        # rehydrate's reader also counts a command the agent itself stopped with Ctrl-C (exit 130); realsessions not
        assert expected <= failed <= expected | _interrupted(records, boundary)
        requests = facts.requests[earlier:][-3:]
        assert [f["text"] for f in by_kind["request"]] == [_one_line(r, 100) for r in requests]
        said = [*reversed(requests), *_assistant_texts(records, boundary, since)]
        assert [f["text"] for f in by_kind["number"]] == _numbers(said)
        # the capture carries every task, edited path and request, and the last three failed commands
        assert all(f["carried_by_capture"] for k in ("task", "edited", "request") for f in by_kind[k])
        last = {_one_line(_first_line(f.command), 200) for f in facts.failed[-3:]}
        assert all(f["carried_by_capture"] for f in by_kind["failed"] if f["text"] in last)
        # the summary keeps a fact when its text is in the summary, white space made one space
        summary = " ".join(_summary(records, boundary).split())
        assert got["summary"] is not None
        tokens = set(_tokens(summary))
        for f in got["facts"]:
            if f["kind"] == "number":
                expected = f["text"] in tokens
            else:
                relative = _relative(f["text"], records, boundary)
                expected = f["text"] in summary or (f["kind"] == "edited" and relative in summary)
            assert f["kept_by_summary"] == expected, f
        assert got["totals"] == loss.totals([got["facts"]])
        since = records[boundary]["timestamp"]  # type: ignore[index]
        earlier = len(facts.requests)


def _relative(path: str, records: list[dict[str, Any] | None], boundary: int) -> str:
    """path relative to where the session worked at the compaction (Claude Code: the boundary's cwd; Codex: its
    session_meta's), else as it is."""
    meta = next((r["payload"]["cwd"] for r in records if r and r.get("type") == "session_meta"), None)
    root = str(meta or (records[boundary] or {}).get("cwd") or "").rstrip("/") + "/"
    return path[len(root) :] if root != "/" and path.startswith(root) else path


def test_ids_and_numbers_are_whole_tokens_holding_a_digit() -> None:
    text = "Fixed #123 and ENT-250 (v1.2.3) on localhost:8080, commit c1c35c9. 1. Done, see 2012."
    assert loss.numbers([text, "again #123 and PR 45"]) == ["123", "ENT-250", "v1.2.3", "8080", "c1c35c9", "2012", "45"]
    kept = loss._Text(["released in 2012 on port 8080."])
    assert kept.holds("number", ["8080"]) and kept.holds("number", ["2012"]) and not kept.holds("number", ["12"])
    spaced = loss._Text(["Run  the\n tests", "a.py"])
    assert spaced.holds("task", ["Run the tests"]) and not spaced.holds("task", ["tests a.py"])  # never across two


def test_the_json_shape(tmp_path: Path) -> None:
    from conftest import rehydrate

    path = _plain(realsessions.FIXTURES / "claude-code-2.1.7-todowrite-2-compactions.jsonl.gz", tmp_path)
    r = rehydrate("audit", str(path), str(CODEX_171), "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    # sessions come in path order, and the clone's folder may sort either side of the temporary one
    by_harness = {s["harness"]: s for s in data["sessions"]}
    claude, codex = by_harness["claude"], by_harness["codex"]
    counts = {"facts", "kept_by_summary", "carried_by_capture"}
    kinds = {"task", "edited", "failed", "request", "number"}
    for s in (claude, codex):
        assert {"version", "unknown", "loss"} <= set(s) and set(s["loss"]) == counts | {"by_kind", "error"}
        for c in s["compactions"]:
            assert set(c["loss"]) == {"since", "window", "summary", "capture", "facts", "totals"}
            assert set(c["loss"]["window"]) == {"from", "to", "cut"} and set(c["loss"]["summary"]) == {"chars"}
            assert set(c["loss"]["capture"]) == {"error", "cut"} and set(c["loss"]["totals"]) == counts | {"by_kind"}
            assert set(c["loss"]["totals"]["by_kind"]) == kinds
            for f in c["loss"]["facts"]:
                assert set(f) == {"kind", "text", "detail", "kept_by_summary", "carried_by_capture"}
                assert f["kind"] in kinds and isinstance(f["kept_by_summary"], bool)
    assert (claude["version"], claude["unknown"]) == ("2.1.7", {})
    first, second = claude["compactions"]
    assert first["loss"]["since"] is None and second["loss"]["since"] == first["time"]
    failed = [f["text"] for f in second["loss"]["facts"] if f["kind"] == "failed"]
    assert failed == [  # in order, each once (mise run lint failed twice)
        "mise run test 2>&1",
        "mise run lint 2>&1",
        "go test -v ./cmd/entire/cli/strategy/... -run TestCondenseSession_IncludesInitialAttribution 2>&1",
        "go build ./cmd/entire/cli/strategy/... 2>&1",
    ]
    summary = data["summary"]
    assert set(summary["loss"]) == counts | {"by_kind", "by_harness"} and set(summary["loss"]["by_harness"]) == {
        "claude",
        "codex",
    }
    for key in counts:  # the totals add up: by compaction, by session, by harness, overall
        per_session = [sum(c["loss"]["totals"][key] for c in s["compactions"]) for s in (claude, codex)]
        assert [claude["loss"][key], codex["loss"][key]] == per_session
        assert [summary["loss"]["by_harness"][h][key] for h in ("claude", "codex")] == per_session
        assert summary["loss"][key] == sum(per_session) == sum(summary["loss"]["by_kind"][k][key] for k in kinds)
    assert summary["drift"] == [
        {"harness": "claude", "version": "2.1.7", "sessions": 1, "unknown": {}},
        {"harness": "codex", "version": "0.171.0", "sessions": 1, "unknown": codex["unknown"]},
    ]
    quick = json.loads(rehydrate("audit", str(path), "--json", "--quick").out)
    assert "loss" not in quick["summary"] and "drift" not in quick["summary"]
    assert all("loss" not in c for c in quick["sessions"][0]["compactions"])
    assert quick["sessions"][0]["compactions"][0]["files_edited_again"] == first["files_edited_again"]


def test_the_text_shows_a_table_per_compaction_and_the_totals(tmp_path: Path) -> None:
    paths = [str(_plain(realsessions.FIXTURES / name, tmp_path)) for name in ("claude-code-2.1.12-todowrite.jsonl.gz",)]
    data = audit.report(paths, capture=precompact.capture)
    text = audit.render(data)
    (c,) = data["sessions"][0]["compactions"]
    by_kind = c["loss"]["totals"]["by_kind"]
    assert by_kind["task"] == {"facts": 5, "kept_by_summary": 0, "carried_by_capture": 5}
    table = [
        "    what stood before it   facts   the summary keeps   the capture carries",
        "      tasks                    5                   0                     5",
        "      edited files             1                   1                     1",
        "      last requests            2                   2                     2",
    ]
    assert "\n".join(table) + "\n" in text
    t = data["summary"]["loss"]
    assert (
        f"facts standing at a compaction: {t['facts']}; kept by the harness's summary: {t['kept_by_summary']} " in text
    )
    assert "format drift: nothing unknown in 1 version(s)" in text


def test_a_file_gone_before_its_loss_is_read_leaves_the_rest_of_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _plain(realsessions.FIXTURES / "claude-code-2.1.12-todowrite.jsonl.gz", tmp_path)

    def gone(*args: Any) -> Any:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(loss, "session", gone)
    data = audit.report([str(path)], capture=precompact.capture)
    (s,) = data["sessions"]
    assert s["loss"]["error"] == "No such file or directory" and s["compactions"][0]["loss"] is None
    assert s["compactions"][0]["tokens_before"] == 155202 and data["summary"]["loss"]["facts"] == 0
    assert "what stood before it: not read" in audit.render(data)


def test_a_codex_summary_is_its_message_and_the_messages_it_kept(tmp_path: Path) -> None:
    """Codex's summary is the compacted record's message (0.171 writes it in clear) with the user and assistant
    messages its replacement history keeps: a fact named only in the message counts as kept, one named only in
    AGENTS.md's text (which Codex sends again after any compaction) does not."""
    lines = CODEX_171.read_text().splitlines(keepends=True)
    (at,) = [n for n, line in enumerate(lines) if json.loads(line)["type"] == "compacted"]
    assert "SUMMARY-E2E-capture" in json.loads(lines[at])["payload"]["message"]
    path = tmp_path / "rollout.jsonl"

    def failed_kept() -> bool:
        (c,) = audit.report([str(path)], capture=precompact.capture)["sessions"][0]["compactions"]
        (f,) = [f for f in c["loss"]["facts"] if f["kind"] == "failed"]
        assert f["text"] == "exit 3" and f["carried_by_capture"]
        return bool(f["kept_by_summary"])

    path.write_text("".join(lines))
    assert not failed_kept()
    rec = json.loads(lines[at])
    history = rec["payload"]["replacement_history"]
    agents = history[1]["content"][0]  # AGENTS.md's text and the developer's instructions: sent again, not kept
    assert agents["text"].startswith("# AGENTS.md instructions") and history[0]["role"] == "developer"
    agents["text"] += "\nran `exit 3`: failed"
    history[0]["content"][0]["text"] += "\nran `exit 3`: failed"
    path.write_text("".join([*lines[:at], json.dumps(rec) + "\n", *lines[at + 1 :]]))
    assert not failed_kept()
    rec = json.loads(lines[at])  # the message only: 0.171 also keeps the summary as the history's last user message
    rec["payload"]["message"] = rec["payload"]["message"].replace("SUMMARY-E2E-capture", "ran `exit 3`: failed")
    lines[at] = json.dumps(rec) + "\n"
    path.write_text("".join(lines))
    assert failed_kept()


def test_transcript_text_in_the_loss_report_and_the_drift_is_shown_clean(tmp_path: Path) -> None:
    """A request, a path and a record type hold terminal escapes and markup: the text shows them without control
    characters, the page escapes them."""
    evil = "\x1b[2J<script>x</script>\u202e"
    records = [
        {"type": "user", "timestamp": "2026-01-01T00:00:01Z", "message": {"content": f"fix {evil} #4711"}},
        {
            "type": "assistant",
            "timestamp": "2026-01-01T00:00:02Z",
            "message": {
                "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": f"/p/{evil}.py"}}]
            },
        },
        {
            "type": "user",
            "timestamp": "2026-01-01T00:00:03Z",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        },
        {"type": evil, "timestamp": "2026-01-01T00:00:04Z"},
        {"type": "system", "subtype": "compact_boundary", "timestamp": "2026-01-01T00:00:05Z"},
        {"type": "user", "isCompactSummary": True, "message": {"content": "The user asked about 4711."}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    data = audit.report([str(path)], capture=precompact.capture)
    (c,) = data["sessions"][0]["compactions"]
    kinds = {(f["kind"], f["kept_by_summary"], f["carried_by_capture"]) for f in c["loss"]["facts"]}
    assert kinds == {("request", False, True), ("edited", False, True), ("number", True, True)}
    assert data["sessions"][0]["unknown"] == {f"type:{evil}": 1}
    text = audit.render(data)
    assert "\x1b" not in text and "\u202e" not in text and "<script>x</script>" in text
    pytest.importorskip("plotly")
    from rehydrate.audit import html_report

    page = html_report.render(data)
    assert "<script>x</script>" not in page and "\u202e" not in page and "&lt;script&gt;x&lt;/script&gt;" in page


def test_each_compaction_says_whether_a_rehydrate_brief_reached_the_model_after_it(tmp_path: Path) -> None:
    """A brief as Claude Code 2.1 keeps a hook's context (an attachment record), whole after the first compaction
    and cut to a preview after the second: judged from the transcript alone."""
    from conftest import rehydrate

    path = _plain(realsessions.FIXTURES / "claude-code-2.1.7-todowrite-2-compactions.jsonl.gz", tmp_path)
    first, second = (
        c["line"] for c in json.loads(rehydrate("audit", str(path), "--json").out)["sessions"][0]["compactions"]
    )
    token = "0123456789ab"
    brief = (
        f"# rehydrate brief: state/ · actor agent\n\nToken {token}: text from files ...\n\n## Next\n> x\n\n"
        f"## Ledger {token}\n- identity: ok: agent\nconfidence: recovered\nnext safe action: x\n"
    )

    def attachment(text: str) -> bytes:
        rec = {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": [text]}}
        return json.dumps(rec).encode()

    lines = path.read_bytes().split(b"\n")
    lines.insert(second, attachment(brief[: brief.index("## Ledger")]))  # after the second: a 2 KB preview's kind
    lines.insert(first, attachment(brief))
    path.write_bytes(b"\n".join(lines))
    r = rehydrate("audit", str(path), "--json")
    one, two = json.loads(r.out)["sessions"][0]["compactions"]
    assert one["brief"] == {"line": first + 1, "whole": True} and two["brief"] == {"line": second + 2, "whole": False}
    text = rehydrate("audit", str(path)).out
    assert f"the rehydrate brief after it reached the model whole (line {first + 1:,})" in text
    assert f"the rehydrate brief after it was cut: its ledger is missing (line {second + 2:,})" in text
    (tmp_path / "plain").mkdir()
    plain = _plain(realsessions.FIXTURES / "claude-code-2.1.7-todowrite-2-compactions.jsonl.gz", tmp_path / "plain")
    assert all(
        c["brief"] is None
        for c in json.loads(rehydrate("audit", str(plain), "--json").out)["sessions"][0]["compactions"]
    )
