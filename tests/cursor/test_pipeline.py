"""cursor.pipeline: an open pipeline's inputs (its calls, checks, descriptors and errors have files of their own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rehydrate.cursor import Pipeline
from rehydrate.errors import RehydrateError


def test_a_batch_below_one_is_refused_with_its_field(tmp_path: Path) -> None:
    with pytest.raises(RehydrateError, match="at least 1") as info:
        Pipeline.open(tmp_path / "out.jsonl", tmp_path / "progress.json", batch=0)
    assert info.value.field == "batch" and "--" not in str(info.value)
