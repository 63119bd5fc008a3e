"""The command line as a user meets it: real subprocesses, exit codes, JSON envelopes pinned as a contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, rehydrate
from rehydrate.cli import COMMANDS, build_parser

ENVELOPE = {"version", "command", "ok"}


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    data = json.loads(result.out)
    assert set(data) >= ENVELOPE and data["version"] == 1
    return data


def test_full_loop_with_json_contracts(repo: Path) -> None:
    r = rehydrate("init", "--goal", "Ship it", "--done-when", "tests pass", "--json")
    assert r.code == 0, r.err
    d = _json(r)
    assert d["command"] == "init" and d["ok"] and d["actor"] == "agent" and d["record"]["op"] == "init"

    d = _json(rehydrate("invariant", "Use a WAL", "--because", "crashes", "--json"))
    assert d["id"].startswith("D-") and d["line"].startswith(f"- {d['id']} ") and d["seq"] == 2
    d = _json(rehydrate("reject", "Use eval", "--because", "unsafe", "--guard", "*.py", "--json"))
    assert d["id"].startswith("R-") and d["line"].endswith("guard: *.py")

    (repo / "app.py").write_text("changed\n")
    d = _json(rehydrate("checkpoint", "--done", "lexer", "--next", "parser", "--json"))
    assert d["seq"] == 4 and d["git"]["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert d["git"]["branch"] == "main" and d["git"]["dirty"] == ["app.py"]
    assert "state/99_next.md" not in d["git"]["dirty"]

    d = _json(rehydrate("handoff", "--json", stdin="Next: the parser.\n"))
    assert d["chars"] == len("Next: the parser.")
    assert (repo / "state" / "20_handoff.md").read_text() == "Next: the parser.\n"

    d = _json(rehydrate("status", "--json"))
    assert d["ok"] and d["goal"] == "Ship it" and d["next"]["next"] == "parser" and d["next"]["done"] == "lexer"

    r = rehydrate("resume", "--json")
    d = _json(r)
    assert r.code == 0 and d["confidence"] == "recovered" and d["ok"]
    assert {"brief", "findings", "omitted", "seq", "problems", "repaired"} <= set(d)
    assert d["brief"].index("## Goal") < d["brief"].index("Rejected approaches") < d["brief"].index("## Handoff")
    assert d["brief"].index("## Handoff") < d["brief"].index("## Next") < d["brief"].index("## Ledger")

    r = rehydrate("verify", "--json")
    d = _json(r)
    assert r.code == 0 and d == {**d, "ok": True, "problems": [], "repaired": []} and d["records"] == 6

    d = _json(rehydrate("rotate", "--json"))
    assert d["archive"].startswith("archive/agent-1-7-") and d["records"] == 7
    assert (repo / "state" / d["archive"]).is_file()
    assert _json(rehydrate("verify", "--json"))["ok"]
    # after rotate, the goal and every recorded line are still bound
    (repo / "state" / "10_invariants.md").write_text(
        (repo / "state" / "10_invariants.md").read_text().replace("Use a WAL", "Use no WAL")
    )
    r = rehydrate("verify", "--json")
    assert r.code == 1 and [p["code"] for p in _json(r)["problems"]] == ["latch-changed"]


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


def test_usage_errors_exit_2(repo: Path) -> None:
    assert rehydrate().code == 2
    assert rehydrate("nonsense").code == 2
    r = rehydrate("checkpoint", "--done", "x")
    assert r.code == 2 and "--next" in r.err and "Traceback" not in r.err
    rehydrate("init", "--goal", "g")
    assert rehydrate("invariant", "   ", "--because", "b").code == 2
    assert rehydrate("invariant", "x", "--because", "").code == 2
    assert rehydrate("resume", "--budget", "10").code == 2
    assert rehydrate("init", "--goal", "g", "--rules", "emacs").code == 2


def test_missing_state_exits_3_with_a_hint(repo: Path) -> None:
    for argv in (["resume"], ["checkpoint", "--done", "a", "--next", "b"], ["verify"], ["status"]):
        r = rehydrate(*argv)
        assert r.code == 3, argv
        assert "rehydrate init" in r.err and "Traceback" not in r.err


def test_goal_is_write_once(repo: Path) -> None:
    assert rehydrate("init", "--goal", "first").code == 0
    before = (repo / "state" / "00_goal.md").read_bytes()
    r = rehydrate("init", "--goal", "second")
    assert r.code == 3 and "write-once" in r.err
    assert (repo / "state" / "00_goal.md").read_bytes() == before


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


def test_other_actor_is_told_whose_folder_it_is(repo: Path) -> None:
    rehydrate("init", "--goal", "g")
    r = rehydrate("checkpoint", "--done", "a", "--next", "b", "--actor", "bob")
    assert r.code == 3 and "'agent'" in r.err


def test_checkpoint_outside_git_says_so(tmp_path: Path) -> None:
    assert rehydrate("init", "--goal", "g", cwd=tmp_path).code == 0
    r = rehydrate("checkpoint", "--done", "a", "--next", "b", "--json", cwd=tmp_path)
    assert r.code == 0 and json.loads(r.out)["git"]["repo"] is False


def test_every_command_has_help_and_is_documented() -> None:
    readme = (Path(__file__).parent.parent.parent / "README.md").read_text()
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)  # type: ignore[arg-type]
    for name in COMMANDS:
        r = rehydrate(name, "--help")
        assert r.code == 0 and r.out.startswith(f"usage: rehydrate {name}"), name
        assert f"### {name}" in readme or ("### invariant and reject" in readme and name in ("invariant", "reject"))
        assert f"rehydrate {name}" in readme, name


def test_exit_code_table_matches_readme() -> None:
    from rehydrate.errors import ExitCode

    readme = (Path(__file__).parent.parent.parent / "README.md").read_text()
    for code in ExitCode.ALL:
        assert f"| {int(code)} |" in readme


def test_internal_bug_writes_a_crash_log(repo: Path, isolated_home: Path) -> None:
    import subprocess
    import sys

    rehydrate("init", "--goal", "g")
    code = (
        "import rehydrate.store.state as s, sys\n"
        "def boom(*a, **k): raise ZeroDivisionError('planted bug')\n"
        "s.State.checkpoint = boom\n"
        "from rehydrate.cli import main\n"
        "sys.exit(main(['checkpoint', '--done', 'a', '--next', 'b']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=False)
    assert r.returncode == 4 and "crash.log" in r.stderr and "Traceback" not in r.stderr
    log = isolated_home / "xdg_cache_home" / "rehydrate" / "crash.log"
    assert "planted bug" in log.read_text() and "Traceback" in log.read_text()


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help(argv: list[str]) -> None:
    r = rehydrate(*argv)
    assert r.code == 0 and "rehydrate" in r.out
