"""audit's bytes pre-filter is exact: a line it skips unparsed is never a record the audit uses, however the record
is written (key order, spacing, escapes, duplicate keys, "type" at any depth or inside strings), and the audit of a
file is the same with the filter as with every line parsed. Generated records, no fixtures needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rehydrate import audit
from rehydrate.harness.compaction import capture as precompact
from rehydrate.transcripts import jsonl
from rehydrate.transcripts.claude.read import audited

USED = ("assistant", "user", "system")
KINDS = st.sampled_from([*USED, "progress", "file-history-snapshot", "queue-operation", "message", "tool_use", "us"])
# text that spells records inside strings: quoted, it can never be a key or a value of the line itself
TEXT = st.sampled_from(['"type":"user"', '{"type":"assistant"}', "type", "\\u0075ser", "é", "\x1b[0m", "<x>", "", " "])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), TEXT, KINDS)


def _values(depth: int) -> st.SearchStrategy[Any]:
    if depth == 0:
        return SCALARS
    inner = _values(depth - 1)
    objects = st.dictionaries(st.sampled_from(["type", "data", "message", "content", "x", "typ", "Type"]), inner)
    return st.one_of(SCALARS, st.lists(inner, max_size=3), objects, objects.map(lambda d: {**d, "type": "user"}))


RECORDS = st.fixed_dictionaries(
    {"type": KINDS}, optional={"data": _values(2), "message": _values(2), "uuid": TEXT, "type2": KINDS}
)


def _write(rec: dict[str, Any], style: int, escape: int) -> bytes:
    """rec as one line, in one of several spellings; escape spells one ASCII letter of it with a \\u00 escape."""
    rec = dict(rec)
    dup = rec.pop("type2", None)
    separators = [(",", ":"), (", ", ": "), (",", " : "), (" ,\t", "\t:")][style % 4]
    ordered = dict(reversed(list(rec.items()))) if style & 4 else rec
    text = json.dumps(ordered, separators=separators, ensure_ascii=bool(style & 8))
    if dup is not None:  # a duplicate "type" key: the parser keeps the last one
        text = text[:-1] + ("," if len(ordered) else "") + json.dumps("type") + ":" + json.dumps(dup) + "}"
    if escape:
        letters = [i for i, c in enumerate(text) if c in "typeusrai" and text[i - 1] != "\\"]
        if letters:
            i = letters[escape % len(letters)]
            text = text[:i] + f"\\u{ord(text[i]):04x}" + text[i + 1 :]
    return text.encode()


def _kind(line: bytes) -> Any:
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec.get("type") if isinstance(rec, dict) else None


@settings(max_examples=600, deadline=None)
@given(RECORDS, st.integers(0, 15), st.integers(0, 40))
def test_a_line_the_filter_skips_is_never_a_record_the_audit_uses(rec: dict[str, Any], style: int, escape: int) -> None:
    line = _write(rec, style, escape)
    if not audited(line):
        assert _kind(line) not in USED, line
        assert jsonl.loads(line)["type"] not in USED  # the parser audit uses agrees


def test_the_filter_skips_the_records_it_can_tell_from_their_bytes() -> None:
    """Not a filter that keeps everything: Claude Code's progress and snapshot records are skipped, also with nested
    types and quoted records in their strings; a record of a used type is kept however it is spelled."""
    skipped = [
        b'{"type":"progress","data":{"type":"hook_progress","text":"\\"type\\":\\"user\\""}}',
        b'{"type":"file-history-snapshot","snapshot":{}}',
        b'{"uuid":"x","type":"progress","data":{"message":{"type":"message","content":[{"type":"text"}]}}}',
    ]
    assert not any(audited(x) for x in skipped)
    kept = [
        b'{"type":"progress","data":{"message":{"type":"assistant"}}}',  # a used type at some depth
        b'{"type" : "user"}',  # spaced
        b'{"typ\\u0065":"user"}',  # escaped key
        b'{"type":"\\u0073ystem"}',  # escaped value
        b'{"type":"progress","type":"assistant"}',  # the last duplicate wins
        b'{"type":"progress"',  # torn: parsed, and counted as a bad line
        b'[{"type":"progress"}]',
        b"",
    ]
    assert all(audited(x) for x in kept)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(RECORDS, st.integers(0, 15), st.integers(0, 40)), min_size=1, max_size=30))
def test_the_audit_is_the_same_with_and_without_the_filter(
    tmp_path_factory: Any, lines: list[tuple[dict[str, Any], int, int]]
) -> None:
    """The whole audit (its inline test in transcripts.claude.read._audit, not only audited()) against every line
    parsed: generated records with real assistant, user and compaction records between them."""
    folder: Path = tmp_path_factory.mktemp("audit")
    real = [
        {"type": "assistant", "message": {"id": "m1", "usage": {"input_tokens": 5}, "content": [_use("t1")]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True}]}},
        {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto", "preTokens": 9}},
        {"type": "user", "message": {"content": "go on"}},
        {"type": "assistant", "message": {"id": "m2", "usage": {"input_tokens": 7}, "content": [_use("t2")]}},
    ]
    body = [_write(dict(rec), style, escape) for rec, style, escape in lines]
    for n, rec in enumerate(real):
        body.insert(n * len(body) // len(real), json.dumps(rec).encode())
    path = folder / "s.jsonl"
    path.write_bytes(b"\n".join(body) + b"\n")
    assert audit.report([str(path)]) == audit.report([str(path)], prefilter=False)


def _use(ident: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": "Edit", "input": {"file_path": "a.py"}}


def test_audit_skips_unparsed_by_default(tmp_path: Path, monkeypatch: Any) -> None:
    """`rehydrate audit` (audit.report as the command calls it) has the filter on: its read of the file never parses
    a progress record, and the tail reads of the loss report and the format drift parse none past the file's first
    records (read_since's head: which harness, which version), their own byte test refusing the rest."""
    seen: list[bytes] = []
    parse = jsonl.json_parser()
    monkeypatch.setattr(jsonl, "_loads", lambda raw: seen.append(raw) or parse(raw))
    progress = b'{"parentUuid":null,"type":"progress","data":{"type":"hook_progress","hookEvent":"SessionStart"}}'
    used = json.dumps({"type": "assistant", "message": {"id": "m", "content": [_use("t")]}}).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([used] + [progress] * 100) + b"\n")
    data = audit.report([str(path)])
    assert data["sessions"][0]["lines"] == 101 and data["sessions"][0]["tool_calls"] == 1
    assert seen == [used, used]  # once to tell the harness (transcripts.reader.detect), once read
    seen.clear()
    assert audit.report([str(path)], capture=precompact.capture)["sessions"][0]["tool_calls"] == 1
    # used: told, read, then the drift's tail read: its head (20 records: 19 progress) and its window
    assert seen.count(used) == 4 and seen.count(progress) == 19
