"""The brief: boot order, the budget, what gives first, and what never does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rehydrate import brief, checks
from rehydrate.brief import MIN_BUDGET, receipt
from rehydrate.checks.git import probe as gitprobe
from rehydrate.errors import UsageError
from rehydrate.store.state import State


def _fill(state: State, decisions: int, rejects: int, handoff: int, extra: int) -> None:
    for i in range(decisions):
        state.invariant(f"decision number {i} " + "d" * 80, because="reasons " + "r" * 40)
    for i in range(rejects):
        state.reject(f"approach number {i}", because="it failed", guard=f"src/mod{i}.py")
    if extra:
        Path(state.path("30_phase.md")).write_text("phase notes\n" * (extra // 12))
    state.checkpoint(done="the last step", next="THE NEXT ACTION")
    if handoff:  # after the checkpoint: a handoff older than it degrades the ledger (checks/handoff.py)
        state.handoff("handoff line\n" * (handoff // 13))


def test_small_state_is_complete_and_in_boot_order(state: State) -> None:
    Path(state.path("30_phase.md")).write_text("# Phase B\nnotes\n")
    state.handoff("read me in full")
    text = brief.resume(state).text
    order = [
        "# rehydrate brief",
        "## Goal",
        "Rejected approaches",
        "Decisions:",
        "## Handoff",
        "## state/30_phase.md",
        "## Next",
        "## Last WAL record",
        "\n## Ledger ",
        "confidence: recovered",
    ]
    positions = [text.index(x) for x in order]
    assert positions == sorted(positions)
    assert "Left out" not in text


@pytest.mark.parametrize("budget", [MIN_BUDGET, 2500, 5000, 9000, 20000])
def test_budget_is_never_exceeded_and_essentials_stay(state: State, budget: int) -> None:
    _fill(state, decisions=60, rejects=8, handoff=6000, extra=6000)
    r = brief.resume(state, budget=budget)
    assert len(r.text) <= budget
    assert "THE NEXT ACTION" in r.text and "Ship the parser" in r.text and "confidence: recovered" in r.text
    assert "approach number 7" in r.text  # the newest rejected approach is always there
    if budget >= 5000:
        assert all(f"approach number {i}" in r.text for i in range(8))
    if budget < 20000:
        assert r.omitted and "## Left out to fit the budget" in r.text


def test_what_gives_first(state: State) -> None:
    _fill(state, decisions=60, rejects=3, handoff=1500, extra=3000)
    r = brief.resume(state, budget=9000)
    assert r.omitted[0].startswith("the last WAL record")
    assert any("30_phase.md" in o for o in r.omitted)
    assert "decision number 59" in r.text and "decision number 0 " not in r.text  # oldest decisions go first
    assert any("older decision" in o for o in r.omitted)
    assert "## Handoff" in r.text  # the handoff outranks old decisions


def test_default_budget_fits_claude_codes_hook_limit(state: State) -> None:
    _fill(state, decisions=200, rejects=40, handoff=20000, extra=20000)
    assert len(brief.resume(state).text) <= 9000  # Claude Code cuts hook output at 10,000


def test_untrusted_control_characters_are_stripped(state: State) -> None:
    Path(state.path("30_notes.md")).write_text("safe\x1b[31m red \x07 bell \u202e rtl\n")
    text = brief.resume(state).text
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "safe[31m red" in text


def test_resume_cost_does_not_read_the_whole_log(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    from rehydrate.store.wal import lines as wallines

    def no_full_scan(path: str):  # type: ignore[no-untyped-def]
        raise AssertionError("resume read the whole WAL")

    for _ in range(30):
        state.checkpoint(done="x", next="y")
    monkeypatch.setattr(wallines, "iter_lines", no_full_scan)
    assert brief.resume(state).confidence == "recovered"


def test_resume_reads_each_view_once(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    from rehydrate.fs import write as fsio

    reads: list[str] = []
    real = fsio.read_bytes

    def counting(path: str, limit: int, *words: object) -> bytes | None:
        reads.append(Path(path).name)
        return real(path, limit, *words)

    monkeypatch.setattr(fsio, "read_bytes", counting)
    assert brief.resume(State.open(state.root)).confidence == "recovered"  # as the next process reads them
    for name in ("00_goal.md", "99_next.md"):
        assert reads.count(name) == 1, reads
    # 10 is not read whole at all when the cache vouches for it (the brief reads it bounded: test_read.py)
    assert reads.count("10_invariants.md") <= 1, reads
    reads.clear()
    assert brief.resume(state).confidence == "recovered"  # the object that wrote 99 remembers it (store/local/memo.py)
    assert reads.count("00_goal.md") == 1 and "99_next.md" not in reads, reads


def test_a_budget_too_small_is_named_in_domain_words(state: State) -> None:
    with pytest.raises(UsageError) as e:
        brief.resume(state, budget=10)
    assert (e.value.message, e.value.field) == ("a budget of 10 characters is too small", "budget")


def test_git_starts_before_what_it_runs_beside(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git status starts before the state's lock is taken, and the log since the checkpoint before the views are
    read: each process runs while the brief does work that needs nothing it says."""
    from rehydrate import proc

    state, _ = State.init(str(repo / "state"), "ship the parser")
    state.checkpoint(done="the tokenizer", next="the parser")
    subprocess.run(["git", "commit", "-qm", "since the checkpoint", "--allow-empty"], cwd=repo, check=True)
    order: list[str] = []
    real_start, real_reading, real_views = proc.start, State.reading, brief.read_views

    def start(cmds: list[list[str]], **kwargs: Any) -> Any:
        order.extend(f"git {c[3]}" for c in cmds)
        return real_start(cmds, **kwargs)

    def reading(self: State) -> Any:
        order.append("lock")
        return real_reading(self)

    def views(*args: Any) -> Any:
        order.append("views")
        return real_views(*args)

    monkeypatch.setattr(proc, "start", start)
    monkeypatch.setattr(State, "reading", reading)
    monkeypatch.setattr(brief, "read_views", views)
    assert "since the checkpoint" in brief.resume(state).text
    assert order == ["git status", "lock", "git log", "views"], order


def test_a_git_status_started_before_a_contended_lock_is_asked_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another command held the state while resume waited for its lock (it may have moved HEAD): the git status
    started before is stopped and asked again, beside the state as it is now; nothing is left running."""
    import fcntl

    from rehydrate.fs import lock as fslock

    state, _ = State.init(str(repo / "state"), "ship the parser")
    state.checkpoint(done="the tokenizer", next="the parser")
    started: list[Any] = []
    real = gitprobe.status_started

    def spy(root: str, env: Any) -> Any:
        started.append(real(root, env))
        return started[-1]

    busy = [True]
    real_flock = fcntl.flock

    def flock(fd: int, how: int) -> None:
        if how & fcntl.LOCK_NB and busy[0]:  # the first try finds the lock held: another command has it
            busy[0] = False
            raise BlockingIOError
        real_flock(fd, how)

    monkeypatch.setattr(gitprobe, "status_started", spy)
    monkeypatch.setattr(fslock.fcntl, "flock", flock)
    assert brief.resume(state).confidence == "recovered"
    assert len(started) == 2 and started[0]._waited  # the first stopped (waited for at once), the second taken
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
    busy[0] = False
    started.clear()
    assert brief.resume(state).confidence == "recovered" and len(started) == 1  # not held: asked once


@pytest.mark.parametrize("case", ["probed", "no check", "the receipt raises", "a check fails to load"])
def test_the_git_started_for_the_checks_is_never_left_behind(
    repo: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """resume starts git status before it reads the state, and the checks' git (the log since the checkpoint) before
    it reads the journal for the receipt: the probe takes the status and the checks collect the log; when no probe
    takes the status (here no check runs at all), resume stops it; when the receipt raises, the checks still collect
    their git before the error goes on; when a check's module fails to load after live-state started its git, that
    git is stopped (the check's stop). No child process is left once resume returns or raises."""
    state, _ = State.init(str(repo / "state"), "ship the parser")
    state.checkpoint(done="the tokenizer", next="the parser")
    (repo / "a.py").write_text("x\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "since the checkpoint"], cwd=repo, check=True)  # so that git log runs
    started: list[str] = []
    real = gitprobe.status_started

    def spy(root: str, env: Any) -> Any:
        started.append(root)
        return real(root, env)

    monkeypatch.setattr(gitprobe, "status_started", spy)
    if case == "no check":
        monkeypatch.setattr(checks, "start_all", lambda context: checks.Started(context, []))
    if case == "a check fails to load":  # live-state is built and started first; identity's module then fails
        monkeypatch.setitem(checks._MODULES, "identity", ("no_such_check", "NoSuchCheck"))
        with pytest.raises(ModuleNotFoundError):
            brief.resume(state)
    elif case == "the receipt raises":

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a receipt that raises")

        monkeypatch.setattr(receipt, "settle", broken)
        with pytest.raises(RuntimeError):
            brief.resume(state)
    else:
        result = brief.resume(state)
        assert ("since the checkpoint" in result.text) is (case == "probed"), result.text
    assert started == [state.root]
    with pytest.raises(ChildProcessError):  # no child at all: each was reaped
        os.waitpid(-1, os.WNOHANG)
