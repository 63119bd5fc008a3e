"""transcripts.model: what every format returns; a tool call's token for repeats, and the stamps a record's time
becomes."""

from __future__ import annotations

from rehydrate.transcripts import jsonl, model
from rehydrate.transcripts.model import stamp


def test_a_calls_token_is_equal_exactly_when_its_canonical_key_is() -> None:
    """ToolCall.same (orjson's sorted text, cheaper) partitions calls as their canonical keys (json.dumps) do, and
    gives that key back when asked."""
    deep: object = "x"
    for _ in range(400):  # deeper than orjson writes, not than json.dumps does
        deep = [deep]
    values = [{"a": 1, "b": [1.0, "é"]}, {"b": [1.0, "é"], "a": 1}, {"a": 1, "b": [1, "é"]}, {"a": True}, {"a": 1}]
    values += [{"x": -0.0}, {"x": 0.0}, {"path": "a\u2028b"}, {"d": deep}, {"d": deep}, {"d": [deep]}, {}, {"": None}]
    calls = []
    for name in ("Edit", "Write"):
        for value in values:
            same = model.same_input(name, value)
            calls.append((name + " " + jsonl.canonical(value), model.ToolCall(None, name, [], None, 1, None, same)))
    for key, call in calls:
        assert call.key == key
        for other_key, other in calls:
            assert (call.same == other.same) is (key == other_key), (key[:40], other_key[:40])


def test_stamps_are_normalised_as_strings() -> None:
    assert stamp("2026-01-25T10:32:00.707Z") == "2026-01-25T10:32:00.707Z"
    assert stamp("2026-01-25T10:32:00.707123Z") == "2026-01-25T10:32:00.707Z"
    assert stamp("2026-01-25T10:32:00+00:00") == "2026-01-25T10:32:00.000Z"
    assert stamp("2026-01-25T10:32:00.5Z") == "2026-01-25T10:32:00.500Z"
    assert stamp(None) is None and stamp("yesterday") is None
