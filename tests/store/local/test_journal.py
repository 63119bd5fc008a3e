"""The journal (store/local/journal.py): where a read of the state is logged, per worktree, outside what is committed.

The records have the WAL's shape and its own hash chain; one write and one fsync per append; a torn tail is cut; a
damaged journal is moved aside; past its size cap the file becomes the previous generation; a journal that is a
symlink or a FIFO is never followed and never fails the command; the fold gives the next checkpoint `data.reads`."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from conftest import records
from rehydrate import brief
from rehydrate.fs import write as fsio
from rehydrate.store.local import journal
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal


def lines(st: State) -> list[dict[str, object]]:
    return [json.loads(x) for x in Path(journal.path(st)).read_bytes().splitlines()]


def test_the_journal_is_in_the_worktrees_git_folder_and_chained(state: State, repo: Path) -> None:
    assert journal.path(state) == str(repo / ".git" / "rehydrate" / "state" / "journal" / "agent.jsonl")
    assert not os.path.exists(journal.path(state))  # nothing until a read is logged
    before = records(state.root)
    for n in range(3):
        rec, repaired, why = journal.append(state, "resume", {"n": n})
        assert repaired is None and why is None and rec["seq"] == n + 1
    got = lines(state)
    assert [r["seq"] for r in got] == [1, 2, 3] and [r["data"] for r in got] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert [r["prev"] for r in got] == [None, got[0]["h"], got[1]["h"]]
    raw = Path(journal.path(state)).read_bytes().splitlines()
    assert all(wal.decode(x)["actor"] == "agent" for x in raw)  # the WAL's canonical records, hashes that hold
    assert records(state.root) == before  # the WAL is not touched
    assert [r["data"] for r in journal.tail(state, 2)] == [{"n": 2}, {"n": 1}]  # newest first
    assert journal.shown(state) == os.path.join(".git", "rehydrate", "state", "journal", "agent.jsonl")


def test_an_append_is_one_write_and_one_fsync(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    journal.append(state, "resume", {"n": 0})
    calls: list[str] = []
    real = fsio.calls

    class Counting(type(real)):  # type: ignore[misc]
        def write(self, fd: int, data: bytes) -> int:
            calls.append("write")
            return real.write(fd, data)

        def fsync(self, fd: int, point: str) -> None:
            calls.append(point)
            real.fsync(fd, point)

    monkeypatch.setattr(fsio, "calls", Counting())
    journal.append(state, "resume", {"n": 1})
    assert calls == ["write", "journal.append"]


def test_outside_git_the_journal_is_in_the_ignored_local_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    st, _ = State.init(tmp_path / "state", "g")
    journal.append(st, "resume", {})
    assert journal.path(st) == str(tmp_path / "state" / ".local" / "journal" / "agent.jsonl")
    assert ".local/" in (tmp_path / "state" / ".gitignore").read_text()


def test_brief_resume_logs_in_the_journal_not_the_wal(state: State) -> None:
    wal_before = Path(state.wal_path).read_bytes()
    result = brief.resume(State.open(state.root), session_id="s1")
    assert Path(state.wal_path).read_bytes() == wal_before
    (read,) = lines(state)
    assert read == result.record and read["op"] == "resume" and read["data"]["session_id"] == "s1"
    assert read["data"]["confidence"] == result.confidence and read["data"]["chars"] == len(result.text)
    assert result.problems == []


def test_a_torn_tail_is_cut_and_the_chain_goes_on(state: State) -> None:
    first, _, _ = journal.append(state, "resume", {"n": 0})
    path = Path(journal.path(state))
    with path.open("ab") as f:
        f.write(b'{"actor":"agent","da')
    assert [r["data"] for r in journal.tail(state, 5)] == [{"n": 0}]  # readers leave the torn line out
    rec, repaired, why = journal.append(state, "resume", {"n": 1})
    assert why is None and repaired is not None and "torn" in repaired
    assert rec["prev"] == first["h"] and rec["seq"] == 2
    assert [r["data"] for r in lines(state)] == [{"n": 0}, {"n": 1}]


def test_a_last_record_that_only_lost_its_newline_is_kept(state: State) -> None:
    journal.append(state, "resume", {"n": 0})
    second, _, _ = journal.append(state, "resume", {"n": 1})
    path = Path(journal.path(state))
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    rec, repaired, _ = journal.append(state, "resume", {"n": 2})
    assert repaired is None and rec["prev"] == second["h"]
    assert [r["data"] for r in lines(state)] == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_a_journal_damaged_at_its_tail_is_moved_aside(state: State) -> None:
    """A damaged record before a torn last line: nothing at the tail can be trusted to chain to."""
    for n in range(3):
        journal.append(state, "resume", {"n": n})
    path = Path(journal.path(state))
    raw = path.read_bytes().splitlines(keepends=True)
    damaged = raw[0] + raw[1] + raw[2].replace(b'"n":2', b'"n":7') + b'{"actor":"ag'  # an edit, then a torn write
    path.write_bytes(damaged)
    assert [r["data"] for r in journal.tail(state, 5)] == []  # a bad line ends a read: nothing older is trusted
    rec, repaired, why = journal.append(state, "resume", {"n": 3})
    assert why is None and repaired is not None and "moved a damaged journal aside" in repaired
    assert rec["seq"] == 1 and rec["prev"] is None
    assert [r["data"] for r in lines(state)] == [{"n": 3}]
    assert (path.parent / "agent.jsonl.broken").read_bytes() == damaged


def test_damage_before_the_tail_ends_the_reads_there(state: State) -> None:
    for n in range(3):
        journal.append(state, "resume", {"n": n})
    path = Path(journal.path(state))
    raw = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(raw[0] + raw[1].replace(b'"n":1', b'"n":7') + raw[2])
    assert [r["data"] for r in journal.tail(state, 5)] == [{"n": 2}]
    rec, _, why = journal.append(state, "resume", {"n": 3})  # the chain goes on from the last record
    assert why is None and rec["prev"] == json.loads(raw[2])["h"]


def test_past_its_cap_the_journal_starts_a_new_generation(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "MAX_BYTES", 600)
    made = [journal.append(state, "resume", {"n": n, "pad": "x" * 100})[0] for n in range(8)]
    path = Path(journal.path(state))
    previous = path.with_name("agent.1.jsonl")
    assert previous.exists() and path.stat().st_size <= 600 + 400
    assert [r["seq"] for r in made] == list(range(1, 9))  # one chain across the generations
    assert all(b["prev"] == a["h"] for a, b in itertools.pairwise(made))
    held = len(lines(state)) + len(previous.read_bytes().splitlines())
    assert len(lines(state)) < held < 8  # the older generations are gone
    assert [r["data"]["n"] for r in journal.tail(state, 8)] == list(range(7, 7 - held, -1))  # read across both
    assert not path.with_name("agent.2.jsonl").exists()  # at most two files: the cap holds


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder-link"])
def test_a_journal_that_is_not_a_regular_file_is_never_followed(state: State, tmp_path: Path, kind: str) -> None:
    path = Path(journal.path(state))
    target = tmp_path / "target"
    if kind == "folder-link":  # the journal's folder is a link to another folder
        target.mkdir()
        path.parent.parent.mkdir(parents=True, exist_ok=True)  # the worktree's folder (the seen cache may be in it)
        path.parent.symlink_to(target)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"")
        if kind == "symlink":
            path.symlink_to(target)
        else:
            os.mkfifo(path)
    rec, _, why = journal.append(state, "resume", {"n": 0})
    assert why is not None and rec["op"] == "resume"  # said, never raised
    assert journal.tail(state, 5) == [] and journal.reads(state) == (None, None)
    assert (list(target.iterdir()) == []) if kind == "folder-link" else (target.read_bytes() == b"")
    result = brief.resume(State.open(state.root))  # the read goes on, and says once that it was not logged
    assert [p.code for p in result.problems] == ["journal-unwritten"]
    assert "this resume was not logged" in result.problems[0].message


def test_since_gives_the_records_from_a_time_newest_first(state: State) -> None:
    made = [journal.append(state, "resume", {"n": n})[0] for n in range(4)]
    assert [r["data"]["n"] for r in journal.since(state, made[2]["ts"])][:2] == [3, 2]
    assert [r["data"]["n"] for r in journal.since(state, None)] == [3, 2, 1, 0]
    assert journal.since(state, "9999") == []
    assert [r["data"]["n"] for r in journal.since(state, None, 2)] == [3, 2]


def test_read_since_asks_before_each_line_and_counts_what_it_skips(state: State) -> None:
    """read_since reads a line only when the caller asks for the next record, tells skip each line first, never
    decodes a line skip takes (a damaged one goes unseen), and counts it among the n."""
    for n in range(6):
        journal.append(state, "resume", {"n": n})
    path = journal.path(state)
    lines = Path(path).read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"n":3', b'"n":33')  # its hash no longer matches: decoding it would end the read
    Path(path).write_bytes(b"".join(lines))
    told: list[bytes] = []

    def skip(raw: bytes) -> bool:
        told.append(raw)
        return b'"n":33' in raw or b'"n":4' in raw

    reader = journal.read_since(state, None, 5, skip=skip)
    assert next(reader)["data"]["n"] == 5 and len(told) == 1  # nothing read ahead
    assert [r["data"]["n"] for r in reader] == [2, 1]  # 4 and 3 skipped, and counted: 5 lines in all
    assert len(told) == 5
    assert [r["data"]["n"] for r in journal.read_since(state, None, 5)] == [5, 4]  # decoded, 3 ends the records


def test_recent_decodes_a_line_only_when_a_reader_reaches_it(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    """journal.recent gives tail()'s records, each line decoded when first reached and once; `of` decodes only the
    lines that hold one of its ops as a record's op (a damaged line it passes over goes unseen, and only one it
    decodes ends its records), while iterating in order ends at a line that does not decode, as records() does."""
    journal.append(state, "ack", {"next": "old"})
    for n in range(5):
        journal.append(state, "resume", {"n": n, "note": '"op":"ack"'})  # the words in a string: escaped, no match
    journal.append(state, "ack", {"next": "new"})
    journal.append(state, "resume", {"n": 9})
    assert list(journal.recent(state, 6)) == journal.tail(state, 6)
    decoded: list[bytes] = []

    class Counting:
        BadRecord = wal.BadRecord

        @staticmethod
        def decode(raw: bytes) -> wal.Record:
            decoded.append(raw)
            return wal.decode(raw)

    monkeypatch.setattr(journal, "wal", Counting)
    recent = journal.recent(state, 16)
    assert next(iter(recent))["data"]["n"] == 9 and len(decoded) == 1  # nothing decoded ahead
    assert [r["data"]["next"] for r in recent.of("ack")] == ["new", "old"] and len(decoded) == 3
    assert [r["data"].get("n") for r in recent] == [9, None, 4, 3, 2, 1, 0, None] and len(decoded) == 8  # once each
    path = journal.path(state)
    lines = Path(path).read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"n":2', b'"n":22')  # its hash no longer matches
    Path(path).write_bytes(b"".join(lines))
    recent = journal.recent(state, 16)
    assert [r["data"]["next"] for r in recent.of("ack")] == ["new", "old"]  # passed over undecoded
    assert [r["data"].get("n") for r in recent] == [9, None, 4, 3]  # the damaged line ends the records
    assert [r["data"]["next"] for r in recent.of("ack")] == ["new", "old"]  # whatever another reader found
    lines[6] = lines[6].replace(b'"next":"new"', b'"next":"now"')  # the newer ack
    Path(path).write_bytes(b"".join(lines))
    assert list(journal.recent(state, 16).of("ack")) == []  # an ack line that does not decode ends its records


def test_the_fold_counts_the_resumes_since_the_last_one(state: State) -> None:
    assert journal.reads(state) == (None, None)
    for n in range(7):
        journal.append(state, "resume", {"session_id": f"s{n}", "chars": 100 + n, "confidence": "recovered"})
    got, mark = journal.reads(state)
    assert got is not None and got["count"] == 7 and mark == lines(state)[-1]["h"]
    assert [r["session_id"] for r in got["last"]] == ["s2", "s3", "s4", "s5", "s6"]  # the last five, oldest first
    assert got["last"][-1] == {
        "ts": lines(state)[-1]["ts"],
        "session_id": "s6",
        "chars": 106,
        "confidence": "recovered",
    }
    journal.folded(state, mark)
    assert journal.reads(state) == (None, None)  # nothing since
    journal.append(state, "resume", {"session_id": "\x1b[2Jevil\nline", "chars": True, "confidence": 3})
    got, _ = journal.reads(state)
    assert got is not None and got["count"] == 1
    (one,) = got["last"]
    assert one["chars"] is None and one["confidence"] is None  # untrusted: a value of the wrong type is dropped
    assert "\x1b" not in one["session_id"] and "\n" not in one["session_id"]


def test_a_checkpoint_carries_the_reads_and_marks_them_folded(state: State) -> None:
    brief.resume(State.open(state.root), session_id="a")
    brief.resume(State.open(state.root), session_id="b")
    out = State.open(state.root).checkpoint("the parser", "the printer")
    assert out.record is not None
    reads = out.record["data"]["reads"]
    assert reads["count"] == 2 and [r["session_id"] for r in reads["last"]] == ["a", "b"]
    assert records(state.root)[-1]["data"]["reads"] == reads  # in the WAL, committed with the work
    again = State.open(state.root).checkpoint("the printer", "ship")
    assert again.record is not None and "reads" not in again.record["data"]
    assert State.open(state.root).verify().ok


def _ref(path: str, **changes: object) -> dict[str, object]:
    return {
        "harness": "claude",
        "session_id": "s1",
        "host": "box",
        "transcript_size": 10,
        "transcript_path": path,
        **changes,
    }


def test_since_finds_the_transcripts_of_the_journals_reads_after_the_checkpoint(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """store/wal/since.py reads the journal's resumes since the checkpoint's time, merged by time with the WAL's
    compaction records (and an old resume record still in the WAL): newest first, one per path, at most three."""
    from rehydrate.store.wal import since

    ticks = itertools.count(1)  # one millisecond apart, whatever the machine's speed
    monkeypatch.setattr(wal, "now", lambda: f"2030-01-01T00:00:00.{next(ticks):03d}Z")

    journal.append(state, "resume", _ref("/t/before.jsonl"))  # before the checkpoint: not since it
    state.checkpoint(done="the tokenizer", next="binding powers")
    state.record("resume", _ref("/t/old-in-the-wal.jsonl"))  # written by an older version: still understood
    journal.append(state, "resume", _ref("/t/one.jsonl"))
    state.record("compaction", _ref("/t/two.jsonl", phase="pre"))
    journal.append(state, "resume", _ref("/t/three.jsonl", harness="codex"))
    with state.reading() as snap:
        found = since.find(state, snap)
    assert found.complete
    assert [(r.path, r.op, r.harness) for r in found.transcripts] == [
        ("/t/three.jsonl", "resume", "codex"),
        ("/t/two.jsonl", "compaction", "claude"),
        ("/t/one.jsonl", "resume", "claude"),
    ]
    assert found.records == 2  # the WAL's records after the checkpoint
    state.checkpoint(done="binding powers", next="the printer")
    with state.reading() as snap:
        assert since.find(state, snap).transcripts == []


def test_an_old_resume_record_in_the_wal_still_points_a_resumed_session(state: State, repo: Path) -> None:
    """_already_given reads the WAL as well: a brief logged there by an older version is still the one given."""
    from conftest import claude_event, run_hook

    session = str(claude_event(repo, "SessionStart")["session_id"])
    state.record("resume", {"session_id": session, "chars": 10})
    code, out, _ = run_hook("claude", claude_event(repo, "SessionStart", source="resume"), repo)
    pointer = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and f"WAL record {records(state.root)[-1]['seq']}" in pointer
    assert not os.path.exists(journal.path(state))  # a pointer logs nothing
