"""The guard's check by effect (harness/guard/effect.py): after a tool call, and when the agent stops, a guarded file
that changed, whatever changed it, is named to the model at once with the rejected approach, written down in this
worktree's guard log, and put back where the user asked for it. Real files, real hook subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import hook_answer, rehydrate
from rehydrate.harness.guard import effect
from rehydrate.harness.guard.snapshot import MAGIC, SNAPSHOT
from rehydrate.store.local import place as local
from rehydrate.store.state import State


@pytest.fixture
def guarded(repo: Path) -> State:
    st, _ = State.init(repo / "state", "A calculator")
    st.reject("Hand-write the evaluator", because="it is generated from the grammar", guard="calc/ev*.py")
    st.reject("Evaluate input with eval()", because="it runs arbitrary code", guard="calc/o*.py", contains="eval(")
    (repo / "calc").mkdir()
    (repo / "calc" / "eval.py").write_text("generated\n")
    (repo / "calc" / "ops.py").write_text("x = 1\n")
    return st


def _event(repo: Path, name: str = "PostToolUse", tool: str = "Bash", **fields: object) -> dict[str, object]:
    return {"session_id": "s1", "cwd": str(repo), "hook_event_name": name, "tool_name": tool,
            "tool_input": {"command": "python3 make.py"}, **fields}  # fmt: skip


def _after(repo: Path, harness: str = "claude", **fields: object) -> dict[str, object] | None:
    code, answer, err = hook_answer(harness, _event(repo, **fields), repo)
    assert code == 0, err
    return answer


def _run(repo: Path, code: str) -> None:
    """A program that writes files by itself: nothing before the call could see what it writes."""
    subprocess.run([sys.executable, "-c", code], cwd=repo, check=True)


def _log(st: State) -> list[dict[str, object]]:
    path = Path(local.local_dir(st.root)) / effect.FOLDER / effect.LOG
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_a_guarded_file_changed_by_a_tool_is_named_at_once(repo: Path, guarded: State) -> None:
    assert _after(repo) is None  # the guard's first look: its snapshot
    _run(repo, "open('calc/eval.py', 'w').write('by hand')")
    answer = _after(repo)
    assert answer is not None
    context = answer["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"  # type: ignore[index]
    assert "calc/eval.py was changed" in context and "Hand-write the evaluator" in context
    assert "this Bash call" in context and answer["systemMessage"] == context
    assert (repo / "calc" / "eval.py").read_text() == "by hand"  # not restored unless asked for
    [logged] = _log(guarded)
    assert logged["path"] == str(repo / "calc" / "eval.py") and logged["how"] == "changed"
    assert logged["restored"] is False and "Hand-write the evaluator" in str(logged["rejected"])
    assert _after(repo) is None  # said once: the next call compares with what it saw then


def test_a_restore_puts_the_file_back_when_configured(repo: Path, guarded: State) -> None:
    Path(guarded.path("config.json")).write_text('{"guard_restore": true}')
    assert _after(repo) is None
    _run(repo, "import os; open('calc/eval.py', 'w').write('by hand'); os.remove('calc/ops.py')")
    answer = json.dumps(_after(repo))
    assert "calc/eval.py was changed. It was restored as it was before." in answer
    assert "ops.py" not in answer  # deleted, but its watch looks for a text, and a deletion writes none
    assert (repo / "calc" / "eval.py").read_text() == "generated\n"
    _run(repo, "import os; os.remove('calc/eval.py')")
    answer = _after(repo)
    assert answer is not None and "calc/eval.py was deleted. It was restored" in json.dumps(answer)
    assert (repo / "calc" / "eval.py").read_text() == "generated\n"


def test_a_watched_text_counts_only_when_written(repo: Path, guarded: State) -> None:
    assert _after(repo) is None
    _run(repo, "open('calc/ops.py', 'w').write('x = 2\\n')")
    assert _after(repo) is None  # calc/ops.py changed, without eval(
    _run(repo, "open('calc/ops.py', 'w').write('x = eval(a)\\n')")
    answer = _after(repo)
    assert answer is not None and "Evaluate input with eval()" in json.dumps(answer)


def test_a_change_is_caught_at_stop_and_keeps_the_agent_going_once(repo: Path, guarded: State) -> None:
    assert _after(repo) is None
    _run(repo, "open('calc/eval.py', 'a').write('more')")
    code, answer, _ = hook_answer("claude", _event(repo, "Stop", stop_hook_active=False), repo)
    assert code == 0 and answer is not None and answer["decision"] == "block"
    assert "Hand-write the evaluator" in answer["reason"] and "this turn" in answer["reason"]
    code, answer, _ = hook_answer("claude", _event(repo, "Stop", stop_hook_active=True), repo)
    assert answer is None


def test_other_harnesses_are_told_in_their_own_shape(repo: Path, guarded: State) -> None:
    gemini = {"hook_event_name": "AfterTool", "tool_name": "run_shell_command"}
    assert _after(repo, "gemini", **gemini) is None
    _run(repo, "open('calc/eval.py', 'w').write('a')")
    answer = _after(repo, "gemini", **gemini)
    assert answer is not None and "Hand-write the evaluator" in answer["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    _run(repo, "open('calc/eval.py', 'w').write('b')")
    answer = _after(repo, "codex")
    assert answer is not None and "Hand-write the evaluator" in answer["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]


def test_nothing_guarded_costs_one_small_read(repo: Path) -> None:
    State.init(repo / "state", "A calculator")
    assert _after(repo) is None
    snapshot = Path(local.local_dir(str(repo / "state"))) / effect.FOLDER / SNAPSHOT
    head = snapshot.read_bytes().split(b"\n", 1)[0].decode()
    assert head.startswith(MAGIC) and head.endswith(" 0")  # nothing guarded: the next call stops here


def test_install_writes_the_after_tool_hooks(repo: Path) -> None:
    State.init(repo / "state", "A calculator")
    assert rehydrate("install", "claude", cwd=repo).code == 0
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    matcher = settings["hooks"]["PostToolUse"][0]["matcher"]
    assert {"Bash", "Write", "Edit", "TodoWrite"} <= set(matcher.split("|"))


def test_a_change_seen_while_the_agent_is_kept_going_is_said_later(repo: Path, guarded: State) -> None:
    assert _after(repo) is None
    _run(repo, "open('calc/eval.py', 'a').write('more')")
    code, answer, _ = hook_answer("claude", _event(repo, "Stop", stop_hook_active=True), repo)
    assert code == 0 and answer is None  # a second block could keep the agent going for ever
    answer = _after(repo)
    assert answer is not None and "Hand-write the evaluator" in json.dumps(answer)


def test_a_file_a_glob_names_once_it_exists_is_watched_after_the_next_stop(repo: Path, guarded: State) -> None:
    assert _after(repo) is None
    (repo / "calc" / "evolve.py").write_text("new\n")
    code, answer, _ = hook_answer("claude", _event(repo, "Stop"), repo)
    assert code == 0 and answer is None  # created under a glob: not in the snapshot yet; Stop takes it in
    _run(repo, "open('calc/evolve.py', 'w').write('changed')")
    answer = _after(repo)
    assert answer is not None and "calc/evolve.py was changed" in json.dumps(answer)


def test_a_guard_never_names_a_file_outside_the_project(repo: Path, tmp_path: Path) -> None:
    """A guard arrives by git pull: `../x` or `/x` is the project's, never a file outside it read or restored."""
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    st, _ = State.init(repo / "state", "A calculator")
    Path(st.path("config.json")).write_text('{"guard_restore": true}')
    st.reject("Touch it", because="planted", guard=f"../{outside.name}")
    st.reject("Touch it too", because="planted", guard=str(outside))
    assert _after(repo) is None
    outside.write_text("changed\n")
    assert _after(repo) is None and outside.read_text() == "changed\n"


def test_a_guarded_path_that_did_not_exist_is_named_when_created(repo: Path, guarded: State) -> None:
    guarded.reject("Add a lockfile by hand", because="the tool writes it", guard="calc/lock.json")
    assert _after(repo) is None
    _run(repo, "open('calc/lock.json', 'w').write('{}')")
    answer = _after(repo)
    assert answer is not None and "calc/lock.json was created" in json.dumps(answer)
