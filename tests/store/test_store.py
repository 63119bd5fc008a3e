"""store/__init__.py: a Problem names its file and line, says whether it is information only, and is a plain dict
in JSON."""

from __future__ import annotations

from rehydrate.store import INFO, Problem


def test_a_problem_is_information_only_when_its_code_is_in_info() -> None:
    p = Problem("chain-broken", "wal/agent.jsonl", 3, "the chain breaks at line 3")
    assert not p.info
    assert Problem("switched", "wal/agent.jsonl", None, "a branch switch").info
    assert "switched" in INFO
    assert p.as_dict() == {
        "code": "chain-broken",
        "file": "wal/agent.jsonl",
        "line": 3,
        "message": "the chain breaks at line 3",
        "repairable": False,
    }
    assert repr(p) == "Problem('chain-broken', 'wal/agent.jsonl', 3, 'the chain breaks at line 3')"
