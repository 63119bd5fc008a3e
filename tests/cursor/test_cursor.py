"""Pipelines: the cursor invariant, by enumeration of crash points, a property-based model, and real files."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import crashsim
from conftest import rehydrate
from rehydrate import brief, cursor
from rehydrate.cursor import Pipeline, check, verify
from rehydrate.errors import RehydrateError
from rehydrate.fs import write as fsio
from rehydrate.store.state import State


def indexes(path: Path) -> list[int]:
    return [json.loads(x)["index"] for x in path.read_bytes().split(b"\n") if x.strip()]


def run(tmp: Path, n: int, **options: object) -> list[int]:
    """Commit n more items; the indexes that commit returned."""
    out = []
    with Pipeline.open(tmp / "out.jsonl", tmp / "progress.json", **options) as p:  # type: ignore[arg-type]
        for _ in range(n):
            out.append(p.commit({"v": "x"}))
    return out


def test_commit_reopen_and_pending(tmp_path: Path) -> None:
    items = [f"doc {i}" for i in range(10)]
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json") as p:
        assert p.report == [] and p.cursor == 0
        for i, item in p.pending(items):
            p.commit({"summary": item.upper()})
            if i == 5:
                break
    assert json.loads((tmp_path / "progress.json").read_text()) == {"cursor": 6}
    with Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json") as p:
        assert p.cursor == 6
        seen = []
        for i, item in p.pending(items):
            seen.append(i)
            p.commit({"summary": item.upper()})
        assert seen == [6, 7, 8, 9]
    with (
        Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json") as p,
        pytest.raises(RehydrateError, match="not committed"),
    ):
        for _ in p.pending([*items, "eleventh", "twelfth"]):
            pass
    assert indexes(tmp_path / "out.jsonl") == list(range(10))
    assert check(str(tmp_path / "out.jsonl"), str(tmp_path / "progress.json")).problems == []


@pytest.mark.parametrize(
    ("progress", "code"),
    [
        (None, "progress-missing"),
        (b"", "progress-unreadable"),
        (b"{not json", "progress-unreadable"),
        (b'{"cursor": -3}', "progress-unreadable"),
        (b'{"cursor": 99}', "cursor-ahead"),
        (b'{"cursor": 2}', "cursor-behind"),
    ],
)
def test_progress_faults_are_reported_and_repaired_from_the_output(
    tmp_path: Path, progress: bytes | None, code: str
) -> None:
    run(tmp_path, 5)
    path = tmp_path / "progress.json"
    if progress is None:
        path.unlink()
    else:
        path.write_bytes(progress)
    c = check(str(tmp_path / "out.jsonl"), str(path))
    assert [p.code for p in c.problems] == [code]
    with Pipeline.open(tmp_path / "out.jsonl", path) as p:
        assert p.cursor == 5 and len(p.report) >= 1
        p.commit({"v": "y"})
    assert indexes(tmp_path / "out.jsonl") == list(range(6))


def test_a_torn_last_line_is_cut_and_kept(tmp_path: Path) -> None:
    run(tmp_path, 3)
    with open(tmp_path / "out.jsonl", "ab") as f:
        f.write(b'{"v":"x","ind')
    p = Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json")
    assert p.cursor == 3 and any("torn" in r for r in p.report)
    p.close()
    assert (tmp_path / "out.jsonl.broken").read_bytes() == b'{"v":"x","ind'
    assert indexes(tmp_path / "out.jsonl") == [0, 1, 2]


@pytest.mark.parametrize(
    ("lines", "code"), [([0, 1, 1], "index-repeats"), ([0, 2], "index-skips"), ([0, 1, 0], "index-backwards")]
)
def test_damaged_records_are_named_and_refused(tmp_path: Path, lines: list[int], code: str) -> None:
    (tmp_path / "out.jsonl").write_text("".join(json.dumps({"index": i}) + "\n" for i in lines))
    c = check(str(tmp_path / "out.jsonl"), str(tmp_path / "progress.json"))
    assert code in [p.code for p in c.problems]
    with pytest.raises(RehydrateError, match=code):
        Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json")
    r = rehydrate("cursor", "verify", str(tmp_path / "out.jsonl"), str(tmp_path / "progress.json"), "--json")
    data = json.loads(r.out)
    assert r.code == 1 and data["ok"] is False and code in [p["code"] for p in data["problems"]]
    assert rehydrate("cursor", "repair", str(tmp_path / "out.jsonl"), str(tmp_path / "progress.json")).code == 3


def _untracked_ignored(repo: Path) -> None:
    """The pipeline's files are git-ignored here (without a commit: HEAD stays the checkpoint's), so that the
    live-state check does not report them as work no checkpoint recorded: these tests are about cursors."""
    with (repo / ".git" / "info" / "exclude").open("a") as f:
        f.write("data/\n")


def test_registered_pipelines_show_in_the_brief(repo: Path, state: State) -> None:
    data = repo / "data"
    data.mkdir()
    _untracked_ignored(repo)
    run(data, 379)
    (data / "progress.json").write_text('{"cursor": 381}')
    r = rehydrate("cursor", "register", "pass B", "data/out.jsonl", "data/progress.json", "--total", "1200")
    assert r.code == 0, r.err
    r = brief.resume(state)
    assert '"pass B": cursor 381 of 1,200; output ends at 378' in r.text  # a name with a space: quoted
    assert r.confidence == "degraded (cursors)" and "rehydrate cursor repair" in r.text
    rehydrate("cursor", "repair", "data/out.jsonl", "data/progress.json")
    assert brief.resume(state).confidence == "recovered"


# ---------------------------------------------------------------------------------------------------- crash points

COMMITS = 7


def _record(base: Path, batch: int = 1) -> tuple[list[crashsim.Op], list[int]]:
    """Run a pipeline under the recorder; for each record made durable (by a commit or, in batch mode, by the sync
    that wrote it), the op count when that returned."""
    recorder = crashsim.Recorder(str(base))
    real = fsio.calls
    fsio.calls = recorder
    ends: list[int] = []
    try:
        p = Pipeline.open(base / "out.jsonl", base / "progress.json", batch=batch)
        for i in range(COMMITS):
            p.commit({"v": "x" * 20, "index": "kept whole"} if i == 4 else {"v": "x" * 20})
            if (i + 1) % batch == 0:
                ends += [len(recorder.ops)] * (i + 1 - len(ends))
        p.close()
        ends += [len(recorder.ops)] * (COMMITS - len(ends))
    finally:
        fsio.calls = real
    return recorder.ops, ends


def _enumerate(ops: list[crashsim.Op], ends: list[int], disabled: frozenset[str], startup_check: bool) -> list[str]:
    failures = []
    for k in range(len(ops) + 1):
        returned = sum(1 for e in ends if e <= k)
        model = crashsim.replay(ops, k, disabled)
        for variant, cut in crashsim.variants(model):
            image = Path(tempfile.mkdtemp(prefix="cursor-crash-"))
            try:
                model.materialize(str(image), variant, cut)
                out, prog = image / "out.jsonl", image / "progress.json"
                c = check(str(out), str(prog))
                if c.cursor is not None and c.cursor > c.expected:  # the cursor said durable what is not on disk
                    failures.append(f"op {k} [{variant} {cut}]: cursor {c.cursor}, output {c.expected}")
                if not startup_check:  # the harness's teeth: trust the progress file instead of the output
                    start = c.cursor if c.cursor is not None else 0
                    with open(out, "ab") as f:
                        f.write(json.dumps({"index": start, "v": "again"}).encode() + b"\n")
                else:
                    with Pipeline.open(out, prog) as p:
                        p.commit({"v": "again"})
                try:
                    got = indexes(out)
                except ValueError:  # a line glued onto a torn one: the output is broken
                    got = [-1]
                if got != list(range(len(got))) or len(got) < returned + 1:
                    failures.append(f"op {k} {ops[k - 1][:2] if k else ''} [{variant} {cut}]: {got}")
            except RehydrateError as e:
                failures.append(f"op {k} [{variant} {cut}]: {e}")
            finally:
                shutil.rmtree(image)
    return failures


@pytest.mark.parametrize("batch", [1, 3])
def test_every_crash_point_keeps_the_output_whole(tmp_path: Path, batch: int) -> None:
    os.chdir(tmp_path)
    ops, ends = _record(tmp_path, batch)
    writes = -(-COMMITS // batch)  # each sync: the output write, its fsync, the progress write
    assert [op[0] for op in ops].count("fsync") >= writes and len(ops) >= 3 * writes
    assert not _enumerate(ops, ends, frozenset(), startup_check=True)


@pytest.mark.parametrize("batch", [1, 3])
def test_without_the_sync_or_the_startup_check_the_enumeration_fails(tmp_path: Path, batch: int) -> None:
    os.chdir(tmp_path)
    ops, ends = _record(tmp_path, batch)
    assert _enumerate(ops, ends, frozenset({"cursor.output"}), startup_check=True)  # a returned commit lost
    assert _enumerate(ops, ends, frozenset(), startup_check=False)  # an index repeated or skipped


# ---------------------------------------------------------------------------------------------------- property-based


class PipelineModel(RuleBasedStateMachine):
    """Commits, kills, torn lines, external truncation and damaged progress files, against a model: the output
    always holds 0..n-1 in order, and reopening always finds the cursor at n."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="cursor-model-"))
        self.out, self.prog = self.dir / "out.jsonl", self.dir / "progress.json"
        self.n = 0
        self.p: Pipeline | None = Pipeline.open(self.out, self.prog)

    def _reopen(self) -> None:
        self.p = Pipeline.open(self.out, self.prog)
        assert self.p.cursor == self.n

    @rule(count=st.integers(1, 5))
    def commit(self, count: int) -> None:
        if self.p is None:
            self._reopen()
        assert self.p is not None
        for _ in range(count):
            assert self.p.commit({"v": self.n}) == self.n
            self.n += 1

    def _die(self) -> None:  # the process dies: nothing flushed beyond what was written; its descriptors go
        if self.p is not None:
            self.p._release()
        self.p = None

    @rule()
    def kill(self) -> None:
        self._die()
        self._reopen()

    @rule(data=st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b))
    def torn_line(self, data: bytes) -> None:
        self._die()
        with open(self.out, "ab") as f:
            f.write(data)
        self._reopen()

    @rule(keep=st.integers(0, 30))
    def truncate_outside(self, keep: int) -> None:
        self._die()
        lines = self.out.read_bytes().split(b"\n")[:-1]
        keep = min(keep, len(lines))
        self.out.write_bytes(b"".join(x + b"\n" for x in lines[:keep]))
        self.n = keep
        self._reopen()

    @rule(garbage=st.sampled_from([b"", b"{", b'{"cursor": 100000}', b'{"cursor": 0}', b"[]"]))
    def damage_progress(self, garbage: bytes) -> None:
        self._die()
        self.prog.write_bytes(garbage)
        self._reopen()

    @invariant()
    def output_is_whole(self) -> None:
        if self.out.exists():
            assert indexes(self.out) == list(range(self.n))

    def teardown(self) -> None:
        if self.p is not None:
            self.p.close()
        shutil.rmtree(self.dir, ignore_errors=True)


TestPipelineModel = PipelineModel.TestCase
TestPipelineModel.settings = settings(
    max_examples=60, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def test_batch_mode_syncs_every_n(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    syncs: list[str] = []

    class Counting(fsio.Calls):
        def fsync(self, fd: int, point: str) -> None:
            syncs.append(point)
            super().fsync(fd, point)

    monkeypatch.setattr(fsio, "calls", Counting())
    assert run(tmp_path, 25, batch=10) == list(range(25))
    assert syncs.count("cursor.output") == 3  # at 10, at 20, and the 5 left at close
    syncs.clear()
    run(tmp_path, 4)
    assert syncs.count("cursor.output") == 4  # durable: one per record
    assert cursor.check(str(tmp_path / "out.jsonl"), str(tmp_path / "progress.json")).problems == []


def test_the_brief_reads_only_the_outputs_tail(repo: Path, state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    data = repo / "data"
    data.mkdir()
    _untracked_ignored(repo)
    run(data, 50)
    cursor.register(state.root, "pass A", str(data / "out.jsonl"), str(data / "progress.json"), total=60)

    def no_full_read(*args: object) -> None:
        raise AssertionError("the brief read the whole output")

    monkeypatch.setattr(verify, "_read_output", no_full_read)
    r = brief.resume(state)
    assert '"pass A": cursor 50 of 60; output ends at 49' in r.text and r.confidence == "recovered"
    with open(data / "out.jsonl", "ab") as f:
        f.write(b'{"v": "to')
    assert "has no newline" in brief.resume(state).text
