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

    from rehydrate import transcripts

    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"user","message":{"content":"hi"}}\n')
    read = transcripts.read
    during: list[bool] = []
    monkeypatch.setattr(transcripts, "read", lambda *a, **k: during.append(gc.isenabled()) or read(*a, **k))
    assert gc.isenabled()
    assert audit.report([str(path)])["summary"]["sessions"] == 1
    assert during == [False] and gc.isenabled()
    monkeypatch.setattr(transcripts, "read", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        audit.report([str(path)])
    assert gc.isenabled()
    monkeypatch.setattr(transcripts, "read", read)
    gc.disable()
    try:
        audit.report([str(tmp_path / "gone.jsonl")])
        assert not gc.isenabled()  # left off, as it was found
    finally:
        gc.enable()
