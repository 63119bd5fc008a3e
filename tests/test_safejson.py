"""safejson parses and encodes through json's own C accelerator (`_json`), without importing json (and its `re`):
every value it gives, every byte it writes and every error it raises must be json.loads's and json.dumps's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rehydrate import safejson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**5000), max_value=10**5000)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.text(st.characters(codec="utf-8") | st.sampled_from('\x00\x1f"\\/\u2028\ud800\udfff\ufeff'))
)
keys = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(), inner, max_size=5)
        | st.dictionaries(keys, inner, max_size=4)  # mixed keys: sort_keys raises TypeError, as json does
        | st.sets(st.integers(), max_size=2)  # no JSON form: json's TypeError
    ),
    max_leaves=20,
)
JSONISH = st.sampled_from(list('{}[]:, \t\n\r"\\/0123456789-+.eEtrufalsnNIinfy\u00e9\ufeffxu'))


def outcome(f: Callable[[], Any]) -> tuple[str, Any]:
    """What calling f gives, comparable: the value's repr (NaN equals NaN, 1 is not 1.0 nor True, key order kept),
    or the exception's type, message and (for JSONDecodeError) position."""
    try:
        return "value", repr(f())
    except Exception as e:
        return "error", (type(e), str(e), getattr(e, "pos", None))


def same_loads(data: str | bytes) -> None:
    assert outcome(lambda: safejson.loads(data)) == outcome(lambda: json.loads(data)), data


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from([{}, {"indent": 2}, {"separators": (",", ":")}, {"ensure_ascii": False}]))
def test_loads_is_json_loads_on_documents(value: Any, options: dict[str, Any]) -> None:
    try:
        text = json.dumps(value, **options)
    except (TypeError, ValueError):
        return
    same_loads(text)
    same_loads(" \n" + text + "\t\r ")
    same_loads(text + " x")  # Extra data
    same_loads(text[: len(text) // 2])  # cut short
    same_loads(text.encode("utf-8", "surrogatepass"))
    for codec in ("utf-8-sig", "utf-16", "utf-16-le", "utf-32-be"):
        same_loads(text.encode(codec, "surrogatepass"))


@settings(max_examples=800, deadline=None)
@given(st.text(JSONISH, max_size=30) | st.text(max_size=10))
def test_loads_is_json_loads_on_any_text(text: str) -> None:
    same_loads(text)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=24))
def test_loads_is_json_loads_on_any_bytes(data: bytes) -> None:
    same_loads(data)
    same_loads(b'["' + data + b'"]')


@settings(max_examples=600, deadline=None)
@given(values)
def test_dumps_are_json_dumps(value: Any) -> None:
    assert outcome(lambda: safejson.dumps(value)) == outcome(lambda: json.dumps(value))
    canonical = outcome(lambda: safejson.dumps_canonical(value))
    assert canonical == outcome(
        lambda: json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    )


def test_errors_are_json_errors() -> None:
    loop: list[Any] = []
    loop.append(loop)
    for value in (loop, {"a": loop}, object(), {(1, 2): 3}, {1: 2, "a": 3}):
        assert outcome(lambda v=value: safejson.dumps(v)) == outcome(lambda v=value: json.dumps(v))
        after = outcome(lambda: safejson.dumps_canonical({"b": [1, 2]}))  # a failed encoding leaves nothing behind
        assert after == ("value", repr(b'{"b":[1,2]}'))
    for text in ("", " ", "{", '{"a" 1}', "[1,]", "\ufeff[]", "1 2", '"\x01"', "1" * 5000, "NaN", "-Infinity"):
        same_loads(text)
    with pytest.raises(json.JSONDecodeError):
        safejson.loads("[1,]")
    assert safejson.JSONDecodeError is json.JSONDecodeError


def test_nesting_too_deep_is_too_deep() -> None:
    for text in ("[" * 200_000, '{"a":' * 200_000):
        with pytest.raises(safejson.TooDeep):
            safejson.loads(text)
    deep: list[Any] = []
    for _ in range(200_000):
        deep = [deep]
    with pytest.raises(safejson.TooDeep):
        safejson.dumps_canonical(deep)


def test_without_the_accelerator_the_json_module_does_it() -> None:
    probe = (
        "import sys; sys.modules['_json'] = None\n"
        "from rehydrate import safejson\n"
        "assert safejson._json is None and safejson._scan is None\n"
        "assert safejson.loads(b' {\"a\": [1.5, null]} ') == {'a': [1.5, None]}\n"
        "assert safejson.dumps_canonical({'b': 'é', 'a': 1}) == '{\"a\":1,\"b\":\"é\"}'.encode()\n"
        "assert safejson.dumps({'a': 'é'}) == '{\"a\": \"\\\\u00e9\"}'\n"
        "try:\n    safejson.loads('[' * 100000)\nexcept safejson.TooDeep:\n    pass\n"
        "else:\n    raise AssertionError('not TooDeep')\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_parsing_and_encoding_do_not_load_json() -> None:
    probe = (
        "import sys\n"
        "from rehydrate import safejson\n"
        "safejson.loads(b'{\"a\": [1, 2.5, \"x\", null, true]}'); safejson.loads('[]')\n"
        "safejson.dumps({'a': 1}); safejson.dumps_canonical({'a': [1.5, 'y']})\n"
        "print(sorted({'json', 'json.decoder', 'json.encoder', 're', 'enum'} & set(sys.modules)))\n"
    )
    src = os.path.dirname(os.path.dirname(os.path.abspath(safejson.__file__)))  # -S: no site, so no editable path
    env = {**os.environ, "PYTHONPATH": src}
    r = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert r.stdout.strip() == "[]"
