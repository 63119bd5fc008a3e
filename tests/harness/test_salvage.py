"""The fields found in a hook's input that does not parse (harness/salvage.py): keys searched for as bytes, a
string value taken only when it is found whole, and never a key that may be text inside another string."""

from __future__ import annotations

import json

from rehydrate.harness.salvage import salvage


def test_salvage_reads_keys_never_text_inside_strings() -> None:
    raw = json.dumps(
        {
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {
                "content": 'say \\"hi\\" then "file_path": "evil" \\\\',
                "file_path": 'a "quoted\\" \\\\ path',
            },
        }
    ).encode()
    event = salvage(raw[:-2])  # cut: no longer JSON
    assert event["tool_input"] == {"file_path": 'a "quoted\\" \\\\ path', "cut": []}
    assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "Write"
    cut = salvage(raw[: raw.index(b"quoted")])
    assert cut["tool_input"] == {"cut": ["file_path"]}
    # A window that starts inside a string: a quote whose backslashes may go on before the window is not trusted.
    assert salvage(b'\\"file_path\\": \\"x\\"', b'"file_path": "x"') == {}
    assert salvage(b"{", b'"file_path": "x"}') == {}  # a key at the window's first byte may be text
    assert salvage(b"{", b' "file_path": "x"}')["tool_input"] == {"file_path": "x", "cut": []}
