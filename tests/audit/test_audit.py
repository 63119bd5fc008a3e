"""`rehydrate audit` on the real transcripts, and on a home folder laid out like a real one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from conftest import REAL_TRANSCRIPTS, needs_real_transcripts, rehydrate

REAL = REAL_TRANSCRIPTS
pytestmark = needs_real_transcripts()


def test_json_shape_and_the_symptoms_of_a_real_compaction() -> None:
    r = rehydrate("audit", *(str(p) for p in sorted(REAL.glob("*.jsonl"))), "--json")  # not compactions/ below
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["version"] == 1 and data["summary"]["compactions"] == 2 and data["errors"] == []
    by_name = {Path(s["path"]).name: s for s in data["sessions"]}
    assert set(by_name) == {p.name for p in REAL.glob("*.jsonl")}
    s = by_name["claude-code-2.1.39-manual-compact.jsonl"]
    assert s["harness"] == "claude" and len(s["context"]) == 217
    (c,) = s["compactions"]
    assert {k: c[k] for k in ("trigger", "tokens_before", "tokens_after", "line", "time")} == {
        "trigger": "manual",
        "tokens_before": 142431,
        "tokens_after": 45263,
        "line": 1481,
        "time": "2026-02-12T14:48:36.922Z",
    }
    assert len(c["files_edited_again"]) == 4 and c["repeated_calls"] == 4
    assert (c["errors_before"], c["errors_after"], c["turns_before_first_edit"]) == (11, 1, 12)
    assert by_name["codex-0.89.0-exec.jsonl"]["harness"] == "codex"
    assert data["summary"]["ranked"][0]["path"].endswith("2.1.39-manual-compact.jsonl")
    text = rehydrate("audit", str(REAL))
    assert "142,431 -> 45,263 tokens" in text.out and "edited again after it" in text.out


def test_all_finds_a_home_laid_out_like_a_real_one(tmp_path: Path, isolated_home: Path) -> None:
    project = isolated_home / ".claude" / "projects" / "-home-user-project"
    sub = project / "ae4a77f8" / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(REAL / "claude-code-2.1.39-manual-compact.jsonl", project / "ae4a77f8.jsonl")
    shutil.copy(REAL / "claude-code-2.0.13-manual-compact.jsonl", sub / "agent-acompact-1.jsonl")
    shutil.copy(REAL / "claude-code-2.0.13-manual-compact.jsonl", project / "agent-old.jsonl")  # older layout
    rollouts = isolated_home / ".codex" / "sessions" / "2026" / "01" / "25"
    rollouts.mkdir(parents=True)
    shutil.copy(REAL / "codex-0.89.0-exec.jsonl", rollouts / "rollout-2026-01-25T10-32-00-019bf4b5.jsonl")
    for folder in (project, rollouts):  # the copies keep their notice with them
        shutil.copy(REAL / "NOTICE.md", folder / "NOTICE.md")
    data = json.loads(rehydrate("audit", "--all", "--json").out)
    assert data["summary"] == {**data["summary"], "files": 4, "sessions": 4, "compactions": 3}
    old = os.path.getmtime(project / "agent-old.jsonl") - 10 * 86400
    os.utime(project / "agent-old.jsonl", (old, old))
    since = json.loads(rehydrate("audit", "--all", "--json", "--since", "2000-01-01").out)["summary"]["files"]
    assert since == 4
    from datetime import datetime, timezone

    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    assert json.loads(rehydrate("audit", "--all", "--json", "--since", today).out)["summary"]["files"] == 3
    assert rehydrate("audit", "--all", "--since", "yesterday").code == 2


def test_bad_files_and_many_files_give_a_report_not_a_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(10_000):
        (folder / f"s{i:05d}.jsonl").write_text('{"type":"user","message":{"content":"hi"}}\n')
    (folder / "torn.jsonl").write_bytes(b'{"type":"assistant","message":{"usage":{"input_tok')
    (folder / "binary.jsonl").write_bytes(b"\xff\xfe\x00\x01" * 1000)
    (folder / "empty.jsonl").write_bytes(b"")
    os.mkfifo(folder / "fifo.jsonl")  # would block a plain open for ever
    os.symlink(tmp_path / "gone", folder / "dangling.jsonl")  # unreadable
    r = rehydrate("audit", str(folder), str(tmp_path / "missing"), "--json", timeout=300)
    assert r.code == 0 and "Traceback" not in r.err
    data = json.loads(r.out)
    assert data["summary"]["files"] == 10_005 and data["summary"]["sessions"] == 10_003
    assert sorted((Path(e["path"]).name, e["message"]) for e in data["errors"]) == [
        ("dangling.jsonl", "No such file or directory"),
        ("fifo.jsonl", "not a regular file"),
        ("missing", "no such file or folder"),
    ]
    assert rehydrate("audit").code == 2
