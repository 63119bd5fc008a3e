"""audit's pre-filter (transcripts.claude.read.audited): lines that cannot matter are skipped before they are parsed,
and the report (text, --json and the page) is the same as with every line parsed: on every real transcript, and on the
same records written with other spacing and key order, escapes, and failures and compactions put in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_TRANSCRIPTS, needs_real_transcripts
from rehydrate import audit
from rehydrate.transcripts import jsonl, reader
from rehydrate.transcripts.claude.read import FILTERED, audited

REAL = REAL_TRANSCRIPTS
pytestmark = needs_real_transcripts()
USED = ("assistant", "user", "system")


def _real_lines() -> list[bytes]:
    return [x for p in sorted(REAL.glob("claude-*.jsonl")) for x in p.read_bytes().split(b"\n") if x.strip()]


def _reordered(value: Any) -> Any:
    """value with every object's keys in reverse order, at every depth."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def _escaped(line: bytes) -> bytes:
    """The same record with "type" and "assistant"/"user"/"system" spelled with \\u escapes."""
    out = line.replace(b'"type"', b'"\\u0074ype"')
    for kind in USED:
        out = out.replace(f'"{kind}"'.encode(), ('"\\u00' + f"{ord(kind[0]):x}" + kind[1:] + '"').encode())
    return out


def _spellings(rec: dict[str, Any]) -> list[bytes]:
    """One record as other writers may write it: spaced, tabbed, keys reordered or sorted, non-ASCII escaped."""
    again = _reordered(rec)
    return [
        json.dumps(rec).encode(),  # ", " and ": "
        json.dumps(rec, separators=(",", " : ")).encode(),
        json.dumps(again, separators=(" ,\t", "\t:\r ")).encode(),
        json.dumps(rec, sort_keys=True, ensure_ascii=False).encode(),
        b"  " + json.dumps(again, sort_keys=True).encode() + b" \r",
    ]


def test_no_line_that_matters_is_refused_however_it_is_written() -> None:
    lines = _real_lines()
    kept = refused = 0
    for line in lines:
        rec = json.loads(line)
        if rec.get("type") in USED:
            assert audited(line), line[:200]
            kept += 1
            for other in (*_spellings(rec), _escaped(line)):
                assert audited(other), other[:200]
        else:
            refused += not audited(line)
            for other in _spellings(rec)[1:3]:  # the other spacing is judged too (parsed, or skipped when it can tell)
                assert audited(other) or json.loads(other).get("type") not in USED
    assert kept > 600 and refused > 1500  # most progress records are skipped unparsed
    for bad in (b'{"type":"progress"', b'{"type":"progress"}{"type":"user"', b"[1]", b"7", b'{"type" :"progress"}'):
        assert audited(bad), bad  # torn, not one object, or spaced: parsed (and counted bad when it is bad)
    assert audited(b'{"type":"progress","data":{"message":{"type":"assistant"}}}')  # any depth: parsed to tell
    assert not audited(b'{"type":"progress","data":{"type":"hook_progress","note":"a \\"type\\":\\"user\\""}}')


def _variants(tmp_path: Path) -> list[str]:
    """The real transcripts, and the Claude Code one rewritten: each record spelled another way in turn, a second
    compaction, failed tool results (is_error and the error marker, also split across text blocks), a prompt."""
    claude = REAL / "claude-code-2.1.39-manual-compact.jsonl"
    records = [json.loads(x) for x in claude.read_bytes().split(b"\n") if x.strip()]
    out = []
    for n in range(3):
        body = [_spellings(rec)[(i + n) % 5] for i, rec in enumerate(records)]
        body[100 + n] = _escaped(json.dumps(records[100 + n], separators=(",", ":")).encode())
        path = tmp_path / f"respelled-{n}.jsonl"
        path.write_bytes(b"\n".join(body) + b"\n")
        out.append(str(path))
    results = [i for i, r in enumerate(records) if r.get("type") == "user" and "toolUseResult" in r]
    for n, i in enumerate(results[:40:4]):
        block = records[i]["message"]["content"][0]
        if n % 3 == 0:
            block["is_error"] = True
        elif n % 3 == 1:
            block["content"] = "<tool_use_error>File has not been read yet</tool_use_error>"
        else:
            block["content"] = [{"type": "text", "text": "<tool_use"}, {"type": "text", "text": "_error>no</x>"}]
    boundary = next(r for r in records if r.get("subtype") == "compact_boundary")
    records.insert(1900, {**boundary, "compactMetadata": {"trigger": "auto", "preTokens": 170251}})
    records.insert(2000, {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "go"}]}})
    path = tmp_path / "changed.jsonl"
    path.write_bytes(b"".join(json.dumps(_reordered(r)).encode() + b"\n" for r in records))
    return [*map(str, sorted(REAL.glob("*.jsonl"))), *out, str(path)]


def test_the_report_is_the_same_with_and_without_the_prefilter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same report (data, text and page): with the pre-filter, without it (every line parsed, the records audit
    does not use left at their type), and with every record read in full as before either existed."""
    paths = _variants(tmp_path)
    fast = audit.report(paths, prefilter=True)
    parsed = audit.report(paths)
    read = reader.read
    monkeypatch.setattr(reader, "read", lambda path, harness=None, **_: read(path, harness))
    full = audit.report(paths)
    assert fast == parsed == full
    assert audit.render(fast) == audit.render(parsed) == audit.render(full)
    assert fast["summary"]["compactions"] == 7 and sum(s["tool_errors"] for s in fast["sessions"]) > 12 * 5
    plotly = pytest.importorskip("plotly")  # the page, when its extra is installed
    from rehydrate.audit import html_report

    assert plotly and html_report.render(fast) == html_report.render(parsed) == html_report.render(full)


def test_the_prefilter_skips_without_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the filter refuses is never parsed: the parser sees only the records audit uses (and a few others that
    name such a type at some depth, or longer than the filter's FILTERED bytes: those are parsed untested)."""
    seen: list[bytes] = []
    parse = jsonl.json_parser()

    def counting(raw: bytes) -> Any:
        seen.append(raw)
        return parse(raw)

    monkeypatch.setattr(jsonl, "_loads", counting)
    claude = REAL / "claude-code-2.1.39-manual-compact.jsonl"
    s = reader.read(str(claude), "claude", audit=True, prefilter=True)
    assert s.lines == 2385 and len(s.tool_calls) == 242 and s.user_turns > 0
    assert 600 < len(seen) < 2385 / 2  # the lines parsed, of 2,385
    assert all(json.loads(x).get("type") in (*USED, "progress") or len(x) > FILTERED for x in seen)
