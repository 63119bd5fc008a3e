"""rotate: the archive a rotate record names is a plain file in the state folder's archive/, whoever wrote it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import no_crash, rehydrate, tree
from rehydrate.store.state import State
from rehydrate.store.wal import record as wal


def _log(root: Path) -> Path:
    return root / "wal" / "agent.jsonl"


def append_rotate(root: Path, archive: str) -> int:
    """A hash-valid rotate record, as anyone who can commit to the repository can write it; returns its line."""
    log = _log(root)
    lines = log.read_bytes().splitlines()
    last = json.loads(lines[-1])
    data = {
        "archive": archive,
        "records": len(lines) + 1,
        "goal": {"goal": "Ship the parser", "done_when": "all tests pass"},
        "lines": [],
        "adopted": [],
        "checkpoint": None,
        "handoff": None,
    }
    rec = wal.seal({**last, "seq": last["seq"] + 1, "prev": last["h"], "op": "rotate", "data": data})
    with open(log, "ab") as f:
        f.write(wal.encode(rec))
    return len(lines) + 1


def trust_the_log(root: Path) -> None:
    """Make the cache say the log is as this clone left it, so that no full check of the chain runs first: the
    refusal must not depend on the cache."""
    from rehydrate.store.local.seen import Seen as _Seen
    from rehydrate.store.local.seen import fingerprint

    seen = _Seen()
    for line in _log(root).read_bytes().splitlines():
        seen.saw(wal.decode(line))
    st = os.stat(_log(root))
    seen.fp = fingerprint(st)
    (root / "wal" / ".agent.seen").write_bytes(seen.dump())


def _escapes(tmp_path: Path) -> list[str]:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    return [
        str(outside / "stolen.jsonl"),  # absolute
        "../../outside/stolen.jsonl",  # up and out
        "archive/../../outside/stolen.jsonl",  # up and out, behind the expected folder
        "archive/../wal/agent.jsonl",  # inside the folder, but not a file of archive/
        "archive/sub/stolen.jsonl",  # not a plain file name
        "archive/.stolen.jsonl",  # a hidden name (the cache's, the temp files')
        "archive/stolen.txt",
        "",
    ]


@pytest.mark.parametrize("trusted", [False, True], ids=["log-changed", "cache-says-unchanged"])
def test_a_rotate_record_naming_a_path_outside_archive_is_refused(
    repo: Path, state: State, tmp_path: Path, trusted: bool
) -> None:
    root = Path(state.root)
    pristine = {p: (root / p).read_bytes() for p in ("wal/agent.jsonl", "99_next.md", "10_invariants.md")}
    for archive in _escapes(tmp_path):
        for p, data in pristine.items():
            (root / p).write_bytes(data)
        n = append_rotate(root, archive)
        if trusted:
            trust_the_log(root)
        before_outside = tree(tmp_path / "outside")
        log = _log(root).read_bytes()
        event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})
        runs = [rehydrate("hook", "claude", stdin=event), rehydrate("status"), rehydrate("resume")]
        runs.append(rehydrate("checkpoint", "--done", "x", "--next", "y"))
        for r in runs:
            no_crash(r)
        # the hook answers (exit 0) with the refusal named; the commands fail with it
        assert runs[0].code == 0 and "unsafe-path" in runs[0].out, (archive, runs[0])
        for r in runs[1:]:
            assert r.code == 3 and "unsafe-path" in r.err and f"line {n}" in r.err, (archive, r)
        v = rehydrate("verify")
        assert v.code == 1 and f"agent.jsonl:{n}: refusing record" in v.out and "[unsafe-path]" in v.out, (archive, v)
        # nothing written anywhere: not outside, not in the log, no archive folder
        assert tree(tmp_path / "outside") == before_outside, archive
        assert _log(root).read_bytes() == log, archive
        assert not (root / "archive").exists(), archive


def test_a_planted_archive_link_is_refused_by_rotate_and_by_the_finish(state: State, tmp_path: Path) -> None:
    root = Path(state.root)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "archive").symlink_to(outside, target_is_directory=True)
    log = _log(root).read_bytes()
    r = rehydrate("rotate")
    no_crash(r)
    assert r.code == 3 and "archive is not a real folder inside the state folder" in r.err, r
    assert _log(root).read_bytes() == log  # refused before the record was written
    n = append_rotate(root, "archive/agent-1-5-abcdef12.jsonl")  # a well-formed name, through the planted link
    for args in (["verify", "--repair"], ["resume"], ["status"]):
        r = rehydrate(*args)
        no_crash(r)
        assert r.code in (1, 3) and "unsafe-path" in r.out + r.err, (args, r)
    assert list(outside.iterdir()) == []
    assert len(_log(root).read_bytes().splitlines()) == n


def test_a_well_formed_interrupted_rotate_is_still_finished(state: State) -> None:
    root = Path(state.root)
    n = append_rotate(root, "archive/manual-1.jsonl")
    r = rehydrate("verify", "--repair")
    assert "finished an interrupted rotate (archive/manual-1.jsonl)" in r.out, r
    assert len((root / "archive" / "manual-1.jsonl").read_bytes().splitlines()) == n
    assert json.loads(_log(root).read_bytes().splitlines()[0])["data"]["archive"] == "archive/manual-1.jsonl"
