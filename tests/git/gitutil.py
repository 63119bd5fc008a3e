"""Real-git helpers for sync's, team's and resolve's tests (WP5's own: no conftest, so that they do not depend on
tests/git/conftest.py): a bare remote and clones in a temporary folder, git with no system or global config, and
the real CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Tess",
    "GIT_AUTHOR_EMAIL": "tess@example.invalid",
    "GIT_COMMITTER_NAME": "Tess",
    "GIT_COMMITTER_EMAIL": "tess@example.invalid",
}


def git_env(home: Path, identity: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "REHYDRATE_"))}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    if identity:
        env.update(IDENTITY)
    return env


@dataclass
class Run:
    code: int
    out: str
    err: str


class Team:
    """A bare remote seeded with a state folder (actor `agent`) and app.py; clones made on demand."""

    def __init__(self, tmp: Path, goal: str = "Ship the parser") -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.home.mkdir(exist_ok=True)
        self.env = git_env(self.home)
        self.remote = tmp / "remote.git"
        seed = tmp / "seed"
        self.git(tmp, "init", "-q", "-b", "main", str(seed))
        (seed / "app.py").write_text("print('hello')\n")
        r = self.rh(seed, "init", "--goal", goal)
        assert r.code == 0, r
        self.git(seed, "add", "-A")
        self.git(seed, "commit", "-qm", "seed")
        self.git(tmp, "clone", "-q", "--bare", str(seed), str(self.remote))

    def clone(self, name: str) -> Path:
        path = self.tmp / name
        self.git(self.tmp, "clone", "-q", str(self.remote), str(path))
        return path

    def git(self, cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
        p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env or self.env, check=False)
        if check and p.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p.stdout

    def rh(self, cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Run:
        p = subprocess.run(
            [sys.executable, "-m", "rehydrate", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=timeout,
            check=False,
        )
        return Run(p.returncode, p.stdout, p.stderr)

    def start_rh(self, cwd: Path, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "rehydrate", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )

    def sync(self, cwd: Path, *args: str, env: dict[str, str] | None = None) -> Run:
        r = self.rh(cwd, "sync", *args, env=env)
        assert "Traceback" not in r.err, r
        return r

    def head(self, cwd: Path, ref: str = "HEAD") -> str:
        return self.git(cwd, "rev-parse", ref).strip()

    def remote_head(self) -> str:
        return self.git(self.remote, "rev-parse", "main").strip()

    def tree(self, cwd: Path, ref: str = "HEAD") -> dict[str, str]:
        """path -> blob of every file committed at ref."""
        out = self.git(cwd, "ls-tree", "-r", "-z", ref)
        return {e.split("\t", 1)[1]: e.split()[2] for e in out.split("\0") if e}

    def commit_code(self, cwd: Path, name: str, text: str, message: str = "code") -> str:
        (cwd / name).write_text(text)
        self.git(cwd, "add", name)
        self.git(cwd, "commit", "-qm", message)
        return self.head(cwd)


def append_lines(path: Path, *lines: str) -> None:
    """Lines added at the end of a state file, as a writer appends records (sync does not read them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        for line in lines:
            f.write(line + "\n")


def snapshot(team: Team, cwd: Path) -> dict[str, object]:
    """Everything sync must not change: refs, HEAD, the index (with stages and modes), status, stash, the working
    tree's bytes and modes outside .git."""
    files: dict[str, tuple[int, bytes | None]] = {}
    for folder, dirs, names in os.walk(cwd):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            p = Path(folder) / name
            st = os.lstat(p)
            files[str(p.relative_to(cwd))] = (st.st_mode, p.read_bytes() if p.is_file() else None)
    quiet = {**team.env, "GIT_OPTIONAL_LOCKS": "0"}  # the snapshot's own `git status` must not refresh the index
    return {
        "refs": team.git(cwd, "for-each-ref", env=quiet),
        "head": team.git(cwd, "rev-parse", "HEAD", env=quiet),
        "symbolic": team.git(cwd, "symbolic-ref", "-q", "HEAD", check=False, env=quiet),
        "index": team.git(cwd, "ls-files", "-s", "--debug", env=quiet),
        "index_bytes": (cwd / ".git" / "index").read_bytes(),
        "status": team.git(cwd, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored", env=quiet),
        "stash": team.git(cwd, "stash", "list", env=quiet),
        "files": files,
    }


def outside(snap: dict[str, object]) -> dict[str, object]:
    """What a snapshot says of the paths outside state/."""
    files = {k: v for k, v in snap["files"].items() if not k.startswith("state/")}  # type: ignore[attr-defined]
    index = [ln for ln in str(snap["index"]).splitlines() if "\tstate/" not in ln and not ln.startswith("  ")]
    status = [e for e in str(snap["status"]).split("\0") if e and " state/" not in e and not e.startswith("state/")]
    return {"files": files, "index": index, "status": status, "stash": snap["stash"]}
