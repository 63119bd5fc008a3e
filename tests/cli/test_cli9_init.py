"""`init` from a subfolder: the state goes to the repository's root, where the hooks (starting there) look."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import rehydrate


def test_init_from_a_subfolder_creates_the_state_at_the_repository_root(repo: Path) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    r = rehydrate("init", "--goal", "Ship the parser", cwd=sub)
    assert r.code == 0, r.err
    assert (repo / "state" / "wal" / "agent.jsonl").is_file()
    assert not (sub / "state").exists() and not (repo / "src" / "state").exists()
    assert f"initialized {repo / 'state'}/ at the repository's root" in r.out  # it says where
    assert rehydrate("status", cwd=sub).code == 0
    # the hook, called with the repository's root as cwd (as the harnesses do), finds it
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})
    r = rehydrate("hook", "claude", cwd=repo, stdin=event)
    assert r.code == 0 and "Ship the parser" in json.loads(r.out)["hookSpecificOutput"]["additionalContext"]


def test_init_at_the_root_says_state_as_before(repo: Path) -> None:
    r = rehydrate("init", "--goal", "g")
    assert r.code == 0 and r.out.startswith("initialized state/ (actor agent)")


def test_outside_a_repository_init_uses_the_current_folder(tmp_path: Path) -> None:
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    assert rehydrate("init", "--goal", "g", cwd=sub).code == 0
    assert (sub / "state" / "wal").is_dir() and not (tmp_path / "a" / "state").exists()


def test_an_existing_state_found_upward_is_not_doubled(repo: Path) -> None:
    pkg = repo / "pkg"
    (pkg / "sub").mkdir(parents=True)
    assert rehydrate("init", "--goal", "first", "--dir", "state", cwd=pkg).code == 0
    r = rehydrate("init", "--goal", "second", cwd=pkg / "sub")
    assert r.code == 3 and "write-once" in r.err
    assert not (repo / "state").exists()


def test_dir_and_env_are_still_taken_from_the_current_folder(repo: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    assert rehydrate("init", "--goal", "g", "--dir", "here", cwd=sub).code == 0
    assert (sub / "here" / "wal").is_dir()
    assert rehydrate("init", "--goal", "g", cwd=sub, env={"REHYDRATE_DIR": "there"}).code == 0
    assert (sub / "there" / "wal").is_dir() and not (repo / "state").exists()
