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
