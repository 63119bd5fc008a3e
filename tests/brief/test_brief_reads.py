"""The cost of a brief follows what it can show, not what is stored (the views, and the WAL's tail)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rehydrate import brief
from rehydrate.store.state import State
from rehydrate.store.wal import lines as wallines

MIB = 1 << 20


class Reads:
    """Bytes read by the process through os.read, os.pread and the WAL's line reader (which reads through a
    buffered file object, not os.read)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.total = 0
        real_read, real_pread, real_lines = os.read, os.pread, wallines.iter_lines

        def read(fd: int, n: int) -> bytes:
            data = real_read(fd, n)
            self.total += len(data)
            return data

        def pread(fd: int, n: int, offset: int) -> bytes:
            data = real_pread(fd, n, offset)
            self.total += len(data)
            return data

        def iter_lines(path: str, end: int | None = None) -> Iterator[wallines.Line]:
            for line in real_lines(path, end):
                self.total += len(line.raw or b"") + 1
                yield line

        monkeypatch.setattr(os, "read", read)
        monkeypatch.setattr(os, "pread", pread)
        monkeypatch.setattr(wallines, "iter_lines", iter_lines)


def big_wal(state: State, megabytes: int) -> int:
    """Grow the log past `megabytes` MiB with records that change no view; end it with a small checkpoint."""
    blob = "x" * (256 << 10)
    for _ in range(megabytes * 4):
        state.record("note", {"blob": blob})
    state.checkpoint(done="wrote the lexer", next="write the parser")
    return os.path.getsize(Path(state.root) / "wal" / "agent.jsonl")


def test_resume_reads_the_wals_tail_not_the_wal(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    size = big_wal(state, 8)
    assert size > 8 * MIB
    st = State.open(state.root)
    reads = Reads(monkeypatch)
    r = brief.resume(st)
    assert r.confidence == "recovered" and "write the parser" in r.text
    assert reads.total < MIB, f"resume read {reads.total:,} bytes of state for a {size:,}-byte WAL"


def test_large_extra_files_are_not_read_beyond_what_the_brief_can_show(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(state.root)
    for i in range(8):
        (root / f"{30 + i}_big.md").write_bytes((f"line {i} " * 100 + "\n").encode() * (4 * MIB // 801))
    (root / "40_small.md").write_text("a small note\n")
    st = State.open(state.root)
    reads = Reads(monkeypatch)
    r = brief.resume(st)
    assert reads.total < MIB, f"resume read {reads.total:,} bytes with 32 MiB of extra files"
    assert "a small note" in r.text
    assert "30_big.md" in r.text  # named as left out, with its size
    data = r.record["data"]
    assert "30_big.md" not in data["read"] and "40_small.md" in data["read"]


def test_the_brief_input_carries_each_views_size_on_disk(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    from rehydrate import brief

    root = Path(state.root)
    (root / "30_big.md").write_bytes(b"y" * (3 * MIB))
    seen: list[brief.BriefInput] = []
    real = brief.render

    def render(inp: brief.BriefInput, budget: int) -> brief.Brief:
        seen.append(inp)
        return real(inp, budget)

    monkeypatch.setattr(brief, "render", render)
    brief.resume(State.open(state.root))
    (inp,) = seen
    sizes = inp.sizes or {}
    assert sizes["30_big.md"] == 3 * MIB
    for name in ("00_goal.md", "10_invariants.md", "99_next.md"):
        assert sizes[name] == os.path.getsize(root / name)
    assert dict(inp.extras)["30_big.md"] == ""  # not read: it could not be shown whole
    assert inp.path == os.path.realpath(root)


def test_resume_is_logged_and_reads_only_the_tail(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    size = big_wal(state, 6)  # ends with the same checkpoint as the fixture's
    reads = Reads(monkeypatch)  # every byte read through os.read, os.pread and the WAL's line reader
    r = brief.resume(state)
    assert r.confidence == "recovered" and r.record["op"] == "resume"
    assert r.record["data"]["checks"] == {
        "identity": "ok",
        "state": "ok",
        "handoff": "n/a",
        "mailbox": "n/a",
        "outbox": "n/a",
        "recency": "n/a",
        "live-state": "ok",  # its worst line (HEAD ok; upstream and gh n/a)
        "direction": "n/a",
        "cursors": "n/a",
    }
    assert "next safe action: write the parser" in r.text
    assert reads.total < size // 8, f"resume read {reads.total:,} bytes of a {size:,}-byte WAL"


def test_resume_decodes_only_the_journal_lines_it_needs(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """The delivery receipt and the restatement read the journal's last records: the newest brief given is found in
    the newest line, and no line is an `ack`, so no other line of the 16 read back is decoded."""
    from rehydrate.store.local import journal
    from rehydrate.store.wal import record as wal

    for _ in range(20):
        brief.resume(state, harness="claude", transcript="/nowhere/t.jsonl")  # each logs a resume with its brief
    decoded: list[bytes] = []
    real = wal.decode

    def counting(raw: bytes) -> wal.Record:
        if b'"op":"resume"' in raw:  # the journal's (the WAL holds none)
            decoded.append(raw)
        return real(raw)

    monkeypatch.setattr(wal, "decode", counting)
    newest = Path(journal.path(state)).read_bytes().splitlines()[-1]
    assert brief.resume(state, harness="claude", transcript="/nowhere/t.jsonl").confidence == "recovered"
    # the newest line only: by the receipt's read, by since (the transcript it names), by the append (its chain)
    assert decoded and set(decoded) == {newest}, [r[-100:] for r in decoded]


def test_the_resume_record_keeps_each_checks_worst_status(tmp_path: Path) -> None:
    """live-state gives several findings (HEAD, upstream, gh); the record shows its worst, not its last: a dirty
    file since the checkpoint is degraded even though the upstream and gh lines after it are n/a."""
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a"}
    env["GIT_COMMITTER_EMAIL"] = "a@x"
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    st, _ = State.init(str(repo / "state"), "Ship the parser", "all tests pass")
    st.checkpoint(done="the tokenizer", next="binding powers")
    (repo / "notes.md").write_text("new\n")
    r = brief.resume(State.open(st.root))
    assert r.record["data"]["checks"]["live-state"] == "degraded", r.record["data"]["checks"]
