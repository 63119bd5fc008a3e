"""`rehydrate hook HARNESS` (cli/hook.py): stdin read as the hook dispatch reads it, the answer printed as given."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate.cli import main
from rehydrate.harness import hook


def test_no_usable_stdin_is_an_empty_input(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    assert rehydrate("init", "--goal", "Ship the parser").code == 0
    expected = hook.run("claude", b"")
    for stdin in (None, io.StringIO("not a file")):  # closed or missing, or without a file descriptor
        monkeypatch.setattr("sys.stdin", stdin)
        assert main(["hook", "claude"]) == expected.code == 0
        out, err = capsys.readouterr()
        assert out.rstrip("\n") == expected.stdout.rstrip("\n") and err == expected.stderr


def test_the_answer_is_printed_as_the_dispatch_gives_it(repo: Path) -> None:
    assert rehydrate("init", "--goal", "Ship the parser").code == 0
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo)})
    expected = hook.run("claude", event.encode())
    r = rehydrate("hook", "claude", stdin=event)
    assert r.code == expected.code == 0 and r.out.endswith("\n")
    assert "Ship the parser" in json.loads(r.out)["hookSpecificOutput"]["additionalContext"]
    assert json.loads(r.out).keys() == json.loads(expected.stdout).keys()
