"""The canary through the real CLI: plant, questions, check, run with scripted agents (one reads the state files and
passes, one answers from a prose summary and fails, one never answers and is stopped), retire."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from tests.conftest import rehydrate

READER = """\
import sys
from pathlib import Path
assert "next action" in sys.argv[-1]  # the questions came as the last argument
state = Path("state")
nxt = next(l for l in (state / "99_next.md").read_text().splitlines() if l.startswith("next allowed action: "))
print("1.", nxt.split(": ", 1)[1])
print("2.")
for line in (state / "10_invariants.md").read_text().splitlines():
    if " rejected: " in line:
        print("  ", line.split(" rejected: ", 1)[1].split(" because: ")[0])
"""
SUMMARY = """\
print("We were in the middle of the parser work and should keep going with the binding powers.")
print("We agreed not to touch the database schema directly.")
"""
SILENT = """\
import time
time.sleep(600)
"""


@pytest.fixture
def planted(repo: Path) -> tuple[Path, str]:
    assert rehydrate("init", "--goal", "ship the parser", cwd=repo).code == 0
    assert rehydrate("reject", "Use a regex parser", "--because", "nesting", cwd=repo).code == 0
    res = rehydrate("checkpoint", "--done", "tokenizer", "--next", "binding powers for + - * /", cwd=repo)
    assert res.code == 0
    res = rehydrate("canary", "plant", "--json", cwd=repo)
    assert res.code == 0, res.err
    return repo, json.loads(res.out)["token"]


def _agent(tmp_path: Path, name: str, text: str) -> str:
    script = tmp_path / f"{name}.py"
    script.write_text(text)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def _runs(repo: Path) -> list[dict]:
    lines = (repo / "state" / "wal" / "agent.jsonl").read_text().splitlines()
    return [r["data"] for r in map(json.loads, lines) if r["op"] == "canary" and r["data"]["event"] == "run"]


def test_plant_writes_a_rejected_approach_with_a_token_and_a_record(planted: tuple[Path, str]) -> None:
    repo, token = planted
    assert token.startswith("canary-") and len(token) == 15
    inv = (repo / "state" / "10_invariants.md").read_text()
    assert f"rejected: Edit db/schema.sql without a migration file (canary {token}) because:" in inv
    questions = rehydrate("canary", "questions", cwd=repo).out
    assert "next action" in questions and "off limits" in questions and token not in questions


def test_an_agent_that_reads_the_state_files_passes(planted: tuple[Path, str], tmp_path: Path) -> None:
    repo, token = planted
    res = rehydrate("canary", "run", "--agent", _agent(tmp_path, "reader", READER), cwd=repo)
    assert res.code == 0, res.err
    assert "canary: passed" in res.out
    [run] = _runs(repo)
    assert run["passed"] is True and run["missing"] == [] and run["tokens"] == [token] and run["exit"] == 0


def test_an_agent_answering_from_a_prose_summary_fails_loudly(planted: tuple[Path, str], tmp_path: Path) -> None:
    repo, token = planted
    res = rehydrate("canary", "run", "--agent", _agent(tmp_path, "summary", SUMMARY), cwd=repo)
    assert res.code == 1
    assert "canary: FAILED" in res.err
    assert 'the next action from state/99_next.md ("binding powers for + - * /")' in res.err
    assert f"the canary token {token}" in res.err
    [run] = _runs(repo)
    assert run["passed"] is False and len(run["missing"]) == 2


def test_an_agent_that_never_answers_is_stopped_and_fails(planted: tuple[Path, str], tmp_path: Path) -> None:
    repo, _ = planted
    res = rehydrate("canary", "run", "--timeout", "2", "--agent", _agent(tmp_path, "silent", SILENT), cwd=repo)
    assert res.code == 1 and "did not finish within 2 s" in res.err
    [run] = _runs(repo)
    assert run["timed_out"] is True and run["passed"] is False


def test_check_grades_an_answer_from_a_file_or_stdin(planted: tuple[Path, str], tmp_path: Path) -> None:
    repo, token = planted
    good = "next: binding powers for + - * /\noff limits: Edit db/schema.sql without a\n  migration file "
    good += f"(canary {token})\n"
    answer = tmp_path / "answer.txt"
    answer.write_text(good)
    assert rehydrate("canary", "check", str(answer), cwd=repo).code == 0
    assert rehydrate("canary", "check", "-", cwd=repo, stdin=good).code == 0
    # the exact next action, not a word of it; the token, not only the rule
    assert rehydrate("canary", "check", cwd=repo, stdin=good.replace("+ - * /", "+ -")).code == 1
    assert rehydrate("canary", "check", cwd=repo, stdin=good.replace(token, "canary-00000000")).code == 1
    res = rehydrate("canary", "check", "--json", cwd=repo, stdin="")
    assert res.code == 1 and json.loads(res.out)["passed"] is False
    assert rehydrate("canary", "check", str(tmp_path / "absent"), cwd=repo).code == 2
    assert _runs(repo) == []  # check grades; it records nothing


def test_retire_appends_and_the_retired_canary_is_no_longer_asked(planted: tuple[Path, str]) -> None:
    repo, token = planted
    before = (repo / "state" / "10_invariants.md").read_text()
    res = rehydrate("canary", "retire", cwd=repo)
    assert res.code == 0 and token in res.out
    after = (repo / "state" / "10_invariants.md").read_text()
    assert after.startswith(before) and f"decision: Retire canary {token}:" in after  # appended, never rewritten
    res = rehydrate("canary", "check", cwd=repo, stdin="anything")
    assert res.code == 2 and "no canary is planted" in res.err
    assert rehydrate("canary", "retire", cwd=repo).code == 2
    second = json.loads(rehydrate("canary", "plant", "--rule", "Push to main on Fridays", "--json", cwd=repo).out)
    assert rehydrate("canary", "retire", token, cwd=repo).code == 2  # retired already
    ok = f"binding powers for + - * / and Push to main on Fridays (canary {second['token']})"
    assert rehydrate("canary", "check", cwd=repo, stdin=ok).code == 0
    assert rehydrate("verify", cwd=repo).code == 0


def test_run_needs_an_agent_and_a_startable_one(planted: tuple[Path, str]) -> None:
    repo, _ = planted
    assert rehydrate("canary", "run", cwd=repo).code == 2
    res = rehydrate("canary", "run", "--agent", "no-such-agent-cli -p", cwd=repo)
    assert res.code == 2 and "cannot start" in res.err
    assert rehydrate("canary", "run", "--agent", "'unbalanced", cwd=repo).code == 2
