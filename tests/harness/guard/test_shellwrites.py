"""The guard reads a shell command as a shell splits it (harness/guard/shellwrites.py), resolves its targets (the
working folder, `cd` within the command, symbolic links) and only then matches them: the ways of writing a guarded file
through the shell tool, or through a linked folder, that went past it. Real subprocesses, as the harnesses run the
hook."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import hook_answer
from rehydrate.harness.guard import shellwrites
from rehydrate.store.state import State


@pytest.fixture
def guarded(repo: Path) -> State:
    st, _ = State.init(repo / "state", "A calculator")
    st.reject("Hand-write the evaluator", because="it is generated from the grammar", guard="calc/ev*.py")
    st.reject("Evaluate input with eval()", because="it runs arbitrary code", guard="calc/o*.py", contains="eval(")
    (repo / "calc").mkdir()
    (repo / "calc" / "eval.py").write_text("generated\n")
    (repo / "notes.txt").write_text("x = 1\n")
    (repo / "risky.txt").write_text("y = eval(x)\n")
    return st


def _decision(harness: str, cwd: Path, tool: str, **tool_input: object) -> str:
    event = {"session_id": "s1", "cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": tool,
             "tool_input": tool_input}  # fmt: skip
    code, answer, err = hook_answer(harness, event, cwd)
    assert code == 0, err
    if answer is None:
        return ""
    return str(answer["hookSpecificOutput"].get("permissionDecision") or answer["hookSpecificOutput"])


WRITES = [
    "echo x >calc/eval.py",
    "echo x 2>&1 >>calc/eval.py",
    "cp notes.txt ./calc/eval.py",
    "cp old/eval.py calc/",
    "cat notes.txt | tee -a {repo}/calc/eval.py",
    "tee ./calc/../calc/eval.py < notes.txt",
    "cd calc && echo x > eval.py",
    "cd calc; printf x &>eval.py",
    "python3 -c \"open('calc/eval.py', 'w').write('x')\"",
    'node -e \'require("fs").writeFileSync("calc/eval.py", "x")\'',
    "bash -c 'echo x > calc/eval.py'",
    "sh -c \"cd calc && sh -c 'echo x >| eval.py'\"",
    "dd if=notes.txt of=calc/eval.py",
    "sed -i.bak s/a/b/ calc/./eval.py",
    "sed -i -e s/a/b/ -- calc/eval.py",
    "mv notes.txt calc/eval.py",
    "mv calc/eval.py old.py",
    "rm -rf calc",
    "ln -sf notes.txt calc/eval.py",
    "truncate -s 0 calc/eval.py",
    "FOO=1 sudo -E env X=y tee calc/eval.py < notes.txt",
    "perl -pi -e 's/a/b/' calc/eval.py",
    "cp -t calc old/eval.py",
]


@pytest.mark.parametrize("command", WRITES)
def test_a_shell_write_to_a_guarded_file_is_caught(repo: Path, guarded: State, command: str) -> None:
    assert _decision("claude", repo, "Bash", command=command.replace("{repo}", str(repo))) == "ask"


@pytest.mark.parametrize(
    "command",
    ["echo x > calc/ops.py", "cp notes.txt calc/ops.py", "python3 -c 'print(1)'", "cd calc && echo x > util.py",
     "ls -la && git status", "echo done 2>/dev/null | wc -c > out.txt"],
)  # fmt: skip
def test_a_shell_write_elsewhere_goes_through(repo: Path, guarded: State, command: str) -> None:
    assert _decision("claude", repo, "Bash", command=command) == ""


def test_what_a_copy_puts_into_a_guarded_file_is_looked_at(repo: Path, guarded: State) -> None:
    """`contains` is looked for in the files a command copies into a target, not only in the command's text."""
    assert _decision("claude", repo, "Bash", command="cp risky.txt calc/ops.py") == "ask"
    assert _decision("claude", repo, "Bash", command="cp notes.txt calc/ops.py") == ""


def test_a_write_through_a_linked_folder_or_path_is_caught(repo: Path, guarded: State, tmp_path: Path) -> None:
    link = tmp_path / "linked"
    link.symlink_to(repo, target_is_directory=True)
    (repo / "alias.py").symlink_to(repo / "calc" / "eval.py")
    assert _decision("claude", link, "Write", file_path=str(repo / "calc" / "eval.py"), content="x") == "ask"
    assert _decision("claude", repo, "Write", file_path=str(link / "calc" / "eval.py"), content="x") == "ask"
    assert _decision("claude", link, "Write", file_path="calc/eval.py", content="x") == "ask"
    assert _decision("claude", repo, "Write", file_path="alias.py", content="x") == "ask"
    assert _decision("claude", link, "Bash", command="echo x > alias.py") == "ask"
    assert _decision("claude", repo, "Write", file_path="calc/ops.py", content="x") == ""


def test_the_splitter_reads_as_a_shell_does(tmp_path: Path) -> None:
    base = str(tmp_path)
    found = shellwrites.writes("cd a && (echo 'x > y' >b; cat <in) | tee -a c 2>/dev/null\nrm -r d e", base)
    assert found.paths == [os.path.join(base, "a", "b"), os.path.join(base, "a", "c")]
    assert found.trees == [os.path.join(base, "a", "d"), os.path.join(base, "a", "e")]
    assert shellwrites.writes("echo 'unclosed > x", base).paths == []  # the quote holds the `>`
    assert shellwrites.writes("echo $OUT > $F", base).paths == ["$F"]  # known only at run time: kept as written
    assert json.dumps(shellwrites.writes("python -c 'print(1)'", base).mentions) == "[]"
