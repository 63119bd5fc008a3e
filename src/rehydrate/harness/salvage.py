"""The fields that can still be found in a hook's input that does not parse (cut short, too large, nested too
deeply): string values found whole, searched for as bytes, never executed or evaluated."""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The string fields an unreadable input is searched for: the event's name and, for a tool event, its target.
SALVAGED = ("hook_event_name", "tool_name", "cwd", "source", "trigger", "session_id", "transcript_path")
SALVAGED_INPUT = ("file_path", "notebook_path", "command")
_VALUE = rb'\s*:\s*"'  # after a key: the start of its string value


def salvage(head: bytes, tail: bytes = b"") -> dict[str, Any]:
    """The string fields of SALVAGED (and of SALVAGED_INPUT, under "tool_input") found whole in an input that does
    not parse (cut short, too large, nested too deeply). A tool_input field found only cut short is named in
    tool_input["cut"]."""
    event: dict[str, Any] = {}
    tool_input: dict[str, Any] = {}
    cut: list[str] = []
    for key in SALVAGED + SALVAGED_INPUT:
        value, was_cut = _field(head, key)
        if value is None and tail:
            value, more = _field(tail, key, from_start=False)
            was_cut = was_cut or more
        if value is not None:
            (tool_input if key in SALVAGED_INPUT else event)[key] = value
        elif was_cut and key in SALVAGED_INPUT:
            cut.append(key)
    if tool_input or cut or b'"tool_input"' in head or b'"tool_input"' in tail:
        event["tool_input"] = {**tool_input, "cut": cut}
    if not os.path.isdir(event.get("cwd", "")):
        event.pop("cwd", None)
    return event


def _field(data: bytes, key: str, from_start: bool = True) -> tuple[str | None, bool]:
    """The first whole string value of `"key": "..."` in data where the key is not text inside a string; and
    whether such a value was found cut short by the end of data. from_start: data is the input's beginning (not a
    window whose first byte may follow a backslash). Linear in len(data)."""
    needle = b'"' + key.encode() + b'"'
    cut = False
    at = data.find(needle)
    while at >= 0:
        if _unescaped(data, at, max(0, at - 4096), from_start):  # a key, not text in a string (quotes escaped there)
            after = at + len(needle)
            m = re.compile(_VALUE).match(data, after)
            if m is None:
                cut = cut or not data[after:].strip(b" \t\r\n:")
            else:
                start = scan = m.end()
                while True:
                    quote = data.find(b'"', scan)
                    if quote < 0:
                        cut = True
                        break
                    if _unescaped(data, quote, scan, True):
                        try:
                            value = json.loads('"' + data[start:quote].decode("utf-8", "replace") + '"')
                        except ValueError:
                            break
                        return value, cut
                    scan = quote + 1
        at = data.find(needle, at + 1)
    return None, cut


def _unescaped(data: bytes, quote: int, low: int, known: bool) -> bool:
    """The quote at data[quote] follows an even number of backslashes, counted back to low at most; False when they
    may go on before low (unless low is 0 and known: data's first byte is the input's first byte)."""
    before = data[low:quote]
    run = len(before) - len(before.rstrip(b"\\"))
    if run == len(before) and ((low > 0 and data[low - 1] == 0x5C) or (low == 0 and not known)):
        return False
    return run % 2 == 0
