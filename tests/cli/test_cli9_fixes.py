"""Issue 9 item 16: the small things a new user meets on the command line, each as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, rehydrate
from rehydrate.store import wal

ROOT = Path(__file__).parent.parent.parent


def _without(module: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a process where `module` cannot be imported (an optional extra that is not installed)."""
    code = (
        f"import sys; sys.modules[{module!r}] = None\nfrom rehydrate.cli import main\nsys.exit(main({list(argv)!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False)


def test_a_usage_error_says_rehydrate_once_and_names_the_command(repo: Path) -> None:
    r = rehydrate("checkpoint", "--done", "x")
    assert r.code == 2
    assert r.err.startswith("rehydrate: checkpoint: the following arguments are required: --next"), r.err
    assert "rehydrate: rehydrate" not in r.err
    r = rehydrate("nonsense")
    assert r.code == 2 and r.err.startswith("rehydrate: argument COMMAND: invalid choice"), r.err


def test_json_errors_name_the_command_wherever_it_stands(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    r = rehydrate("--json", "status")
    assert r.code == 2
    d = json.loads(r.out)
    assert d["command"] == "status" and d["ok"] is False and d["error"]["exit_code"] == 2
    assert "rehydrate status --json" in r.err  # the hint says where the option goes
    d = json.loads(rehydrate("--json").out)
    assert d["command"] is None  # JSON null, not the text "None"
    d = json.loads(rehydrate("status", "--json", "--actor", "..").out)
    assert d["command"] == "status" and d["error"]["exit_code"] == 2


def test_a_missing_optional_extra_is_a_usage_error_with_a_hint_that_works(repo: Path, tmp_path: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    r = _without("mcp", "mcp", cwd=repo)
    assert r.returncode == 2, r.stderr
    assert "the MCP server needs the official mcp SDK" in r.stderr and "Traceback" not in r.stderr
    assert "-m pip install 'mcp>=2.3,<3'" in r.stderr and "rehydrate[" not in r.stderr
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    r = _without("plotly", "audit", str(transcript), "--html", str(tmp_path / "a.html"), cwd=repo)
    assert r.returncode == 2 and "Plotly" in r.stderr and "-m pip install 'plotly>=6,<8'" in r.stderr, r.stderr
    assert not (tmp_path / "a.html").exists()


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


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color", [None, "1"])
def test_the_demo_heading_is_bold_on_a_terminal_unless_no_color(no_color: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    if no_color:
        env["NO_COLOR"] = no_color
    primary, secondary = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "from rehydrate.cli import demo; demo._step(1, 'A task starts')"],
            stdout=secondary,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
            check=False,
        )
        os.close(secondary)
        secondary = -1
        out = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # EIO: the terminal's other end is closed and everything was read
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    assert proc.returncode == 0, proc.stderr
    assert b"1. A task starts" in out
    assert (b"\x1b[" in out) is (no_color is None), out


def test_kept_hand_edits_are_git_ignored(repo: Path) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    assert rehydrate("checkpoint", "--done", "a", "--next", "b").code == 0
    nxt = repo / "state" / "99_next.md"
    nxt.write_text(nxt.read_text() + "my own note\n")
    assert rehydrate("checkpoint", "--done", "c", "--next", "d").code == 0
    kept = sorted(p.name for p in (repo / "state").iterdir() if ".edited" in p.name)
    assert kept == ["99_next.md.edited"]
    nxt.write_text(nxt.read_text() + "again\n")
    assert rehydrate("checkpoint", "--done", "e", "--next", "f").code == 0
    git(repo, "add", "-A")
    staged = git(repo, "diff", "--cached", "--name-only").split()
    assert "state/99_next.md" in staged and not [p for p in staged if ".edited" in p], staged
    assert (repo / "state" / "99_next.md.edited.2").is_file()


def test_an_entry_id_hashes_the_actor_the_time_and_the_text(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert rehydrate("init", "--goal", "g").code == 0
    first = json.loads(rehydrate("invariant", "Use a WAL", "--because", "crashes", "--json").out)
    second = json.loads(rehydrate("invariant", "Use a WAL", "--because", "crashes", "--json").out)
    assert first["id"] != second["id"]  # the same decision twice: two ids, as the README says
    from rehydrate.store.state import State

    at = "2026-11-29T22:04:26.123Z"
    monkeypatch.setattr(wal, "now", lambda: at)
    rec = State.open(repo / "state").invariant("Use a WAL", because="crashes").record
    assert rec["data"]["id"] == "D-" + wal.sha256(f"agent\0{at}\0Use a WAL".encode())[:6]


def test_the_licence_and_the_package_metadata() -> None:
    tomllib = pytest.importorskip("tomllib")
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n") and "Copyright (c) 2026 rehydrate developers" in licence
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in licence
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert {"name": "rehydrate developers"} in project["authors"]
    assert project["readme"] == "README.md" and project["requires-python"] and project["keywords"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # the SPDX expression says it
    assert "Development Status :: 3 - Alpha" in project["classifiers"]
