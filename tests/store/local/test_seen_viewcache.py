"""The views' fingerprints in the local cache (wal/.<actor>.seen): a session start does not read nor hash
a view this clone wrote or last found as the WAL's last record binds it, while the file's fingerprint (device, inode,
size, mtime, ctime) is unchanged; any change made outside rehydrate (git checkout, an editor, a restored mtime) is
read and compared as before. The cache is untrusted: garbled, torn, another clone's, it costs at most a full read.
The cache is also how a command knows that no temporary file can have been left in the state's folders since."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import git, records
from rehydrate import brief
from rehydrate.fs import write as fsio
from rehydrate.store.local import seen
from rehydrate.store.state import State

INV = "10_invariants.md"


def _cache(state: State) -> Path:
    return Path(state.seen_path)


def _problems(state: State) -> list[tuple[str, str, int | None]]:
    out = State.open(state.root).reconcile(repair=False)
    return [(p.code, p.file, p.line) for p in out.problems]


def test_git_checkout_of_an_older_10_is_detected(repo: Path, state: State) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "state")
    state.invariant("Keep the lexer table-driven", because="hand-written lexers drift")
    state.checkpoint(done="lexer", next="parser")
    assert _problems(state) == []  # the cache now knows 10 as the last record binds it
    git(repo, "checkout", "HEAD", "--", "state/10_invariants.md")  # the new decision's line is gone from the file
    found = _problems(state)
    assert any(code == "latch-missing" and file.endswith(INV) for code, file, _ in found), found


def test_an_edit_with_its_mtime_restored_is_detected(state: State) -> None:
    path = Path(state.path(INV))
    assert _problems(state) == []
    before = path.stat()
    data = path.read_bytes()
    i = data.index(b"Write the WAL")
    with open(path, "r+b") as f:  # in place, same size, same inode
        f.seek(i)
        f.write(b"Write the LAW")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the mtime as it was: only the ctime tells
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    found = _problems(state)
    assert any(file.endswith(INV) for _, file, _ in found), found


@pytest.mark.parametrize("name", ["99_next.md", "00_goal.md", "20_handoff.md"])
def test_a_replaced_view_is_detected(state: State, name: str) -> None:
    state.handoff("read the parser's notes first")
    assert _problems(state) == []
    path = Path(state.path(name))
    text = path.read_bytes()
    path.write_bytes(text.replace(b"the", b"THE", 1))  # an editor: same size
    found = _problems(state)
    assert any(file.endswith(name) for _, file, _ in found), found


def test_another_clones_cache_costs_a_read_not_a_miss(repo: Path, state: State, tmp_path: Path) -> None:
    """A copy of the state with its cache (cp -a keeps the mtimes): the copy's files are other inodes, so its
    cache's fingerprints hold for none of them, and an edit made in the copy is found."""
    assert _problems(state) == []
    copy = tmp_path / "copy" / "state"
    shutil.copytree(state.root, copy, symlinks=True)  # copy2: mtimes kept
    path = copy / INV
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"Write the WAL", b"Write the LAW"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    cache = seen.Seen.load(state.seen_path)  # the copy has no cache of its own: it reads the old place's, once
    assert cache is not None and cache.views  # the first clone's views, with its log's part made to match the copy
    cache.fp = seen.fingerprint((copy / "wal" / "agent.jsonl").stat())
    (copy / "wal" / ".agent.seen").write_bytes(cache.dump())
    other = State.open(copy)
    found = [(p.code, p.file) for p in other.reconcile(repair=False).problems]
    assert any(file.endswith(INV) for _, file in found), found


def _forge(state: State, **views: tuple[str, str]) -> None:
    cache = seen.Seen.load(state.seen_path)
    assert cache is not None
    cache.views.update(views)
    _cache(state).write_bytes(cache.dump())


def test_a_cache_entry_for_another_file_or_binding_is_not_trusted(state: State) -> None:
    """A forged entry: the binding the last record gives, with the fingerprint of another file; or the file's own
    fingerprint with another binding. Neither makes an edited view pass."""
    path = Path(state.path(INV))
    bound = records(state.root)[-1]["views"][INV]
    path.write_bytes(path.read_bytes().replace(b"Write the WAL", b"Write the LAW"))
    other = Path(state.path("00_goal.md")).stat()
    _forge(state, **{INV: (seen.fingerprint(other), bound)})
    assert any(f.endswith(INV) for _, f, _ in _problems(state))
    _forge(state, **{INV: (seen.fingerprint(path.stat()), "0" * 64)})
    assert any(f.endswith(INV) for _, f, _ in _problems(state))


def test_a_torn_or_garbled_cache_reads_as_absent(state: State) -> None:
    """The cache is written in place (no O_TRUNC): a crash can leave the new bytes over part of the old ones. Its
    checksum makes any such mix read as no cache at all, never as a wrong one."""
    brief.resume(state)
    old = _cache(state).read_bytes()
    state.checkpoint(done="more", next="again")
    new = _cache(state).read_bytes()
    assert seen.Seen.load(state.seen_path) is not None
    for cut in range(1, len(new), 7):
        mix = new[:cut] + old[cut:]
        if mix in (old, new):
            continue
        _cache(state).write_bytes(mix)
        assert seen.Seen.load(state.seen_path) is None, cut
    _cache(state).write_bytes(new[:-1] + b"X")
    assert seen.Seen.load(state.seen_path) is None
    assert _problems(state) == []  # no cache: everything read and found as bound


def test_the_cache_is_written_without_o_trunc(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    flags: list[int] = []

    class Spy(fsio.Calls):
        def open(self, path: str, f: int, mode: int = 0o644) -> int:
            if path.endswith(".seen"):
                flags.append(f)
            return super().open(path, f, mode)

    monkeypatch.setattr(fsio, "calls", Spy())
    state.checkpoint(done="a", next="b")
    assert flags and not any(f & os.O_TRUNC for f in flags)
    assert seen.Seen.load(state.seen_path) is not None


def test_a_session_start_reads_no_view_it_knows(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state with a 2.9 MB 10_invariants.md and a 1 MB handoff, written through the store: a session start's
    store part (lock and reconcile, then the resume record) reads kilobytes, not the views (about 4 MB)."""
    st, _ = State.init(repo / "state", "Ship the parser")
    because = "b" * 15_000
    n = 0
    while os.path.getsize(st.path(INV)) < 2_900_000:
        n += 1
        st.invariant(f"decision {n} " + "d" * 15_000, because=because)
    st.handoff("\n".join(f"- step {i:06d}: " + "h" * 80 for i in range(1_000_000 // 95))[:1_000_000])
    assert os.path.getsize(st.path("20_handoff.md")) > 990_000
    st.checkpoint(done="built", next="resume")
    read: list[int] = []
    real_pread, real_read = os.pread, os.read

    def pread(fd: int, n: int, offset: int) -> bytes:
        data = real_pread(fd, n, offset)
        read.append(len(data))
        return data

    def counted_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", pread)
    monkeypatch.setattr(os, "read", counted_read)
    state = State.open(repo / "state")
    with state.reading() as snap:
        state.log_resume(snap, {"read": "test"})
    assert snap.problems == []
    assert sum(read) < 64 << 10, sum(read)
    monkeypatch.undo()
    assert State.open(repo / "state").verify().ok  # and the full check agrees


def test_no_folder_is_listed_when_nothing_can_have_left_a_temporary_file(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temporary file can only be left by a crash, which changes the folder it was made in: while the folders'
    fingerprints are as the cache saw them at the end of the last command, they are not listed."""
    listed: list[str] = []
    real = os.listdir

    def listdir(path: str) -> list[str]:
        listed.append(path)
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    state.checkpoint(done="a", next="b")
    listed.clear()
    state.checkpoint(done="b", next="c")
    assert listed == []
    left = Path(state.root) / f".99_next.md.{os.getpid()}.0123abcd.tmp"
    left.write_bytes(b"a crash")  # as a crash between the temporary file's creation and its rename leaves it
    out = state.checkpoint(done="c", next="d")
    assert not left.exists()
    assert any("temporary file" in r for r in out.repaired), out.repaired
    listed.clear()
    state.checkpoint(done="d", next="e")
    assert listed == []
