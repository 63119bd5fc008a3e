"""Nothing a command prints can drive the terminal: every field comes from files that arrived by `git pull`."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, rehydrate
from rehydrate.cli import terminal_safe

CONTROLS = ["\x1b", "\x07", "\r", "\x00", "\x08", "\x7f", "\x9b", "\u202e", "\u2066", "\u200f", "\u2028"]
NASTY = "\x1b]0;pwned\x07\x1b[2J\r\x00\x08\u202e\u2066\x9b"


@pytest.mark.parametrize("ch", CONTROLS)
def test_terminal_safe_removes_each_control(ch: str) -> None:
    assert terminal_safe(f"a{ch}b") == "ab"


def test_terminal_safe_keeps_text_tabs_newlines_and_non_latin() -> None:
    text = "Ship the parser\tnow\nпарсер 解析器 مُحلل 🙂"
    assert terminal_safe(text) == text


def _assert_clean(out: str) -> None:
    for ch in CONTROLS:
        assert ch not in out, f"{ch!r} reached the terminal: {out!r}"


def test_a_state_folder_whose_path_holds_escape_sequences_prints_clean(tmp_path: Path) -> None:
    repo = tmp_path / f"clone{NASTY.replace(chr(0), '')}"  # a path cannot hold NUL
    repo.mkdir()
    git(repo, "init", "-q")
    assert rehydrate("init", "--goal", "Ship it", cwd=repo).code == 0
    (repo / "state" / "99_next.md").write_text("# Next (checkpoint 9\x1b[2J\r\x00evil\u202e)\ncurrent goal: x\n")
    for args in (("status",), ("verify",), ("resume",), ("checkpoint", "--done", "a", "--next", "b")):
        r = rehydrate(*args, cwd=repo)
        assert r.code in (0, 1), r
        assert "state" in r.out + r.err
        _assert_clean(r.out)
        _assert_clean(r.err)
    # an error message that names the path is clean too
    r = rehydrate("status", "--dir", str(repo / "missing"), cwd=repo)
    assert r.code == 3 and "missing" in r.err
    _assert_clean(r.err)
