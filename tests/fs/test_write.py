"""fs/write.py: the writes every part shares (state, pipelines, installs), driven through the seam."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rehydrate.errors import RehydrateError, UnsafeFile
from rehydrate.fs import write as fsio
from rehydrate.store.state import State


class FailingTemp(fsio.Calls):
    """The real system calls, except that writing or renaming a temporary file fails like a full disk."""

    def __init__(self, call: str) -> None:
        self.call = call
        self.paths: dict[int, str] = {}

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        fd = super().open(path, flags, mode)
        self.paths[fd] = path
        return fd

    def write(self, fd: int, data: bytes) -> int:
        if self.call == "write" and self.paths.get(fd, "").endswith(".tmp"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(fd, data)

    def replace(self, src: str, dst: str) -> None:
        if self.call == "replace":
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        super().replace(src, dst)


def temps(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


@pytest.mark.parametrize("call", ["write", "replace"])
def test_a_failed_replace_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str) -> None:
    target = tmp_path / "view.md"
    target.write_bytes(b"old\n")
    monkeypatch.setattr(fsio, "calls", FailingTemp(call))
    with pytest.raises(RehydrateError, match=f"cannot write {target}"):
        fsio.replace(str(target), b"new\n", "test")
    assert temps(tmp_path) == [] and target.read_bytes() == b"old\n"


def test_a_checkpoint_whose_view_cannot_be_written_leaves_no_temporary_file_in_the_state(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fsio, "calls", FailingTemp("write"))
    with pytest.raises(RehydrateError, match="No space left"):
        state.checkpoint(done="x", next="y")
    assert temps(Path(state.root)) == []


def test_replace_with_a_mode_gives_exactly_those_bits(tmp_path: Path) -> None:
    target = tmp_path / "secret.json"
    old = os.umask(0o077)
    try:
        fsio.replace(str(target), b"{}\n", "test", mode=0o640)
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        fsio.replace(str(target), b"{}\n", "test", new_mode=0o666)
        assert stat.S_IMODE(target.stat().st_mode) == 0o600  # less the umask, as open() gives
    finally:
        os.umask(old)


def test_make_dirs_makes_the_missing_folders_outermost_first_and_refuses_a_file(tmp_path: Path) -> None:
    made = fsio.make_dirs(str(tmp_path / "a" / "b" / "c"), "test")
    assert made == [str(tmp_path / "a"), str(tmp_path / "a" / "b"), str(tmp_path / "a" / "b" / "c")]
    assert fsio.make_dirs(str(tmp_path / "a" / "b"), "test") == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafeFile, match="is a file, not a folder"):
        fsio.make_dirs(str(tmp_path / "file" / "sub"), "test")


def test_cut_tail_keeps_the_cut_bytes_and_never_replaces_an_older_copy(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    for n, torn in enumerate((b'{"a', b'{"b'), 1):
        log.write_bytes(b"{}\n" + torn)
        kept = fsio.cut_tail(str(log), 3, torn, "test")
        assert kept == str(log) + (".broken" if n == 1 else ".broken.2")
        assert Path(kept).read_bytes() == torn and log.read_bytes() == b"{}\n"


def test_a_file_that_is_not_regular_is_named_without_speaking_of_the_state(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(UnsafeFile) as info:
        fsio.check_regular(str(tmp_path / "folder"))
    assert "is a folder; rehydrate only reads and writes regular files" in str(info.value)
    assert "state" not in str(info.value)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="a.0f9x\n_", max_size=30), st.sampled_from(["", ".tmp", ".tmp\n", ".TMP"]), st.booleans())
def test_a_temporary_file_of_replace_is_told_apart_from_any_other(body: str, tail: str, dot: bool) -> None:
    """Reconciliation removes replace's leftover temporary files, and nothing else: the names replace makes, and the
    names that fit their pattern in full (never with a newline at the end)."""
    import re

    name = ("." if dot else "") + body + tail
    assert fsio.is_temp_name(name) == bool(re.fullmatch(r"\..+\.[0-9]+\.[0-9a-f]{8}\.tmp", name)), name
    made = os.path.basename(fsio.temp_name(os.path.join("state", "99_next.md")))
    assert fsio.is_temp_name(made) and made.startswith(".99_next.md.")
