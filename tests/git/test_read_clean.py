"""Reading the state leaves the git tree clean: a session start and the reading commands log their
read in this worktree's journal (store/local/journal.py, in the worktree's own git folder), never in a committed file.

Real git repositories, the real CLI and the real hooks in subprocesses, each harness's documented SessionStart event
(tests/fixtures/hooks). The fixtures are this file's own (tests/git/conftest.py is another work package's).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import git, hook_event, rehydrate, run_hook

HARNESSES = ("claude", "codex", "gemini")


def journal_lines(worktree: Path, git_dir: str = ".git") -> list[dict[str, Any]]:
    """The journal's records, as the test reads the file (not through the store's readers)."""
    path = worktree / git_dir / "rehydrate" / "state" / "journal" / "agent.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def porcelain(cwd: Path) -> str:
    return git(cwd, "status", "--porcelain", "--untracked-files=all")


@pytest.fixture
def project(repo: Path) -> Path:
    """A committed state (a decision, a checkpoint) in a real repository whose tree is clean."""
    for args in (
        ("init", "--goal", "Ship the parser"),
        ("invariant", "Write the WAL before any view", "--because", "a crash must be redoable"),
        ("checkpoint", "--done", "wrote the lexer", "--next", "write the parser"),
    ):
        r = rehydrate(*args, cwd=repo)
        assert r.code == 0, r.err
    git(repo, "add", "state")
    git(repo, "commit", "-qm", "state")
    assert porcelain(repo) == ""
    return repo


def brief_of(out: str) -> str:
    """The brief (or pointer) in a hook's answer, wherever the harness nests it."""
    answer = json.loads(out)
    spec = answer.get("hookSpecificOutput")
    if isinstance(spec, dict) and isinstance(spec.get("additionalContext"), str):
        return str(spec["additionalContext"])
    raise AssertionError(f"no context in {out[:300]}")


def session_start(cwd: Path, harness: str = "claude", source: str = "startup", **changes: object) -> str:
    code, out, err = run_hook(harness, hook_event(cwd, harness, f"SessionStart-{source}", **changes), cwd)
    assert code == 0, err
    return brief_of(out)


def is_brief(text: str) -> bool:
    return "Ship the parser" in text and "next safe action" in text


# ------------------------------------------------------------------------------------------------ a clean tree


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_session_start_leaves_the_tree_clean_and_the_journal_holds_the_read(project: Path, harness: str) -> None:
    stashes = git(project, "stash", "list")
    wal = (project / "state" / "wal" / "agent.jsonl").read_bytes()
    text = session_start(project, harness)
    assert is_brief(text)
    assert porcelain(project) == "" and git(project, "stash", "list") == stashes
    assert (project / "state" / "wal" / "agent.jsonl").read_bytes() == wal  # not a byte more in the log
    (read,) = journal_lines(project)
    assert read["op"] == "resume" and read["data"]["harness"] == harness and read["seq"] == 1
    assert read["data"]["session_id"] == json.loads(hook_event(project, harness, "SessionStart-startup"))["session_id"]


def test_the_reading_commands_leave_the_tree_clean(project: Path) -> None:
    stashes = git(project, "stash", "list")
    for args in (["resume"], ["status"], ["recover"], ["verify"], ["log"], ["resume", "--json"], ["status", "--json"]):
        r = rehydrate(*args, cwd=project)
        assert r.code == 0, (args, r.out, r.err)
        assert porcelain(project) == "", args
    assert git(project, "stash", "list") == stashes
    reads = journal_lines(project)
    assert [r["op"] for r in reads] == ["resume", "resume"]  # `resume`, twice: logged in the journal
    assert [r["prev"] for r in reads] == [None, reads[0]["h"]]  # its own chain


# ------------------------------------------------------------------------------------------------ once per session


def test_a_resumed_session_is_pointed_to_its_brief_from_the_journal(project: Path) -> None:
    """`_already_given` reads the journal: a resumed session gets a pointer to the brief it was given, once per
    session as before; another session, or the same one after its compaction started, gets the brief again."""
    assert is_brief(session_start(project, "claude", "startup"))
    pointer = session_start(project, "claude", "resume")
    assert "journal record 1" in pointer and not is_brief(pointer)
    assert "journal record 1" in session_start(project, "claude", "resume")  # and again: nothing written since
    assert is_brief(session_start(project, "claude", "resume", session_id="another"))  # another session's first
    assert porcelain(project) == ""
    code, _, err = run_hook("claude", hook_event(project, "claude", "PreCompact-auto"), project)  # in the WAL
    assert code == 0, err
    assert is_brief(session_start(project, "claude", "resume"))  # the compaction took the brief away
    assert "journal record 3" in session_start(project, "claude", "resume")  # a pointer logs nothing
    assert is_brief(session_start(project, "claude", "compact"))  # a compaction's start always gives it
    assert [r["data"]["session_id"][:7] for r in journal_lines(project)] == ["3f6c1a2", "another", "3f6c1a2", "3f6c1a2"]


def test_gemini_records_a_compression_once_and_its_requests_leave_the_tree_clean(project: Path) -> None:
    """A request that carries a compressed history (Gemini's BeforeModel) gets the brief each time, logged in the
    journal; the compaction goes to the WAL once, at its first sight; the others write nothing under state/."""
    assert run_hook("gemini", hook_event(project, "gemini", "BeforeModel"), project) == (0, "", "")  # no compression
    for _ in range(3):
        code, out, err = run_hook("gemini", hook_event(project, "gemini", "BeforeModel-compressed"), project)
        assert code == 0, err
        assert "Ship the parser" in json.loads(out)["hookSpecificOutput"]["llm_request"]["messages"][-1]["content"]
        if _ == 0:
            subprocess.run(["git", "add", "-A"], cwd=project, check=True)
            subprocess.run(["git", "commit", "-qm", "the compaction"], cwd=project, check=True)
        assert porcelain(project) == ""
    assert [r["op"] for r in journal_lines(project)] == ["resume"] * 3


# ------------------------------------------------------------------------------------------------ the fold


def test_the_next_checkpoint_folds_the_reads(project: Path) -> None:
    for n in range(7):
        session_start(project, "claude", "startup", session_id=f"s{n}")
    assert rehydrate("resume", cwd=project).code == 0
    assert rehydrate("checkpoint", "--done", "the parser", "--next", "the printer", cwd=project).code == 0
    last = json.loads((project / "state" / "wal" / "agent.jsonl").read_bytes().splitlines()[-1])
    reads = last["data"]["reads"]
    assert reads["count"] == 8 and [r["session_id"] for r in reads["last"]] == ["s3", "s4", "s5", "s6", None]
    journal = journal_lines(project)
    assert [r["ts"] for r in reads["last"]] == [r["ts"] for r in journal[-5:]]
    assert reads["last"][-1]["chars"] == journal[-1]["data"]["chars"]
    assert reads["last"][-1]["confidence"] == journal[-1]["data"]["confidence"]
    assert rehydrate("checkpoint", "--done", "the printer", "--next", "ship", cwd=project).code == 0
    last = json.loads((project / "state" / "wal" / "agent.jsonl").read_bytes().splitlines()[-1])
    assert "reads" not in last["data"]  # folded once: nothing read since
    session_start(project, "codex", "startup")
    assert rehydrate("checkpoint", "--done", "shipped", "--next", "rest", cwd=project).code == 0
    last = json.loads((project / "state" / "wal" / "agent.jsonl").read_bytes().splitlines()[-1])
    assert last["data"]["reads"]["count"] == 1


# ------------------------------------------------------------------------------------------------ hostile journals


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_journal_that_is_a_link_or_a_fifo_is_refused_and_the_read_goes_on(
    project: Path, tmp_path: Path, kind: str
) -> None:
    folder = project / ".git" / "rehydrate" / "state" / "journal"
    folder.mkdir(parents=True)
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    if kind == "symlink":
        (folder / "agent.jsonl").symlink_to(target)
    else:
        os.mkfifo(folder / "agent.jsonl")
    assert is_brief(session_start(project, "claude", "startup"))  # the hook neither blocks nor fails
    assert is_brief(session_start(project, "claude", "resume"))  # nothing logged: nothing to point to
    r = rehydrate("resume", "--json", cwd=project)
    assert r.code == 0, r.err
    problems = json.loads(r.out)["problems"]
    assert [p["code"] for p in problems] == ["journal-unwritten"], problems
    assert "not logged" in problems[0]["message"]
    assert target.read_bytes() == b""  # never followed
    assert porcelain(project) == ""
    assert rehydrate("checkpoint", "--done", "a", "--next", "b", cwd=project).code == 0  # the fold reads nothing


def test_a_torn_journal_tail_is_cut_by_the_next_read(project: Path) -> None:
    session_start(project, "claude", "startup")
    path = project / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl"
    whole = path.read_bytes()
    with path.open("ab") as f:
        f.write(b'{"actor":"agent","data":{"budg')  # a write torn by a crash
    assert "journal record 1" in session_start(project, "claude", "resume")  # the torn line is left out
    assert is_brief(session_start(project, "claude", "startup", session_id="s2"))
    lines = path.read_bytes().splitlines()
    assert path.read_bytes().startswith(whole) and len(lines) == 2
    assert json.loads(lines[1])["prev"] == json.loads(lines[0])["h"] and json.loads(lines[1])["seq"] == 2
    assert porcelain(project) == ""


# ------------------------------------------------------------------------------------------------ worktrees


def test_two_linked_worktrees_keep_separate_journals(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "feat"
    git(project, "worktree", "add", "-q", "-b", "feat", str(other))
    assert is_brief(session_start(project, "claude", "startup", session_id="main-1"))
    assert is_brief(session_start(other, "claude", "startup", session_id="feat-1"))
    git_dir = Path(
        subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=other, capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    mine = [r["data"]["session_id"] for r in journal_lines(project)]
    theirs_path = (other / git_dir) / "rehydrate" / "state" / "journal" / "agent.jsonl"
    theirs = [json.loads(x)["data"]["session_id"] for x in theirs_path.read_bytes().splitlines()]
    assert mine == ["main-1"] and theirs == ["feat-1"]
    # a session that read the brief in one worktree is given it in the other: each journal is its own
    assert is_brief(session_start(other, "claude", "resume", session_id="main-1"))
    assert "journal record 1" in session_start(project, "claude", "resume", session_id="main-1")
    assert porcelain(project) == "" and porcelain(other) == ""
