"""What the WAL holds since the last checkpoint (store/wal/since.py), read backwards and bounded (store/wal/back.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rehydrate.store.state import State
from rehydrate.store.wal import back as walback
from rehydrate.store.wal import lines as wallines
from rehydrate.store.wal import record as wal
from rehydrate.store.wal import since


def _since(state: State, max_bytes: int = since.HOOK_BYTES) -> since.Since:
    with state.reading() as snap:
        return since.find(state, snap, max_bytes)


def _ref(**changes: object) -> dict[str, Any]:
    data: dict[str, Any] = {"harness": "claude", "session_id": "s1", "host": "box", "transcript_size": 10}
    data["transcript_path"] = "/t/one.jsonl"
    data.update(changes)
    return data


def test_read_back_gives_every_record_newest_first_with_its_offset(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        state.record("note", {"text": f"note {i} " + "x" * (i * 37)})
    monkeypatch.setattr(walback, "FIRST_CHUNK", 100)  # many chunks, lines split across them
    monkeypatch.setattr(walback, "MAX_CHUNK", 700)
    back = list(walback.Back(state.wal_path, 1 << 30))
    forward = list(wallines.records(state.wal_path))
    assert [rec for _, rec in back] == forward[::-1]
    raw = Path(state.wal_path).read_bytes()
    for off, rec in back:
        assert raw[off:].split(b"\n", 1)[0] == wal.encode(rec)[:-1]


def test_read_back_leaves_out_a_torn_last_line_and_stops_at_a_damaged_one(state: State) -> None:
    count = len(list(wallines.records(state.wal_path)))
    with open(state.wal_path, "ab") as f:
        f.write(b'{"actor":"agent","da')  # a write in progress
    assert len(list(walback.Back(state.wal_path, 1 << 20))) == count
    lines = Path(state.wal_path).read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"seq":2', b'"seq":7')  # an edited record, not the last
    Path(state.wal_path).write_bytes(b"\n".join(lines))
    with pytest.raises(wal.BadRecord, match="damaged record at byte"):
        list(walback.Back(state.wal_path, 1 << 20))


def test_read_back_reads_at_most_max_bytes(state: State) -> None:
    for i in range(50):
        state.record("note", {"text": f"note {i} " + "y" * 500})
    back = walback.Back(state.wal_path, 4000)
    got = list(back)
    assert back.cut and back.read == 4000
    assert 0 < len(got) < 10
    whole = walback.Back(state.wal_path, 1 << 30)
    assert len(list(whole)) > 50 and not whole.cut


def test_since_holds_the_last_checkpoint_and_what_the_hooks_recorded_after_it(state: State) -> None:
    state.handoff("old note, before the checkpoint")
    state.checkpoint(done="the tokenizer", next="binding powers")
    state.handoff("a first note after the checkpoint")
    state.record("resume", _ref(transcript_path="/t/one.jsonl"))
    state.record("compaction", _ref(phase="pre", transcript_path="/t/two.jsonl", capture={"v": 1, "n": 1}))
    state.handoff("new note, after the checkpoint")
    state.record("compaction", _ref(phase="pre", transcript_path="/t/two.jsonl", capture={"v": 1, "n": 2}))
    state.record("precompress", _ref(transcript_path="/t/three.jsonl", transcript_size=None, harness="gemini"))
    found = _since(state)
    assert found.complete and found.problem is None
    assert found.checkpoint is not None and found.checkpoint["op"] == "checkpoint"
    assert (found.next, found.done, found.seq) == ("binding powers", "the tokenizer", found.checkpoint["seq"])
    assert found.ts == found.checkpoint["ts"] and found.git == found.checkpoint["git"]
    assert found.handoff is not None and found.handoff["data"]["text"] == "new note, after the checkpoint"
    assert [c["data"]["capture"]["n"] for c in found.compactions] == [2, 1]
    assert found.capture == {"v": 1, "n": 2}  # the newest compaction's
    refs = [(r.path, r.op, r.harness, r.size) for r in found.transcripts]
    assert refs == [
        ("/t/three.jsonl", "precompress", "gemini", None),
        ("/t/two.jsonl", "compaction", "claude", 10),
        ("/t/one.jsonl", "resume", "claude", 10),
    ]
    assert found.records == 6


def test_a_handoff_before_the_checkpoint_is_not_one_since_it(state: State) -> None:
    state.handoff("written first")
    state.checkpoint(done="a", next="b")
    found = _since(state)
    assert found.complete and found.handoff is None and found.records == 0


def test_untrusted_references_are_kept_as_data_and_bounded(state: State) -> None:
    for i in range(6):
        state.record("resume", _ref(transcript_path=f"/t/{i}.jsonl", transcript_size=-5, host=7))
    state.record("resume", {"transcript_path": 12})
    found = _since(state)
    assert [r.path for r in found.transcripts] == ["/t/5.jsonl", "/t/4.jsonl", "/t/3.jsonl"]
    assert {(r.size, r.host) for r in found.transcripts} == {(None, None)}


def test_past_the_cap_the_checkpoint_comes_from_99s_header(state: State) -> None:
    state.checkpoint(done="the tokenizer", next="binding powers")
    seq = _since(state).seq
    for i in range(40):
        state.record("note", {"text": f"note {i} " + "z" * 1000})
    found = _since(state, max_bytes=8000)
    assert not found.complete and found.checkpoint is None and found.git is None
    assert found.problem == "the last 8,000 bytes of the WAL hold no checkpoint"
    assert (found.seq, found.next, found.done) == (seq, "binding powers", "the tokenizer")
    assert found.ts is not None and found.ts.startswith("20")


def test_a_rotated_log_reads_back_to_the_checkpoint_its_rotate_record_carries(state: State) -> None:
    state.checkpoint(done="the tokenizer", next="binding powers")
    seq = _since(state).seq
    state.rotate()
    state.record("note", {"text": "after the rotation"})
    found = _since(state)
    assert found.complete and (found.seq, found.next) == (seq, "binding powers")
    assert found.records == 1


def test_no_snapshot_no_read(state: State) -> None:
    found = since.find(state, None)
    assert (found.complete, found.checkpoint, found.records) == (False, None, 0)


def test_ref_fields_give_what_a_recovery_needs_to_find_the_transcript_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 3)
    fields = since.ref_fields("claude", str(path))
    assert fields["harness"] == "claude"
    assert fields["host"] and fields["host"].isprintable()
    assert (fields["transcript_path"], fields["transcript_size"]) == (str(path), 27)
    # not yet written, a folder, or no path at all: the size is unknown, the path kept only when it is one
    assert since.ref_fields("codex", str(tmp_path / "missing"))["transcript_size"] is None
    assert since.ref_fields("codex", str(tmp_path))["transcript_size"] is None
    assert "transcript_path" not in since.ref_fields("gemini", None)
    assert "transcript_path" not in since.ref_fields("gemini", "a\0b")


def _forge(state: State, op: str, data: object, **fields: object) -> None:
    """Append a record written by hand and sealed (its own hash and shape right, its chain not checked by the
    back-scan): what a git pull can bring. Fields the shape leaves open may have any type."""
    last = list(wallines.records(state.wal_path))[-1]
    rec: dict[str, Any] = {"actor": last["actor"], "data": data, "op": op, "prev": last["h"], "seq": last["seq"] + 1}
    rec.update(ts=last["ts"], v=1, views={})
    rec.update(fields)
    with open(state.wal_path, "ab") as f:
        f.write(wal.encode(wal.seal(rec)))


def test_a_forged_checkpoint_of_wrong_types_is_held_as_nothing_rather_than_trusted(state: State) -> None:
    state.checkpoint(done="the tokenizer", next="binding powers")
    _forge(state, "checkpoint", {"goal": "g", "next": "  ", "done": ""}, git=["not", "a", "dict"])
    _forge(state, "compaction", {"capture": ["a list"], "transcript_path": "/t/x.jsonl", "transcript_size": True})
    with state.reading() as snap:
        found = since.find(state, snap)
    assert found.complete and found.checkpoint is not None and found.checkpoint["git"] == ["not", "a", "dict"]
    assert (found.next, found.done, found.git) == (None, None, None)
    assert found.capture is None and [r.size for r in found.transcripts] == [None]


def test_a_record_damaged_under_the_reader_ends_the_back_scan_and_says_why(state: State) -> None:
    state.checkpoint(done="the tokenizer", next="binding powers")
    seq = _since(state).seq
    state.record("note", {"text": "one"})
    state.record("note", {"text": "two"})
    with state.reading() as snap:  # verified; then changed before the back-scan (another writer, a git pull)
        lines = Path(state.wal_path).read_bytes().split(b"\n")
        lines[-3] = lines[-3].replace(b'"one"', b'"ONE"')  # its hash no longer matches
        Path(state.wal_path).write_bytes(b"\n".join(lines))
        found = since.find(state, snap)
    assert not found.complete and found.checkpoint is None
    assert found.problem is not None and "damaged record at byte" in found.problem
    assert (found.seq, found.next) == (seq, "binding powers")  # from 99, as reconciliation verified it


def _decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The offsets of the lines the back-scan decodes, from now on."""
    seen: list[int] = []
    real = walback.decode

    def spy(raw: bytes, offset: int) -> wal.Record:
        seen.append(offset)
        return real(raw, offset)

    monkeypatch.setattr(walback, "decode", spy)
    return seen


def test_resume_records_piled_up_since_the_checkpoint_are_not_each_decoded(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every SessionStart writes a resume record: with 200 sessions since the checkpoint, the back-scan decodes the
    few records that can still change what it finds (the newest of each transcript path, the checkpoint, the
    handoff and compactions among them), not the 200: the hook's cost must not grow with the sessions since."""
    state.checkpoint(done="the tokenizer", next="binding powers")
    state.record("resume", _ref(transcript_path="/t/old.jsonl"))
    state.handoff("a note among the sessions")
    for i in range(200):
        state.record("resume", _ref(transcript_path="/t/one.jsonl" if i % 2 else "/t/two.jsonl", session_id=f"s{i}"))
    state.record("compaction", _ref(phase="pre", transcript_path="/t/two.jsonl", capture={"v": 1}))
    state.record("resume", {"chars": 1})  # names no transcript
    decoded = _decoded(monkeypatch)
    found = _since(state)
    assert found.complete and found.problem is None and found.records == 204
    assert found.handoff is not None and found.handoff["data"]["text"] == "a note among the sessions"
    assert found.capture == {"v": 1} and len(found.compactions) == 1
    assert [(r.path, r.op) for r in found.transcripts] == [
        ("/t/two.jsonl", "compaction"),
        ("/t/one.jsonl", "resume"),
        ("/t/old.jsonl", "resume"),
    ]
    assert len(decoded) <= 6  # the compaction, one resume of /t/one, the handoff, /t/old, the checkpoint


def test_a_resume_line_that_holds_another_op_or_a_new_path_is_decoded(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The byte test skips only what cannot count: a resume record naming a path not held yet is read, and a record
    whose line holds another `"op":"` (a rotate's carried checkpoint, say) is decoded whatever else it holds."""
    state.checkpoint(done="the tokenizer", next="binding powers")
    for i in range(5):
        state.record("resume", _ref(transcript_path=f"/t/{i}.jsonl"))
        state.record("resume", _ref(transcript_path="/t/0.jsonl", nested={"op": "resume"}))
    decoded = _decoded(monkeypatch)
    found = _since(state)
    assert [r.path for r in found.transcripts] == ["/t/0.jsonl", "/t/4.jsonl", "/t/3.jsonl"]
    assert found.records == 10 and len(decoded) == 1 + 5 + 2  # checkpoint, every nested-op line, /t/4 and /t/3


def test_resume_records_piled_up_in_the_journal_are_not_each_decoded(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each session start logs its resume record in the journal: with a hundred sessions since the checkpoint, only
    the lines that can add a transcript reference are decoded (the newest of each path, at most MAX_TRANSCRIPTS
    paths), and what since finds is what decoding every one of the MAX_READS would find."""
    from rehydrate.store.local import journal

    state.checkpoint(done="the tokenizer", next="binding powers")
    journal.append(state, "resume", _ref(transcript_path="/t/old.jsonl"))
    journal.append(state, "precompress", _ref(transcript_path="/t/gemini.json"))
    for i in range(100):
        journal.append(state, "resume", _ref(transcript_path="/t/one.jsonl", session_id=f"s{i}"))
        journal.append(state, "resume", {"chars": 1})  # names no transcript
    state.record("compaction", _ref(phase="pre", transcript_path="/t/two.jsonl"))
    whole = since._Held.skip
    monkeypatch.setattr(since._Held, "skip", lambda self, raw: False)  # every line decoded: the reference
    wanted = [(r.path, r.op) for r in _since(state).transcripts]
    monkeypatch.setattr(since._Held, "skip", whole)
    decoded: list[bytes] = []
    real = wal.decode

    def spy(raw: bytes) -> Any:
        decoded.append(raw)
        return real(raw)

    monkeypatch.setattr(wal, "decode", spy)
    found = _since(state)
    assert (
        [(r.path, r.op) for r in found.transcripts]
        == wanted
        == [
            ("/t/two.jsonl", "compaction"),
            ("/t/one.jsonl", "resume"),
        ]
    )  # /t/old.jsonl and Gemini's note are past the MAX_READS newest lines of the journal
    assert len(decoded) <= 3, len(decoded)  # the journal's newest /t/one.jsonl (and what the WAL decodes)
