"""Hostile files: a state path that is a symlink, a FIFO or a folder, hostile actor names, a --dir that is a file.

Each case runs the real CLI in a subprocess with a timeout and asserts: no hang, no traceback, exit 1 or 3 with a
message naming the file, the hostile object left where it was, and not one byte written outside the state folder.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import Result, rehydrate
from rehydrate.store.state import State

TIMEOUT = 90.0  # generous: a hang is what this catches, and a loaded 2-core machine is slow, not hung

# (command line, the view file the command writes, or None)
COMMANDS: list[tuple[list[str], str | None]] = [
    (["checkpoint", "--done", "wrote the lexer", "--next", "write the parser"], "99_next.md"),
    (["invariant", "Keep the AST immutable", "--because", "the checker shares subtrees"], "10_invariants.md"),
    (["handoff"], "20_handoff.md"),
    (["verify"], None),
    (["resume"], None),
]


@dataclass
class World:
    """A repository with a state, a pristine copy of it, and things outside the state folder to protect."""

    repo: Path
    state: Path
    pristine: Path
    outside: Path  # a folder outside the state folder (and outside the repository)
    secret: Path  # a file in it, the target of the symlinks
    copy: Path  # a copy of the state, outside: the target of a symlinked state or wal folder

    def reset(self) -> None:
        if os.path.lexists(self.state):
            if stat.S_ISDIR(os.lstat(self.state).st_mode):
                shutil.rmtree(self.state)
            else:
                self.state.unlink()
        shutil.copytree(self.pristine, self.state, symlinks=True)


def snapshot(top: Path, skip: Path, *more: Path) -> dict[str, tuple[int, bytes | None, int]]:
    """Every entry under top but skip (and more) and the worktree's own rehydrate folder (.git/rehydrate: what this
    worktree has seen of the state, store/local/place.py): (mode, bytes of regular files, mtime)."""
    out: dict[str, tuple[int, bytes | None, int]] = {}
    skipped = {skip, *more}
    for folder, dirs, files in os.walk(top):
        here = Path(folder)
        dirs[:] = [d for d in dirs if here / d not in skipped and not (here.name == ".git" and d == "rehydrate")]
        for name in dirs + files:
            p = here / name
            if p in skipped:
                continue
            st = os.lstat(p)
            data = p.read_bytes() if stat.S_ISREG(st.st_mode) else None
            out[str(p.relative_to(top))] = (st.st_mode, data, st.st_mtime_ns)
    return out


@pytest.fixture
def world(repo: Path, tmp_path: Path) -> World:
    st, _ = State.init(repo / "state", "Ship the parser", "all tests pass")
    st.invariant("Write the WAL before any view", because="a crash between the two must be redoable")
    st.reject("Edit db/schema.sql directly", because="every schema change needs a migration", guard="db/schema.sql")
    st.checkpoint(done="wrote the lexer", next="write the parser")
    st.handoff("read the parser first\n")
    st.checkpoint(done="wrote the parser", next="write the checker")
    assert State.open(repo / "state").verify().ok
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_bytes(b"not rehydrate's to write\n")
    copy = outside / "state-copy"
    shutil.copytree(repo / "state", copy)
    pristine = tmp_path / "pristine"
    shutil.copytree(repo / "state", pristine)
    (repo / ".git" / "rehydrate").mkdir(exist_ok=True)  # this worktree's own folder (store/local/place.py): the journal
    return World(repo, repo / "state", pristine, outside, secret, copy)


# ------------------------------------------------------------------------------------------------ what to replace

FILES = ["00_goal.md", "10_invariants.md", "99_next.md", "20_handoff.md", "wal/agent.jsonl", ".lock"]
FOLDERS = ["wal", ""]  # "" is the state folder itself


def make(world: World, target: str, kind: str) -> Path:
    path = world.state / target if target else world.state
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    if kind == "symlink":
        path.symlink_to(world.secret)
    elif kind == "symlink-to-copy":
        path.symlink_to(world.copy / target if target else world.copy)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "file":
        path.write_bytes(b"not a folder\n")
    else:
        raise AssertionError(kind)
    return path


KINDS = {target: ("symlink", "fifo", "folder") for target in FILES} | {
    target: ("symlink", "symlink-to-copy", "fifo", "folder", "file") for target in FOLDERS
}


def kind_of(path: Path) -> str:
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISDIR(mode):
        return "folder"
    return "file"


def run(*args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None) -> Result:
    try:
        return rehydrate(*args, cwd=cwd, stdin=stdin, env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`rehydrate {' '.join(args)}` hung for {TIMEOUT} s")


@pytest.mark.parametrize("target", list(KINDS), ids=[t or "state" for t in KINDS])
def test_hostile_state_path(world: World, target: str) -> None:
    """Each kind of hostile object at this path, each command: 3 x 5 runs for a file, 5 x 5 for a folder."""
    shown = {"": "state", "wal": "wal", "wal/agent.jsonl": "agent.jsonl"}.get(target, target)
    failures: list[str] = []
    for kind, (args, _writes) in itertools.product(KINDS[target], COMMANDS):
        world.reset()
        path = make(world, target, kind)
        outside_before = snapshot(world.repo.parent, world.state, world.repo / ".git" / "rehydrate")
        result = run(*args, cwd=world.repo, stdin="the handoff note\n")
        what = f"`rehydrate {args[0]}` with {target or 'state'} as a {kind}"
        text = result.out + result.err
        if "Traceback" in text:
            failures.append(f"{what}: traceback:\n{result.err}")
        if result.code not in (1, 3):
            failures.append(f"{what}: exit {result.code}, expected 1 or 3\n{result.err}")
        if shown.lower() not in text.lower():
            failures.append(f"{what}: the message does not name {shown!r}:\n{text[-2000:]}")
        if not os.path.lexists(path):
            failures.append(f"{what}: the {kind} was removed")
        elif kind_of(path) != ("symlink" if kind.startswith("symlink") else kind):
            failures.append(f"{what}: the {kind} was replaced by a {kind_of(path)}")
        after = snapshot(world.repo.parent, world.state, world.repo / ".git" / "rehydrate")
        changed = sorted(k for k in outside_before.keys() | after.keys() if outside_before.get(k) != after.get(k))
        if changed:
            failures.append(f"{what}: wrote outside the state folder: {changed[:10]}")
    assert world.secret.read_bytes() == b"not rehydrate's to write\n"
    assert not failures, "\n\n".join(failures)


# ------------------------------------------------------------------------------------------------ actor names

BAD_ACTORS = ["../x", "../../evil", "a/b", "/abs", ".hidden", "..", "-dash", "x" * 65, "ev\nil"]


@pytest.mark.parametrize("via", ["env", "option"])
def test_hostile_actor_names_are_refused(world: World, tmp_path: Path, via: str) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    every: list[tuple[list[str], Path]] = [
        (["init", "--goal", "Ship it"], fresh),
        *[(args, world.repo) for args, _ in COMMANDS],
        (["rotate"], world.repo),
        (["status"], world.repo),
        (["mail", "send", "--to", "bob", "a message"], world.repo),
        (["mail"], world.repo),
        (["promise", "review the parser"], world.repo),
        (["sync", "--dry-run"], world.repo),
    ]
    failures: list[str] = []
    for actor in BAD_ACTORS:
        if via == "env" and actor == "ev\nil":
            continue  # a newline in an environment variable is not portable
        # every command for the classic traversal, the ones that create or append for the other names
        commands = every if actor == "../../evil" else [every[0], every[1], every[4], every[5]]
        for args, cwd in commands:
            before = snapshot(tmp_path, skip=tmp_path / "no such folder")
            if via == "env":
                result = run(*args, cwd=cwd, stdin="note\n", env={"REHYDRATE_ACTOR": actor})
            else:
                result = run(*args, f"--actor={actor}", cwd=cwd, stdin="note\n")
            what = f"`rehydrate {args[0]}` with actor {actor!r} ({via})"
            if "Traceback" in result.err:
                failures.append(f"{what}: traceback\n{result.err}")
            if result.code != 2:
                failures.append(f"{what}: exit {result.code}, expected 2\n{result.err}")
            elif "actor" not in result.err:
                failures.append(f"{what}: the message does not say the actor name is the problem: {result.err}")
            after = snapshot(tmp_path, skip=tmp_path / "no such folder")
            changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
            if changed:
                failures.append(f"{what}: changed {changed[:10]}")
    assert not (fresh / "state").exists()
    assert not list(tmp_path.rglob("*evil*")) and not list(tmp_path.rglob("x.jsonl"))
    assert not failures, "\n\n".join(failures)


def test_valid_but_unusual_actor_names_stay_inside_the_wal_folder(world: World) -> None:
    """Names the pattern allows ('a..b', 'x.y', 64 characters) write exactly state/wal/<name>.jsonl."""
    for actor in ("a..b", "x.y-z_1", "A" * 64):
        result = run(
            "init",
            "--goal",
            "Ship it",
            f"--actor={actor}",
            "--dir",
            str(world.repo / f"st-{len(actor)}"),
            cwd=world.repo,
        )
        assert result.code == 0, result
        assert (world.repo / f"st-{len(actor)}" / "wal" / f"{actor}.jsonl").is_file()


# ------------------------------------------------------------------------------------------------ --dir is a file


@pytest.mark.parametrize(
    "args",
    [
        ["verify"],
        ["checkpoint", "--done", "a", "--next", "b"],
        ["invariant", "x", "--because", "y"],
        ["resume"],
        ["status"],
        ["init", "--goal", "Ship it"],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_dir_pointing_at_a_regular_file(world: World, args: list[str]) -> None:
    notes = world.repo / "notes.txt"
    notes.write_bytes(b"my notes\n")
    mtime = notes.stat().st_mtime_ns
    before = sorted(os.listdir(world.repo))
    result = run(*args, "--dir", str(notes), cwd=world.repo, stdin="x\n")
    assert "Traceback" not in result.err
    assert result.code == 3, result
    assert "notes.txt" in result.err, result.err
    # the message must be true: the file is a regular file, it is just not a folder
    assert "not a regular file" not in result.err, result.err
    assert notes.read_bytes() == b"my notes\n" and notes.stat().st_mtime_ns == mtime
    assert sorted(os.listdir(world.repo)) == before


def test_dir_pointing_at_a_regular_file_with_json_prints_json(world: World) -> None:
    """DESIGN: every command that reports takes --json and then prints one JSON object with a version field."""
    notes = world.repo / "notes.txt"
    notes.write_bytes(b"my notes\n")
    result = run("verify", "--json", "--dir", str(notes), cwd=world.repo)
    assert result.code == 3, result
    # with --json, an error that ends the command still prints one JSON object
    report = json.loads(result.out)
    assert report["version"] == 1 and report["ok"] is False


# ------------------------------------------------------------------------------------------------ the state's words

STATE_WHO = "rehydrate only reads and writes regular files inside the state folder"
STATE_HINT = "move it away and run `rehydrate verify --repair`, or restore the file from git"


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
@pytest.mark.parametrize("target", ["99_next.md", "10_invariants.md", "wal/agent.jsonl"])
def test_a_hostile_state_file_is_named_in_the_state_s_words(world: World, target: str, kind: str) -> None:
    """A state file that is not a regular one is refused in the state's words (the neutral words of fsio are for
    callers that have none), with the state's hint, as before the restructure: in what each command prints, the
    status and verify JSON and the brief's ledger lines."""
    world.reset()
    make(world, target, kind)
    what = "a symbolic link" if kind == "symlink" else "a FIFO"
    said = f"{world.state / target} is {what}; {STATE_WHO}"
    texts = {}
    for args in ([*COMMANDS[0][0]], [*COMMANDS[1][0]], ["status", "--json"], ["verify", "--json"], ["resume"]):
        r = run(*args, cwd=world.repo)
        texts[args[0] + (" --json" if "--json" in args else "")] = text = r.out + r.err
        assert said in text, f"`rehydrate {' '.join(args)}`:\n{text}"
        assert text.count("only reads and writes regular files") == text.count(STATE_WHO), text
        assert "(or restore it from git)" not in text, text
    if target != "10_invariants.md":  # 10's problem is a line of the status, without a hint of its own
        assert f"hint: {STATE_HINT}" in texts["status --json"] and f'"hint": "{STATE_HINT}"' in texts["status --json"]
