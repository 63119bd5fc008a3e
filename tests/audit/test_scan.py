"""audit.report (audit/scan.py): the report's data, with progress given to a callback, never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate import JSON_VERSION, audit


def test_progress_goes_to_the_callback_and_nothing_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for i in range(3):
        path = tmp_path / f"s{i}.jsonl"
        path.write_text('{"type":"user","message":{"content":"hi"}}\n')
        paths.append(str(path))
    paths.append(str(tmp_path / "gone.jsonl"))
    calls: list[tuple[int, int, str]] = []
    data = audit.report(paths, progress=lambda n, total, path: calls.append((n, total, path)))
    assert calls == [(n, 4, p) for n, p in enumerate(paths, 1)]
    assert data["version"] == JSON_VERSION and data["summary"]["files"] == 4 and data["summary"]["sessions"] == 3
    assert [e["path"] for e in data["errors"]] == [paths[-1]]
    assert audit.report(paths) == data  # the same report without a callback
    assert capsys.readouterr() == ("", "")


def test_the_cyclic_collector_rests_while_the_files_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What audit reads holds no cycles: the collector would only walk every record kept, over and over (7% of a
    500 MB audit). It is back as it was afterwards, also when a read fails."""
    import gc

    from rehydrate.transcripts import reader

    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"user","message":{"content":"hi"}}\n')
    read = reader.read
    during: list[bool] = []
    monkeypatch.setattr(reader, "read", lambda *a, **k: during.append(gc.isenabled()) or read(*a, **k))
    assert gc.isenabled()
    assert audit.report([str(path)])["summary"]["sessions"] == 1
    assert during == [False] and gc.isenabled()
    monkeypatch.setattr(reader, "read", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        audit.report([str(path)])
    assert gc.isenabled()
    monkeypatch.setattr(reader, "read", read)
    gc.disable()
    try:
        audit.report([str(tmp_path / "gone.jsonl")])
        assert not gc.isenabled()  # left off, as it was found
    finally:
        gc.enable()


def test_a_calls_token_is_made_only_for_calls_that_may_repeat_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ToolCall.same (orjson's sorted text of the input) is made when symptoms asks for it: never in a session
    without a compaction, and after one only for calls whose name and files some call on the other side shares."""
    import json

    from rehydrate.transcripts import model

    made: list[str] = []
    same_input = model.same_input
    monkeypatch.setattr(model, "same_input", lambda name, value: made.append(name) or same_input(name, value))

    def use(n: int, name: str, path: str) -> str:
        block = {"type": "tool_use", "id": f"t{n}", "name": name, "input": {"file_path": path}}
        return json.dumps({"type": "assistant", "message": {"id": f"m{n}", "content": [block]}})

    boundary = json.dumps({"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}})
    calls = [use(1, "Read", "a"), use(2, "Edit", "b"), use(3, "Read", "c")]
    again = [use(4, "Read", "a"), use(5, "Edit", "d"), use(6, "Grep", "a")]
    plain, compacted = tmp_path / "plain.jsonl", tmp_path / "compacted.jsonl"
    plain.write_text("\n".join(calls + again) + "\n")
    compacted.write_text("\n".join([*calls, boundary, *again]) + "\n")
    assert audit.report([str(plain)])["sessions"][0]["tool_calls"] == 6 and made == []
    data = audit.report([str(compacted)])
    assert data["sessions"][0]["compactions"][0]["repeated_calls"] == 1
    assert made == ["Read", "Read"]  # Read a, before and after; Edit b, Read c, Edit d and Grep a repeat nothing
