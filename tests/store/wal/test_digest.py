"""A long pass decodes with orjson (digest.long_pass): it must say of every line exactly what json's path says, the
record or the same BadRecord message, since json's canonical form is the one a record's hash was sealed over."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rehydrate import safejson
from rehydrate.store.wal import digest
from rehydrate.store.wal import record as wal

# What a line can hold: every JSON value, floats of every size (the small ones orjson writes otherwise), integers
# beyond 64 bits, any string (control characters, astral planes, lone surrogates as json writes them).
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


def _line(data: dict[str, Any], how: str) -> bytes:
    rec = wal.seal({"v": 1, "seq": 1, "ts": "t", "actor": "a", "op": "note", "data": data, "views": {}, "prev": None})
    if how == "json":
        return wal.encode(rec)[:-1]
    if how == "orjson":  # what orjson writes: canonical for json too, but for a float below 1e-4
        return orjson.dumps(rec, option=orjson.OPT_SORT_KEYS)
    return json.dumps(rec, sort_keys=True).encode()  # spaces: never canonical


def _both(line: bytes) -> tuple[object, object]:
    """decode(line) by json's path, then by orjson's: each a record or its BadRecord's message."""
    out: list[object] = []
    saved = digest.CANONICAL[0]
    try:
        for fast in (None, digest._orjson_canonical()):
            digest.CANONICAL[0] = fast
            try:
                out.append(wal.decode(line))
            except wal.BadRecord as e:
                out.append(str(e))
    finally:
        digest.CANONICAL[0] = saved
    return out[0], out[1]


@settings(max_examples=400, deadline=None)
@given(
    data=st.dictionaries(st.text(max_size=6), _VALUES, max_size=4), how=st.sampled_from(["json", "orjson", "spaced"])
)
def test_orjson_decodes_every_line_as_json_does(data: dict[str, Any], how: str) -> None:
    try:
        line = _line(data, how)
    except (TypeError, ValueError):  # orjson cannot write it (an integer beyond 64 bits, a lone surrogate)
        return
    slow, fast = _both(line)
    assert fast == slow
    assert type(fast) is type(slow)


@pytest.mark.parametrize("value", [1.5e-05, 1e-07, -3e-300, 5e-324, 2**64, -(2**63) - 1])
def test_a_value_orjson_writes_otherwise_is_judged_by_json(value: float) -> None:
    """orjson writes 0.000015 and 1e-7 where json writes 1.5e-05 and 1e-07: such a line, hash and all, is not
    canonical, and orjson's own round trip must not say it is (fails without the small-float guard)."""
    rec = wal.seal(
        {"v": 1, "seq": 1, "ts": "t", "actor": "a", "op": "note", "data": {"x": 1}, "views": {}, "prev": None}
    )
    rec = {**rec, "data": {"x": value}}
    body = {k: v for k, v in rec.items() if k != "h"}
    try:
        line = orjson.dumps(
            {**body, "h": digest.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))}, option=orjson.OPT_SORT_KEYS
        )
    except TypeError:  # beyond 64 bits: orjson cannot write it, json's line then
        line = wal.encode(wal.seal(body))[:-1]
    slow, fast = _both(line)
    assert fast == slow
    if value in (1.5e-05, 1e-07):
        assert slow == "not in canonical form (edited by hand?)"


def test_a_long_pass_checks_a_canonical_line_without_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """After long_pass, a canonical record is parsed and checked by orjson: json's encoder is not called (fails when
    decode ignores digest.CANONICAL); an edited line still goes to json's path and is named as before."""
    monkeypatch.setattr(digest, "CANONICAL", [None])
    digest.long_pass()
    assert digest.CANONICAL[0] is not None
    line = _line({"k": "v"}, "json")
    calls: list[object] = []
    real = safejson.canonical_text
    monkeypatch.setattr(safejson, "canonical_text", lambda o: calls.append(o) or real(o))
    assert wal.decode(line)["data"] == {"k": "v"}
    assert calls == []
    with pytest.raises(wal.BadRecord, match="not in canonical form"):
        wal.decode(line.replace(b'"k":"v"', b'"k": "v"'))
    assert len(calls) == 1
