"""The canary through the real CLI: plant, questions, check, run with scripted agents (one reads the state files and
passes, one answers from a prose summary and fails, one never answers and is stopped), retire."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import rehydrate

from rehydrate.canary import MAX_ANSWER

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


# an agent that leaves a process of its own session behind (setsid), holding its stdout, and records the pid for the
# test's cleanup: killing the agent's process group does not reach it, and it never closes the pipe
LEAVES_A_CHILD = """\
import subprocess, sys
left = subprocess.Popen(["sleep", "1000"], start_new_session=True)
with open({pids!r}, "a") as f:
    f.write(f"{{left.pid}}\\n")
"""


@pytest.fixture
def leftovers(tmp_path: Path) -> Iterator[Path]:
    """A file the agents write their leftover processes' pids to; each is killed when the test ends."""
    pids = tmp_path / "leftover.pids"
    yield pids
    for pid in pids.read_text().split() if pids.exists() else []:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("answers", [True, False], ids=["answers-and-exits", "never-answers"])
def test_a_process_the_agent_leaves_holding_its_stdout_does_not_hold_the_run(
    planted: tuple[Path, str], tmp_path: Path, leftovers: Path, answers: bool
) -> None:
    repo, _ = planted
    text = LEAVES_A_CHILD.format(pids=str(leftovers)) + (READER if answers else SILENT)
    # the helper's own timeout bounds the run: before the fix it waited for the leftover's 1000 s
    res = rehydrate(
        "canary", "run", "--timeout", "5", "--agent", _agent(tmp_path, "leaves", text), cwd=repo, timeout=30
    )
    assert len(leftovers.read_text().split()) == 1  # the leftover was started, and is still running
    [run] = _runs(repo)
    if answers:  # graded on what it said before it exited, not on a timeout
        assert res.code == 0, res.err
        assert run["passed"] is True and run["timed_out"] is False and run["exit"] == 0 and run["duration"] < 5
    else:
        assert res.code == 1 and "did not finish within 5 s" in res.err
        assert run["timed_out"] is True and run["passed"] is False


# the peak resident memory of the command after `--`, in bytes, as its parent sees it (RUSAGE_CHILDREN: the largest of
# the processes waited for, so the agent's own is counted too; it writes from a small buffer)
PEAK = """\
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(peak if sys.platform == "darwin" else peak * 1024)
"""
FLOOD = """\
import os
block = b"x" * (1 << 20)
for _ in range(200):
    os.write(1, block)
"""


def test_an_agent_flooding_its_stdout_is_read_in_bounded_memory(planted: tuple[Path, str], tmp_path: Path) -> None:
    """200 MB on stdout: the answer kept is MAX_ANSWER bytes, the rest read and dropped as it comes (before, the
    whole output was held: a 615 MB peak for 300 MB)."""
    repo, _ = planted
    agent = _agent(tmp_path, "flood", FLOOD)
    argv = [sys.executable, "-c", PEAK, sys.executable, "-m", "rehydrate", "canary", "run", "--agent", agent]
    out = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=120, check=True).stdout
    assert int(out) < 100 << 20, f"peak {int(out) >> 20} MB"
    [run] = _runs(repo)
    assert run["exit"] == 0 and run["timed_out"] is False and run["passed"] is False
    assert run["answer_bytes"] == 200 << 20 and run["answer_sha256"] == hashlib.sha256(b"x" * MAX_ANSWER).hexdigest()


def test_with_stdin_the_questions_come_on_stdin_and_an_agent_that_ignores_them_is_still_graded(
    planted: tuple[Path, str], tmp_path: Path
) -> None:
    repo, _ = planted
    reads = READER.replace('assert "next action" in sys.argv[-1]', 'assert "next action" in sys.stdin.read()')
    res = rehydrate("canary", "run", "--stdin", "--agent", _agent(tmp_path, "stdin", reads), cwd=repo)
    assert res.code == 0, res.err
    ignores = 'import os\nos.close(0)\nprint("nothing to say")\n'  # closes stdin unread: the write may fail
    res = rehydrate("canary", "run", "--stdin", "--agent", _agent(tmp_path, "ignores", ignores), cwd=repo)
    assert res.code == 1 and "canary: FAILED" in res.err
    assert [(r["passed"], r["exit"]) for r in _runs(repo)] == [(True, 0), (False, 0)]
