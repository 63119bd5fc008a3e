"""JSON from untrusted input (hook stdin, state files, transcripts, pipeline outputs, harness settings).

The standard parser recurses once per nesting level: about a thousand `[` raise RecursionError, which is not a
ValueError and so escapes every `except ValueError` written for bad JSON. Here it is one: input nested too deeply
is bad input, named as such, never a traceback.

The hook path's start-up: `import json` loads `re` and `enum` (json.decoder's whitespace pattern, json.encoder's
escapes), about as long as the interpreter's own start. The work itself is done by the standard library's C
accelerator `_json` (the scanner and encoder that json.loads and json.dumps call inside), called here with exactly
the settings json passes it, so the values and the bytes are the same (tests/test_safejson.py checks it against
the json module). Anything but a success of that path (bad JSON, a type JSON has no form for, a BOM, UTF-16 input)
is done again by the json module itself, loaded then: its answer or its exception (JSONDecodeError with its message)
is the one given. Without `_json` (another implementation), the json module does all of it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"  # json.decoder.WHITESPACE: what may stand around a document


class TooDeep(ValueError):
    """JSON nested more deeply than the parser can follow."""


def __getattr__(name: str) -> Any:  # `except safejson.JSONDecodeError`: json is loaded when an error is raised
    if name == "JSONDecodeError":
        import json

        return json.JSONDecodeError
    raise AttributeError(name)


class _Context:
    """What json.JSONDecoder() hands the C scanner: json.loads's defaults (strict, no hooks, float, int)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan: Callable[[str, int], tuple[Any, int]] | None = (
    _json.make_scanner(_Context()) if _json is not None else None  # type: ignore[arg-type, unused-ignore]
)


def _text(data: str | bytes | bytearray) -> str | None:
    """The text json.loads would parse, when it is plain (UTF-8 without a BOM, or str); else None."""
    if isinstance(data, str):
        return None if data.startswith("\ufeff") else data
    if not isinstance(data, (bytes, bytearray)):
        return None
    head = data[:4]
    if b"\x00" in head or head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return None  # json.detect_encoding: a BOM or UTF-16/32
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


def _fast_loads(data: str | bytes | bytearray) -> tuple[bool, Any]:
    """(True, the value) when the C scanner parses all of data as json.loads would; (False, None) otherwise."""
    text = _text(data) if _scan is not None else None
    if text is None or _scan is None:
        return False, None
    try:
        obj, end = _scan(text, len(text) - len(text.lstrip(_WHITESPACE)))
    except RecursionError:
        raise
    except Exception:  # StopIteration (no value), JSONDecodeError, a number too long: json.loads says it
        return False, None
    if text[end:].lstrip(_WHITESPACE):  # "Extra data"
        return False, None
    return True, obj


def loads(data: str | bytes | bytearray) -> Any:
    """json.loads, with nesting too deep for the parser raised as TooDeep (a ValueError)."""
    try:
        done, obj = _fast_loads(data)
        if done:
            return obj
        import json

        return json.loads(data)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None


def scan(text: str, at: int) -> tuple[Any, int]:
    """The JSON value that starts at text[at] (after any whitespace): (the value, the index just past it), as
    json.JSONDecoder.raw_decode gives; ValueError when there is no whole value there (without the C scanner, the
    json module's JSONDecodeError). What reads a document's first values without parsing the rest of it (a hook's
    multi-megabyte input, cut at a window) calls this once per value: a cut value costs no import of json."""
    n = len(text)
    while at < n and text[at] in _WHITESPACE:
        at += 1
    try:
        if _scan is not None:
            try:
                obj, end = _scan(text, at)
                return obj, end
            except RecursionError:
                raise
            except Exception:  # no value there, or a bad or cut one (the C scanner raises SystemError for bad JSON
                # while json.decoder is not loaded, as in _fast_loads): said without loading json to say why
                raise ValueError(f"no whole JSON value at {at}") from None
        import json

        obj, end = json.JSONDecoder().raw_decode(text, at)
        return obj, end
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None


def _not_serializable(o: object) -> Any:
    raise TypeError  # the json module, called again, raises its own TypeError with its message


# (key separator, item separator, sort_keys, ensure_ascii) -> the C encoder json.dumps would build for them
_encoders: dict[tuple[str, str, bool, bool], Any] = {}


def _dumps(obj: object, key_sep: str, item_sep: str, sort_keys: bool, ensure_ascii: bool) -> str:
    """json.dumps(obj, separators=(item_sep, key_sep), sort_keys=sort_keys, ensure_ascii=ensure_ascii)."""
    if _json is not None:
        escape = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
        if isinstance(obj, str):  # JSONEncoder.encode does the same
            return str(escape(obj))
        key = (key_sep, item_sep, sort_keys, ensure_ascii)
        encoder = _encoders.pop(key, None)  # taken while in use: markers are per encoding (check_circular)
        if encoder is None:  # JSONEncoder.iterencode's call, with its defaults: skipkeys False, allow_nan True
            encoder = _json.make_encoder({}, _not_serializable, escape, None, key_sep, item_sep, sort_keys, False, True)
        try:
            text = "".join(encoder(obj, 0))
        except RecursionError:
            raise
        except Exception:  # a type JSON has no form for, a circular reference: json.dumps says it
            pass
        else:
            _encoders[key] = encoder
            return text
    import json

    return json.dumps(obj, separators=(item_sep, key_sep), sort_keys=sort_keys, ensure_ascii=ensure_ascii)


def dumps(obj: object) -> str:
    """json.dumps(obj), its default settings (RecursionError as json.dumps raises it)."""
    return _dumps(obj, ": ", ", ", False, True)


def canonical_text(obj: object) -> str:
    """Sorted keys, no spaces, as text (compared with a line's text without encoding it); TooDeep as below."""
    try:
        return _dumps(obj, ":", ",", True, False)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None


def dumps_canonical(obj: object) -> bytes:
    """Sorted keys, no spaces, UTF-8; TooDeep for an object nested too deeply to encode."""
    try:
        return _dumps(obj, ":", ",", True, False).encode("utf-8")
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None
