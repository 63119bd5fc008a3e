"""The benchmarks' own machinery: what a variant says it leaves out is left out (no timing here)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import rehydrate  # noqa: F401 - imported before bench/_common puts the checkout's src/ on sys.path
from conftest import REAL_TRANSCRIPTS, bench_module, needs_real_transcripts
from rehydrate.store.state import State
from rehydrate.store.wal import back as walback


@pytest.fixture
def throughput() -> Iterator[ModuleType]:
    yield from bench_module("throughput")


def spawns(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every process started through os.posix_spawnp or os.posix_spawn (how gitinfo starts git) from now on."""
    seen: list[Any] = []
    for name in ("posix_spawnp", "posix_spawn"):
        real = getattr(os, name)

        def spy(path: Any, argv: Any, *args: Any, _real: Any = real, **kwargs: Any) -> int:
            seen.append(list(argv))
            pid: int = _real(path, argv, *args, **kwargs)
            return pid

        monkeypatch.setattr(os, name, spy)
    return seen


def test_git_stubbed_starts_no_git_in_a_repository(
    repo: Path, throughput: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, _ = State.init(str(repo / "state"), "measure")
    started = spawns(monkeypatch)

    out = state.checkpoint("real", "git runs")  # the spy sees the real thing
    assert out.ok
    assert [argv[0] for argv in started] == ["git"]

    started.clear()
    with throughput.git_stubbed():
        out = state.checkpoint("stubbed", "no git")
    assert out.ok and out.record is not None
    assert started == []
    assert walback.read_tail(state.wal_path, 1).records[-1][1]["git"] == throughput.STUB_GIT

    out = state.checkpoint("after", "git again")  # the stub is undone on the way out
    assert out.ok
    assert [argv[0] for argv in started] == ["git"]


@pytest.fixture
def verify_scale() -> Iterator[ModuleType]:
    yield from bench_module("verify_scale")


@pytest.fixture
def hashing() -> Iterator[ModuleType]:
    yield from bench_module("hashing")


def test_verify_scale_runs_small_and_prints_its_ratios(
    verify_scale: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (a few hundred records, no cache): the state it builds verifies, and every figure is printed."""
    assert verify_scale.main(["--records", "300", "--rounds", "1", "--warmup", "0", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "WAL: 300 records" in out and "load average" in out and "reproduce: " in out
    for name in ("bare", "verify", "re-check"):
        assert any(line.startswith(name) for line in out.splitlines()), name
    assert "verify/bare = " in out and "re-check/bare = " in out


def test_verify_scale_builds_a_state_that_verifies(verify_scale: ModuleType, tmp_path: Path) -> None:
    path = verify_scale.build(str(tmp_path / "big"), 120)
    assert verify_scale.check(path, 120) is None
    assert State.open(path).verify().ok
    assert verify_scale.check(path, 121) == "it holds 120 records"


def test_hashing_runs_on_this_interpreter(hashing: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert hashing.main(["--python", sys.executable, "--rounds", "1", "--big", "1", "--imports", "1"]) == 0
    out = capsys.readouterr().out
    assert "import hashlib in a fresh process" in out and "700 B" in out and "reproduce: " in out


@pytest.fixture
def recover_scale() -> Iterator[ModuleType]:
    yield from bench_module("recover_scale")


def test_recover_scale_runs_small_and_prints_its_ratios(
    recover_scale: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (30 and 60 commits, no cache): both projects check out (recover finds the own commits, the dirty
    file and the teammate's commits), and every figure is printed, each git command recover runs named."""
    argv = ["--commits", "60", "--small-commits", "30", "--rounds", "1", "--inproc-rounds", "1", "--git-rounds", "1"]
    assert recover_scale.main([*argv, "--warmup", "0", "--no-cache", "--part", "commits"]) == 0
    out = capsys.readouterr().out
    assert "small: 30 commits before the checkpoint" in out and "big: 60 commits" in out
    assert "load average" in out and "reproduce: " in out and "big/small (whole process) = " in out
    assert "git status --porcelain=v2" in out and "--max-count=" in out  # each git call of recover, timed alone


def test_recover_scale_history_is_a_chain_of_commits(recover_scale: ModuleType, tmp_path: Path) -> None:
    agent = recover_scale.build(str(tmp_path / "p"), 25)
    assert recover_scale.check(agent, 25) is None
    assert recover_scale.check(agent, 26) == "HEAD holds 35 commits, not 36"


@needs_real_transcripts()
def test_recover_scale_transcripts_part_runs_small_and_prints_its_lines(
    recover_scale: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (1 MB against 20 MB, the cut case with 18 MB after the checkpoint, no cache): both transcripts end
    with the same records, recover finds them, the capture and recover read back to the checkpoint, and in the cut
    case the capture stops at its 16 MiB cap while recover reaches the checkpoint."""
    argv = ["--part", "transcripts", "--megabytes", "20", "--small-megabytes", "1", "--after-megabytes", "18"]
    argv += ["--transcript-rounds", "1", "--warmup", "0", "--no-cache", "--fixtures", str(REAL_TRANSCRIPTS)]
    assert recover_scale.main(argv) == 0
    out = capsys.readouterr().out
    assert "both end with the same 300 records" in out and "load average" in out and "reproduce: " in out
    assert "recover big/small transcript (whole process) = " in out and "PreCompact capture big/small = " in out
    assert out.count("recency in recover") == 2 and "files edited" in out and "1 command failed" in out
    assert "the PreCompact capture, small: read 0." in out and "cut False" in out
    assert "PASS  the capture stops at 16 MiB" in out and "PASS  recover reads back to the checkpoint" in out
    assert "the brief's recency line says it stopped at 4 MiB" in out


def test_recover_scale_transcripts_end_with_the_same_records(recover_scale: ModuleType, tmp_path: Path) -> None:
    """The big and small transcripts share their last records byte for byte; every stamp before them is before the
    checkpoint (or after it, in the cut case's middle part), and every copy of the fixture has ids of its own."""
    records = [b'{"uuid":"u1","timestamp":"2026-02-12T14:00:00.000Z","message":{"id":"msg_1"}}'] * 2000
    ckpt = recover_scale._ms("2026-12-01T02:52:39.175Z")
    block = recover_scale.after_block(records, ckpt)
    for name, size, after in (("small", 400_000, 0), ("big", 3_000_000, 0), ("cut", 3_000_000, 1_000_000)):
        recover_scale.write_transcript(str(tmp_path / name), records, size, after, block, ckpt)
    data = {n: (tmp_path / n).read_bytes() for n in ("small", "big", "cut")}
    assert all(d.endswith(block) for d in data.values()) and block.count(b"\n") == 300
    assert abs(len(data["big"]) - 3_000_000) < 200 and abs(len(data["small"]) - 400_000) < 200
    stamps = [line.split(b'"timestamp":"')[1][:24].decode() for line in data["cut"].splitlines()]
    before = [s for s in stamps if s < "2026-12-01T02:52:39.175Z"]
    assert before == sorted(before) and len(before) > 1000 and stamps[-1] > "2026-12-01T03:52"
    assert len(stamps) - len(before) > 300  # the cut case's middle part is stamped after the checkpoint too
    ids = {line.split(b'"uuid":"')[1].split(b'"')[0] for line in data["big"].splitlines()}
    assert {b"b00000u1", b"b00001u1", b"afteru1"} <= ids and len(ids) > 10  # one id per copy of the same record


def test_recover_scale_history_part_runs_small_and_prints_its_lines(
    recover_scale: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (3 against 30 resume records after the checkpoint): the states are built through the real hook and
    the store's sealing, the back-scan reaches the checkpoint in both, and the ratios are printed."""
    argv = ["--part", "history", "--resumes", "30", "--small-resumes", "3", "--history-rounds", "1", "--warmup", "0"]
    assert recover_scale.main(argv) == 0
    out = capsys.readouterr().out
    assert "small: 3 resume records after the checkpoint" in out and "big: 30 resume records" in out
    assert "hook big/small (whole process) = " in out and "store.wal.since.find" in out and "reproduce: " in out


@pytest.fixture
def startup() -> Iterator[ModuleType]:
    yield from bench_module("startup")


@needs_real_transcripts()
def test_startup_full_repository_holds_a_transcript_the_hook_reads(
    startup: ModuleType, tmp_path: Path, isolated_home: Path
) -> None:
    """(h)'s full repository, made with this checkout's rehydrate (no venv built: seconds): a PreCompact recorded its
    transcript's capture after the checkpoint, and the SessionStart hook naming it reads its tail (recency degraded,
    the fixture's edit named), beside the handoff and the git checks that have work."""
    import json
    import subprocess

    script = str(Path(sys.executable).parent / "rehydrate")  # this checkout's, installed in the venv that runs
    assert os.path.exists(script)
    env = {**os.environ, "REHYDRATE_DIR": "", "REHYDRATE_ACTOR": ""}
    env = {k: v for k, v in env.items() if v}
    repo, transcript = startup.full_repo(script, str(tmp_path / "full"), env, str(REAL_TRANSCRIPTS), 0.5)
    assert transcript is not None and 400_000 < os.path.getsize(transcript) < 600_000
    wal_lines = Path(repo, "state", "wal", "agent.jsonl").read_bytes().splitlines()
    compaction = json.loads(wal_lines[-1])
    assert compaction["op"] == "compaction" and compaction["data"]["capture"]["edited"]["files"]
    done = subprocess.run(
        [script, "hook", "claude"],
        cwd=repo,
        env=env,
        input=startup.session_start(repo, transcript),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    brief = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- recency: degraded" in brief and "otel_trace_helpers.ex" in brief
    assert "- handoff: ok" in brief and "- direction: degraded" in brief and "- live-state: degraded" in brief


@pytest.fixture
def child_output() -> Iterator[ModuleType]:
    yield from bench_module("child_output")


def test_child_output_runs_small_and_prints_its_peaks(
    child_output: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (5 MiB, one round): every variant is measured and held to the floor's margin."""
    assert child_output.main(["--mb", "5", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out and "reproduce: " in out
    for name in ("floor", "canary 5 MiB", "canary yes 2 s", "run 5 MiB"):
        assert any(line.startswith(name) for line in out.splitlines()), name
    assert out.count("PASS  ") == 3, out


@pytest.fixture
def guard_effect() -> Iterator[ModuleType]:
    yield from bench_module("guard_effect")


def test_guard_effect_runs_small_and_prints_its_lines(
    guard_effect: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run (a view of 1,000 more lines, one round): every call answers as the guard must, each is measured."""
    assert guard_effect.main(["--lines", "1000", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out and "reproduce: " in out and "--lines=1000" in out
    for name in ("python -c pass", "PostToolUse Bash, nothing guarded", "PreToolUse Bash writes a guarded file"):
        assert any(line.startswith(name) for line in out.splitlines()), name
    assert "big view / small view" in out


@pytest.fixture
def percall() -> Iterator[ModuleType]:
    yield from bench_module("percall")


def test_percall_s_events_are_answered_as_their_kind_says(percall: ModuleType, tmp_path: Path) -> None:
    """The per-call bench's states verify, and each of its events is one the hook answers (exit 0): one a guard
    asks about is classed as applying, one nothing matches as not (so that its targets hold what they say); the
    events that record run in the second state, so the first never holds a compaction."""
    import json

    from conftest import run_hook

    repo, recording = tmp_path / "repo", tmp_path / "recording"
    for place in (repo, recording):
        percall.build(str(place))
        assert State.open(place / "state").verify().ok
    for harness, name, kind, change in percall.EVENTS:
        where = recording if name in percall.WRITES else repo
        event = json.loads(percall.event(str(where), harness, name, change))
        code, out, err = run_hook(percall.command_args(harness, name), event, where)
        assert code == 0 and "Traceback" not in err, (harness, name, err)
        assert (kind == percall.OTHER) == (kind not in percall.TARGETS)
        if kind == percall.START:
            assert "rehydrate brief" in out, (harness, name)
            continue
        asks = "matches an approach rejected" in out
        guarded = ("PreToolUse-Write", "preToolUse-edit", "preToolUse-Write", "beforeShellExecution")
        assert asks == (name in guarded), (harness, name, out[:300])
        assert not (kind == percall.NOTHING and (asks or out)), (harness, name, out[:300])
