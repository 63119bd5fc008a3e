"""The reading commands (cli/read.py): the problems' JSON shape, where the state is found, the budget's flag."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import rehydrate


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    data = json.loads(result.out)
    assert set(data) >= {"version", "command", "ok"} and data["version"] == 1
    return data


def test_verify_problem_shape(repo: Path) -> None:
    rehydrate("init", "--goal", "g")
    with open(repo / "state" / "wal" / "agent.jsonl", "ab") as f:
        f.write(b'{"torn')
    r = rehydrate("verify", "--json")
    assert r.code == 1
    d = _json(r)
    assert d["ok"] is False
    (p,) = d["problems"]
    assert set(p) == {"code", "file", "line", "message", "repairable"}
    assert (p["code"], p["file"], p["line"], p["repairable"]) == ("torn-tail", "state/wal/agent.jsonl", 2, True)
    r = rehydrate("verify", "--repair")
    assert r.code == 0 and "cut a torn last line" in r.out and "kept in state/wal/agent.jsonl.broken" in r.out
    assert (repo / "state" / "wal" / "agent.jsonl.broken").read_bytes() == b'{"torn'


def test_state_is_found_upward_and_by_env(repo: Path, tmp_path: Path) -> None:
    rehydrate("init", "--goal", "g")
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert rehydrate("status", cwd=sub).code == 0
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert rehydrate("status", cwd=other).code == 3
    assert rehydrate("status", cwd=other, env={"REHYDRATE_DIR": str(repo / "state")}).code == 0
    assert rehydrate("status", "--dir", str(repo / "state"), cwd=other).code == 0


def test_a_budget_too_small_names_the_flag_in_text_and_json(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    r = rehydrate("resume", "--budget", "10")
    assert r.code == 2 and r.err.startswith("rehydrate: --budget"), r.err
    r = rehydrate("resume", "--budget", "10", "--json")
    d = json.loads(r.out)
    assert r.code == 2 and d["command"] == "resume" and d["error"]["message"].startswith("--budget"), d
