"""Two copies of one state folder that each went on writing, and git's union merge of their logs: shared by the
tests of the log as a graph (test_graph.py) and of what reads it back (test_back.py, write/test_rules.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from rehydrate.store.state import State
from rehydrate.store.wal import scan as walscan


def log_of(root: Path) -> Path:
    return root / "wal" / "agent.jsonl"


def fork(tmp_path: Path) -> tuple[State, State, bytes]:
    """A state with a few records, and a copy of it (another clone: no cache); returns both and the base log."""
    (tmp_path / "a").mkdir()
    a, _ = State.init(tmp_path / "a" / "state", "ship the parser")
    a.invariant("parse with a table", "it is fast")
    a.checkpoint(done="base", next="split the work")
    base = log_of(Path(a.root)).read_bytes()
    shutil.copytree(a.root, tmp_path / "b" / "state", ignore=shutil.ignore_patterns(".local"))
    return a, State.open(tmp_path / "b" / "state"), base


def union(ours: Path, base: bytes, theirs: Path) -> bytes:
    """git merge-file --union of three versions of a file: what a merge with `merge=union` writes."""
    folder = ours.parent
    (folder / "base.tmp").write_bytes(base)
    try:
        done = subprocess.run(
            ["git", "merge-file", "-p", "--union", str(ours), str(folder / "base.tmp"), str(theirs)],
            capture_output=True,
            check=True,
        )
    finally:
        (folder / "base.tmp").unlink()
    return done.stdout


def merged(tmp_path: Path) -> tuple[State, State]:
    """Both sides record and checkpoint; a's log becomes the union (a's side first)."""
    a, b, base = fork(tmp_path)
    bases = {name: Path(a.root, name).read_bytes() for name in ("10_invariants.md", "99_next.md")}
    a.reject("a regex parser", "it cannot nest")
    a.checkpoint(done="ours", next="our next")
    b.invariant("keep the AST immutable", "sharing")
    b.checkpoint(done="theirs", next="their next")
    log_of(Path(a.root)).write_bytes(union(log_of(Path(a.root)), base, log_of(Path(b.root))))
    for name, was in bases.items():  # the union-merged views, as git merges them (state/.gitattributes)
        Path(a.root, name).write_bytes(union(Path(a.root, name), was, Path(b.root, name)))
    return a, b


def log_records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in log_of(root).read_bytes().splitlines()]


def heads_of(root: Path) -> list[dict[str, Any]]:
    heads = walscan.Heads()
    problems = walscan.scan_log(str(log_of(root)), "log", heads=heads)
    assert problems == [], problems
    return [rec for _, rec in heads.records()]
