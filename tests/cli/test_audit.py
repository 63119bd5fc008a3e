"""`rehydrate audit` (cli/audit.py): what it reads, its usage errors and its progress line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import on_a_terminal, rehydrate


def test_audit_of_a_path_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    r = rehydrate("audit", str(missing))
    assert r.code == 2 and f"no such file or folder: {missing}" in r.err and "Traceback" not in r.err
    r = rehydrate("audit", str(missing), "--json")
    assert r.code == 2 and json.loads(r.out)["command"] == "audit"
    r = rehydrate("audit", str(missing), str(tmp_path / "other"))
    assert r.code == 2 and f"{tmp_path / 'other'}" in r.err
    (tmp_path / "t.jsonl").write_text("")
    assert rehydrate("audit", str(tmp_path / "t.jsonl")).code == 0
    r = rehydrate("audit", str(tmp_path / "t.jsonl"), str(missing), "--json")  # one exists: a report naming the other
    assert r.code == 0 and [e["path"] for e in json.loads(r.out)["errors"]] == [str(missing)]


def test_a_since_that_is_not_a_date_names_the_flag(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text("")
    r = rehydrate("audit", str(tmp_path), "--since", "yesterday")
    assert r.code == 2 and r.err.startswith("rehydrate: --since: 'yesterday' is not a date"), r.err
    assert "YYYY-MM-DD" in r.err


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_the_progress_line_is_drawn_on_a_terminal_and_cleared(tmp_path: Path) -> None:
    """The audit reports progress through a callback; the CLI draws it on stderr when stderr is a terminal."""
    for i in range(25):
        (tmp_path / f"s{i:02d}\x1b[2J.jsonl").write_text('{"type":"user","message":{"content":"hi"}}\n')
    code = "import sys; from rehydrate.cli import main; sys.exit(main(sys.argv[1:]))"
    proc, err = on_a_terminal([sys.executable, "-c", code, "audit", str(tmp_path), "--json"], stream="stderr")
    assert proc.returncode == 0 and json.loads(proc.stdout)["summary"]["files"] == 25
    assert b"\r[1/25] s00[2J.jsonl" in err and b"\r[25/25] s24[2J.jsonl" in err  # each file, shown clean
    assert b"\x1b" not in err and err.endswith(b"\r" + b" " * 72 + b"\r")  # and cleared at the end
