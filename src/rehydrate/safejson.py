"""JSON from untrusted input (hook stdin, state files, transcripts, pipeline outputs, harness settings).

The standard parser recurses once per nesting level: about a thousand `[` raise RecursionError, which is not a
ValueError and so escapes every `except ValueError` written for bad JSON. Here it is one: input nested too deeply
is bad input, named as such, never a traceback.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the hook path stays light
    from typing import Any


class TooDeep(ValueError):
    """JSON nested more deeply than the parser can follow."""


def loads(data: str | bytes | bytearray) -> Any:
    """json.loads, with nesting too deep for the parser raised as TooDeep (a ValueError)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None


def dumps_canonical(obj: object) -> bytes:
    """Sorted keys, no spaces, UTF-8; TooDeep for an object nested too deeply to encode."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None
