"""Shared fixtures: every test runs with a temporary home, real git repositories and real subprocesses."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REAL_HOME = os.path.expanduser("~")
# The real transcripts of shared/fixtures, beside the checkout (as CI lays it out). Read in place: NOTICE.md stays.
REAL_TRANSCRIPTS = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "transcripts"


def needs_real_transcripts() -> pytest.MarkDecorator:
    """Skip where shared/fixtures is not beside the checkout; in CI, where it always is, its absence is a failure."""
    if not REAL_TRANSCRIPTS.is_dir() and os.environ.get("CI"):
        raise RuntimeError(f"CI must have shared/fixtures beside the checkout: {REAL_TRANSCRIPTS} is missing")
    return pytest.mark.skipif(not REAL_TRANSCRIPTS.is_dir(), reason="shared/fixtures is not beside this checkout")


BENCH = Path(__file__).resolve().parent.parent / "bench"


def bench_module(name: str) -> Iterator[ModuleType]:
    """bench/NAME.py loaded as a module (`bench_NAME`: never mistaken for a package module of the same name), its
    folder on sys.path while it is used, for its `import _common`; sys.path as it was afterwards. For a fixture:
    `yield from bench_module("cursor")`."""
    saved = list(sys.path)
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path[:] = saved


_FD_DIR = "/proc/self/fd"


def _open_descriptors() -> dict[int, str]:
    """Each open descriptor of this process, with what it points to (so that a reused number still counts)."""
    found = {}
    for name in os.listdir(_FD_DIR):
        try:
            found[int(name)] = os.readlink(f"{_FD_DIR}/{name}")
        except OSError:  # the listing's own descriptor, closed by now
            pass
    return found


@pytest.fixture(autouse=True)
def no_leaked_descriptors() -> Iterator[None]:
    """A test that leaves a descriptor open fails (at teardown), naming what it left open.

    Defined first, so that it wraps every other fixture of the test. A descriptor that garbage collection closes
    (an object dropped without close() that releases its own) is not a leak. Where /proc is missing, it does nothing.
    """
    if not os.path.isdir(_FD_DIR):
        yield
        return
    before = _open_descriptors()
    yield
    leaked = {fd: to for fd, to in _open_descriptors().items() if before.get(fd) != to}
    if leaked:  # only now pay for a collection: unreachable objects may still hold theirs
        gc.collect()
        leaked = {fd: to for fd, to in _open_descriptors().items() if before.get(fd) != to}
    assert not leaked, f"the test left {len(leaked)} descriptor(s) open: " + ", ".join(
        f"{fd} -> {to}" for fd, to in sorted(leaked.items())[:10]
    )


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No test reads or writes the real home folder: HOME, XDG folders and git's global config are temporary."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("REHYDRATE_DIR", "REHYDRATE_ACTOR", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    before = _home_snapshot()
    yield home
    assert _home_snapshot() == before, "a test wrote to the real home folder"


# The files in the real home that rehydrate could ever write (crash log, user-level harness settings).
_GUARDED = (
    ".cache/rehydrate",
    ".claude/settings.json",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".gemini/settings.json",
)


def _home_snapshot() -> dict[str, tuple[int, int]]:
    seen: dict[str, tuple[int, int]] = {}
    for name in _GUARDED:
        path = os.path.join(REAL_HOME, name)
        paths = [path]
        if os.path.isdir(path):
            paths = [os.path.join(root, f) for root, _dirs, files in os.walk(path) for f in files]
        for p in paths:
            if os.path.isfile(p):
                st = os.stat(p)
                seen[p] = (st.st_size, st.st_mtime_ns)
    return seen


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real git repository with one commit; the current directory for the test."""
    root = git_repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    return root


def git_repo(root: Path) -> Path:
    """A real git repository at root (created) with one commit."""
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text("print('hello')\n")
    git(root, "add", "app.py")
    git(root, "commit", "-qm", "first")
    return root


@dataclass
class Result:
    code: int
    out: str
    err: str


def rehydrate(
    *args: str,
    cwd: Path | str | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> Result:
    """Run the real CLI in a subprocess (python -m rehydrate)."""
    proc = subprocess.run(
        [sys.executable, "-m", "rehydrate", *args],
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def run_hook(
    harness: str, event: object, cwd: Path, *, timeout: float = 60
) -> tuple[int, str, str]:  # H's helper: every hook test's one way to call `rehydrate hook HARNESS`
    """`rehydrate hook harness` in cwd with event on stdin (a dict as JSON, text as UTF-8, bytes as they are):
    (exit code, stdout, stderr). harness may name the event after it ("copilot sessionStart"), as the commands of a
    harness whose input names none do (caller)."""
    import json

    data = event if isinstance(event, bytes) else (event if isinstance(event, str) else json.dumps(event)).encode()
    proc = subprocess.run(
        [sys.executable, "-m", "rehydrate", "hook", *harness.split()],
        input=data,
        capture_output=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


HOOK_FIXTURES = Path(__file__).parent / "fixtures" / "hooks"  # each harness's documented hook inputs (SOURCES.md)


def caller(harness: str, name: str) -> str:
    """What run_hook is given for the fixture `name` of harness: the harness, and for one whose input names no event
    (GitHub Copilot CLI), the event its command names: the fixture's name up to its first `-`."""
    return f"{harness} {name.split('-', maxsplit=1)[0]}" if harness == "copilot" else harness


def hook_event(cwd: Path, harness: str, name: str, **changes: object) -> bytes:
    """A documented hook input (HOOK_FIXTURES/HARNESS/NAME.json), its made-up project folder replaced by cwd and
    its fields changed as given: the bytes a harness would send."""
    data = json.loads((HOOK_FIXTURES / harness / f"{name}.json").read_text().replace("/home/user/project", str(cwd)))
    data.update(changes)
    return json.dumps(data).encode()


def hook_answer(harness: str, event: object, cwd: Path) -> tuple[int, dict[str, Any] | None, str]:
    """run_hook with its stdout parsed: (exit code, the answer or None when the hook said nothing, stderr)."""
    code, out, err = run_hook(harness, event, cwd)
    return code, (json.loads(out) if out.strip() else None), err


def says_nothing(harness: str, event: object, cwd: Path) -> bool:  # F's helper
    """`rehydrate hook harness` given event answered nothing (exit 0, empty stdout and stderr) and wrote nothing
    to the state folder under cwd (state/: every file's bytes the same)."""
    before = tree(cwd / "state")
    code, out, err = run_hook(harness, event, cwd)
    return (code, out, err) == (0, "", "") and tree(cwd / "state") == before


def claude_event(cwd: Path, name: str, **fields: object) -> dict[str, object]:
    """Claude Code's hook input for the event `name` in cwd: the fields every event has, then fields."""
    return {
        "session_id": "9f1c7d2e-0000-4000-8000-000000000001",
        "transcript_path": "/home/user/.claude/projects/-home-user-project/9f1c7d2e.jsonl",
        "cwd": str(cwd),
        "hook_event_name": name,
        "permission_mode": "default",
        **fields,
    }


@pytest.fixture
def state(repo: Path):  # type: ignore[no-untyped-def]
    """An initialized state in the repo fixture, with one decision, one rejected approach and one checkpoint."""
    from rehydrate.store.state import State

    st, _ = State.init(repo / "state", "Ship the parser", "all tests pass")
    st.invariant("Write the WAL before any view", because="a crash between the two must be redoable")
    st.reject("Edit db/schema.sql directly", because="every schema change needs a migration", guard="db/schema.sql")
    st.checkpoint(done="wrote the lexer", next="write the parser")
    return st


def record_lines(st: Any, lines: list[str]) -> None:
    """Entry lines appended to 10_invariants.md, each with the record `invariant` or `reject` writes for it, through
    the library (wal.seal, binding.Lines.add) with buffered writes: a big recorded state in seconds."""
    from rehydrate.store.latches import binding
    from rehydrate.store.layout import INVARIANTS
    from rehydrate.store.wal import back as walback
    from rehydrate.store.wal import record as wal

    last = walback.read_tail(st.wal_path, 1).records[-1][1]
    bound = binding.Lines.parse(last["views"][INVARIANTS])
    assert bound is not None, "the last record does not bind 10 by its running hash"
    prev, seq, ts = last["h"], last["seq"], last["ts"]
    with open(st.path(INVARIANTS), "ab") as view, open(st.wal_path, "ab") as log:
        for line in lines:
            encoded = line.encode()
            view.write(encoded + b"\n")
            bound = bound.add(encoded)
            seq += 1
            op = "reject" if line.startswith("- R-") else "invariant"
            rec = {"v": 1, "seq": seq, "ts": ts, "actor": st.actor, "op": op, "data": {"line": line}}
            rec = wal.seal({**rec, "views": {**last["views"], INVARIANTS: bound.text()}, "prev": prev})
            log.write(wal.encode(rec))
            prev = rec["h"]


def records(root: Path | str, actor: str = "agent") -> list[dict[str, Any]]:
    """Every line of an actor's log in a state folder, parsed (the test reads the file, not the store's readers)."""
    return [json.loads(x) for x in (Path(root) / "wal" / f"{actor}.jsonl").read_bytes().splitlines()]


def tree(root: Path | str) -> dict[str, bytes | None]:
    """Everything under root by its relative path, to compare before and after: a file's bytes; None for a symbolic
    link (never followed) and for a folder (named with a trailing slash)."""
    out: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(folder, name), root) + "/"] = None
        for name in files:
            path = Path(folder, name)
            out[os.path.relpath(path, root)] = None if path.is_symlink() else path.read_bytes()
    return dict(sorted(out.items()))


def verify_codes(st: Any) -> list[tuple[str, int | None]]:
    """(code, line) of each problem the full verify of a State names."""
    return [(p.code, p.line) for p in st.verify().problems]


def no_crash(r: Result) -> None:
    """A CLI run that answered (whatever its verdict): no traceback, no internal error (exit 4)."""
    assert "Traceback" not in r.err and "internal error" not in r.err and "RecursionError" not in r.err, r
    assert r.code != 4, r


# Terminal escapes, NUL, CR, a right-to-left override and a C1 control: what a hostile file may hold.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x00\r\u202egnp.exe\x9b31m"


def shown_clean(text: str) -> None:
    """text holds no control or format character but line breaks and tabs."""
    import unicodedata

    bad = [c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf")]
    assert not bad, [hex(ord(c)) for c in bad]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say why tests were left out: the quick run deselects the end-to-end ones (pyproject's addopts)."""
    left_out = [item for item in terminalreporter.stats.get("deselected", []) if item.get_closest_marker("e2e")]
    why = "they drive the real harness CLIs (node and npm needed); `python -m pytest -m e2e` runs them, as .ci/run does"
    if left_out:
        terminalreporter.write_line(f"{len(left_out)} e2e tests deselected: {why}")
    elif _distributed(terminalreporter.config) and "not e2e" in (terminalreporter.config.option.markexpr or ""):
        # under pytest-xdist the workers deselect, and this process, which prints the summary, collects nothing
        terminalreporter.write_line(f"the e2e tests were deselected (-m 'not e2e'): {why}")


def _distributed(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def paths_touched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path os.lstat, os.stat, os.open and os.readlink are given from now on (until monkeypatch.undo()), in
    order: a test of untrusted paths shows that nothing outside was even looked at."""
    touched: list[str] = []
    for name in ("lstat", "stat", "open", "readlink"):
        real = getattr(os, name)

        def spy(path: Any, *args: Any, _real: Any = real, **kw: Any) -> Any:
            touched.append(os.fsdecode(path) if isinstance(path, (str, bytes)) else str(path))
            return _real(path, *args, **kw)

        monkeypatch.setattr(os, name, spy)
    return touched


# The install's tests (tests/harness/setup/): `rehydrate` found on the PATH, as a user's shell finds it.
@pytest.fixture
def rehydrate_on_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rehydrate` found on the PATH outside any virtual environment (as pipx installs it): hooks name it bare."""
    own = Path(sys.executable).absolute().parent / "rehydrate"
    if not own.is_file():
        pytest.skip("rehydrate is not installed beside this interpreter")
    folder = tmp_path / "on-path"
    folder.mkdir()
    (folder / "rehydrate").symlink_to(own)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin")


def on_a_terminal(
    argv: list[str], *, stream: str = "stdout", **run: Any
) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """argv run with its stdout (or stderr) on a pseudo-terminal the test reads; the other stream piped. The
    process's result, and every byte it wrote to the terminal."""
    primary, secondary = os.openpty()
    other = "stderr" if stream == "stdout" else "stdout"
    try:
        streams = {stream: secondary, other: subprocess.PIPE}
        proc = subprocess.run(argv, **{"timeout": 60, **streams, **run}, check=False)
        os.close(secondary)
        secondary = -1
        out = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # EIO: the terminal's other end is closed and everything was read
                break
            if not chunk:
                break
            out += chunk
        return proc, out
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
