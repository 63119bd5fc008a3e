"""`rehydrate cursor` (cli/cursor.py): a pipeline's cursor checked, shown and repaired against its JSONL output, with
the JSON contract and exit codes of the CLI; and a pipeline registered in the state. Real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import rehydrate


def test_cli_contract_and_custom_key(tmp_path: Path) -> None:
    (tmp_path / "out.jsonl").write_text("".join(json.dumps({"n": i, "x": 1}) + "\n" for i in range(4)))
    (tmp_path / "p.json").write_text('{"cursor": 7}')
    out, prog = str(tmp_path / "out.jsonl"), str(tmp_path / "p.json")
    r = rehydrate("cursor", "verify", out, prog, "--key", "n", "--json")
    data = json.loads(r.out)
    assert r.code == 1 and {"ok", "cursor", "last_index", "problems"} <= set(data)
    assert (data["ok"], data["cursor"], data["last_index"]) == (False, 7, 3)
    assert data["problems"] == [{"code": "cursor-ahead", "message": data["problems"][0]["message"], "line": None}]
    assert rehydrate("cursor", "status", out, prog, "--key", "n").code == 0
    assert rehydrate("cursor", "repair", out, prog, "--key", "n").code == 0
    assert json.loads(rehydrate("cursor", "verify", out, prog, "--key", "n", "--json").out)["ok"] is True
    assert rehydrate("cursor", "verify", out).code == 2


def test_register_names_the_pipeline_and_takes_three_arguments(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    (repo / "out.jsonl").write_text("")
    r = rehydrate("cursor", "register", "nightly", "out.jsonl", "progress.json")
    assert r.code == 0 and r.out == "registered nightly: out.jsonl with progress.json\n", r
    r = rehydrate("cursor", "register", "nightly", "out.jsonl")
    assert r.code == 2 and "register takes NAME OUTPUT PROGRESS" in r.err, r
    assert "nightly" in rehydrate("resume").out  # shown in the brief
