"""The op table (store/records.py): every op the code writes is defined there, renders as `rehydrate log` shows it,
and is the only place in store/ that compares op names; an op it does not know is shown, never refused."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from rehydrate.store import layout, records
from rehydrate.store.records import OPS, capture_counts, data_of, field, of, op_of
from rehydrate.store.wal.history import Entry

SRC = Path(records.__file__).resolve().parent.parent  # src/rehydrate
STORE = SRC / "store"
_NAME = re.compile(records.NAME)

# where a call names the op it writes: the function's name and the position of the op among its arguments
_WRITERS = {"record": 0, "write": 1, "_write": 0, "_entry": 0, "append": 1, "append_many": 1, "seal": 1, "log": 2}


def _strings(node: ast.expr) -> list[str]:
    """The op names an argument can be: a string, either branch of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


def written_ops() -> dict[str, str]:
    """Every op name the source writes, found by ast: the op argument of a record/write/append/seal/log call, the
    value of an "op" key in a dict literal. {name: where}."""
    out: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            found: list[str] = []
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                at = _WRITERS.get(name or "")
                if at is not None and len(node.args) > at:
                    found = _strings(node.args[at])
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "op" and value is not None:
                        found += _strings(value)
            for op in found:
                if _NAME.match(op):
                    out.setdefault(op, f"{path.relative_to(SRC)}:{node.lineno}")
    return out


def test_every_op_the_source_writes_is_defined() -> None:
    written = written_ops()
    # the search sees the writers it must see (a search that finds nothing passes nothing)
    assert {"checkpoint", "invariant", "reject", "compaction", "compacted", "resume", "ack", "mail", "init"} <= set(
        written
    ), written
    missing = {op: where for op, where in written.items() if op not in OPS}
    assert not missing, f"ops written with no definition in store/records.py: {missing}"


def test_the_table_names_each_op_once_by_its_own_name() -> None:
    assert all(op.name == name and _NAME.match(name) for name, op in OPS.items())

    def named(which: Any) -> set[str]:
        return {op.name for op in OPS.values() if which(op)}

    assert named(lambda op: op.journal) == {"resume", "delivery", "ack", "precompress"}
    recovery, entries, own = records.RECOVERY_POINTS, records.ENTRIES, records.OWN
    assert recovery == {"checkpoint", "init", "join", "rotate"} and entries == {"invariant", "reject", "withdraw"}
    assert named(lambda op: op.evidence in ("carried", "set")) == {"checkpoint", "stamp", "accept"}
    assert named(lambda op: op.starts) == {"init", "join"} and named(lambda op: op.known) == {"read", "promise"}
    assert named(lambda op: op.binds) == {"init", "invariant", "reject", "withdraw", "rotate"}
    assert named(lambda op: op.transcript) == {"compaction", "precompress", "resume"}
    verbs = ("init", "invariant", "reject", "withdraw", "checkpoint", "handoff", "tasks", "rotate", "receipt", "stamp")
    verbs = (*verbs, "accept")
    assert own == {*verbs, "key"}
    producers = records.PRODUCERS
    assert producers == {layout.NEXT: ("init", "checkpoint"), layout.HANDOFF: ("handoff",), layout.TASKS: ("tasks",)}
    assert OPS["merge"].moves == layout.NEXT and "merge" not in producers[layout.NEXT]
    for op in OPS.values():  # what a view is redone from is a field the op defines
        assert all(op.type_of(name) is not None for name in op.needs), op
    assert records.CHECKPOINT.lacks({"goal": "g", "done": "d"}) == "next" and records.ROTATE.lacks({}) == "archive"
    assert records.INIT.lacks({"goal": "g", "header": ""}) is None and of("anything").lacks({}) is None


# (op, data, the summary `rehydrate log` showed for it before the table: byte for byte)
SUMMARIES: list[tuple[str, dict[str, Any], str]] = [
    ("init", {"goal": "Ship the parser", "header": "h"}, "goal: Ship the parser"),
    ("init", {}, "goal: "),
    (
        "invariant",
        {"line": "- D-1a2b3c 2026-11-29 decision: WAL first because: crash"},
        "D-1a2b3c 2026-11-29 decision: WAL first because: crash",
    ),
    ("reject", {"line": "no dash"}, "no dash"),
    ("reject", {"line": 5}, "5"),
    (
        "checkpoint",
        {"done": "wrote the lexer", "next": "write the parser", "goal": "g"},
        "done: wrote the lexer; next: write the parser",
    ),
    ("checkpoint", {"done": ["a"], "next": None}, 'done: ["a"]; next: null'),
    ("handoff", {"text": "héllo\nworld"}, "11 characters: héllo\nworld"),
    ("handoff", {"text": "x" * 1234}, "1,234 characters: " + "x" * 1234),
    ("rotate", {"records": 12, "archive": "archive/a-1-12.jsonl"}, "archived 12 record(s) to archive/a-1-12.jsonl"),
    ("rotate", {}, "archived ? record(s) to "),
    (
        "compaction",
        {
            "phase": "pre",
            "trigger": "auto",
            "summary_chars": 1200,
            "capture": {"todos": {"items": [1, 2], "more": 1}, "failed": ["x"]},
        },
        "phase pre, trigger auto, summary of 1200 characters, captured: 3 todos, 1 failed command",
    ),
    ("compaction", {"phase": "", "trigger": None}, '{"phase": "", "trigger": null}'),
    ("compaction", {"capture": {"error": "boom\nbang"}}, "captured: not captured: boom bang"),
    ("compacted", {"phase": "post", "summary_chars": 3}, '{"phase": "post", "summary_chars": 3}'),
    ("resume", {"confidence": "high", "chars": 4000}, "confidence high, 4000 characters"),
    ("resume", {}, "confidence ?, ? characters"),
    ("stamp", {"files": {"a.py": "00"}}, '{"files": {"a.py": "00"}}'),
    ("merge", {"lines": []}, '{"lines": []}'),
    ("custom-op", {"b": 1, "a": "é"}, '{"a": "é", "b": 1}'),
]


@pytest.mark.parametrize(
    ("op", "data", "expected"), SUMMARIES, ids=[f"{o}-{i}" for i, (o, _, _) in enumerate(SUMMARIES)]
)
def test_each_op_renders_its_summary_as_before(op: str, data: dict[str, Any], expected: str) -> None:
    assert of(op).summary(data) == expected


def test_the_log_cleans_and_cuts_a_summary() -> None:
    rec = {"seq": 1, "actor": "a", "op": "handoff", "ts": "t", "data": {"text": "x\ty\n" * 100}, "h": "h"}
    assert Entry(rec, "s", 1).summary() == "400 characters: " + "x y " * 20 + "x y…"


def test_an_unknown_op_is_kept_and_shown() -> None:
    op = op_of({"op": "telemetry", "data": {"n": 1}})
    assert op.name == "telemetry" and op.moves is None and not op.recovery and not op.journal
    assert op.summary({"n": 1}) == '{"n": 1}'
    assert "telemetry" not in OPS  # asking for it defined nothing
    assert op_of({"op": 7}).name == "7" and op_of("not a record").name == "None"


def test_data_of_is_the_one_guard_on_a_records_data() -> None:
    assert data_of({"op": "checkpoint", "data": {"done": "a"}}) == {"done": "a"}
    for rec in ({"data": ["a"]}, {"data": "text"}, {"data": None}, {}, ["data"], None, "data"):
        assert data_of(rec) == {}
    assert field({"n": 1}, "n", int) == 1 and field({"n": True}, "n", int) is None
    assert field({"n": "1"}, "n", int) is None and field(["n"], "n", int) is None and field({}, "n", str) is None


def _op_expr(node: ast.expr) -> bool:
    """An expression that reads an op's name: `op`, `x.op`, `x["op"]`, `x.get("op")`."""
    if isinstance(node, ast.Name):
        return node.id == "op"
    if isinstance(node, ast.Attribute):
        return node.attr == "op"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "op"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "op"
    return False


def _names(node: ast.expr) -> list[str]:
    """The op names a comparison's other side spells: a string, or a tuple, list or set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for e in node.elts for n in _names(e)]
    return []


def by_hand(root: Path) -> list[str]:
    """The places under root (records.py aside) that compare an op's name with names spelled out, or keep a
    collection of op names of their own."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if path == Path(records.__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            spelled: list[str] = []
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_op_expr(s) for s in sides):
                    spelled = [n for s in sides for n in _names(s)]
            elif isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) > 1:
                names = _names(node)
                if len(names) == len(node.elts) and all(n in OPS for n in names):
                    spelled = names
            if any(n in OPS for n in spelled):
                out.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)[:80]}")
    return out


def test_store_asks_the_table_instead_of_comparing_op_names(tmp_path: Path) -> None:
    # the search sees what it must see (a search that finds nothing passes nothing)
    (tmp_path / "sample.py").write_text(
        'if rec["op"] == "checkpoint":\n    pass\nif op in ("init", "join"):\n    pass\nOWN = ("mail", "read")\n'
    )
    assert {line.split(":")[1] for line in by_hand(tmp_path)} == {"1", "3", "5"}
    found = by_hand(STORE)
    assert not found, "compare with store/records.py's table instead:\n" + "\n".join(found)


def test_a_capture_is_counted_with_what_its_bound_left_out() -> None:
    capture = {"todos": {"items": ["a", "b"], "more": 1}, "edited": {"files": ["x.py"]}, "failed": [{}, {}]}
    assert capture_counts(capture) == "3 todos, 1 file edited, 2 failed commands"
    assert capture_counts({}) == "nothing captured"


def test_a_field_of_the_wrong_shape_counts_as_empty_and_an_error_is_one_line() -> None:
    wrong = {"todos": ["not", "a", "dict"], "edited": {"files": "x.py", "more": True}, "failed": "boom"}
    assert capture_counts(wrong) == "nothing captured"
    assert (
        capture_counts({"error": "no\ntranscript  here", "todos": {"items": ["a"]}})
        == "not captured: no transcript here"
    )
    assert capture_counts({"error": "x" * 500}) == "not captured: " + "x" * 200
