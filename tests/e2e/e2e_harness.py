"""End-to-end tests against the real harness CLIs, pinned, installed from npm into a cache folder under the checkout.

Marked `e2e` and deselected by the quick run (pyproject's addopts); `.ci/run` runs them with `-m e2e`. When node, npm
or a pinned package cannot be installed, the tests FAIL (they never skip): selecting them means wanting them run.

The cache is `$REHYDRATE_E2E_CACHE`, else `tests/e2e/.cache/` (git-ignored), never the user's home. Every run of a
CLI gets a temporary HOME and harness config folders (CLAUDE_CONFIG_DIR, CODEX_HOME), and the venv's bin first on
PATH so that the hooks' bare `rehydrate` is this checkout's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import git, records, rehydrate

# harness -> (npm package, pinned version, its bin)
PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
    "copilot": ("@github/copilot", "1.0.102", "copilot"),
    "qwen": ("@qwen-code/qwen-code", "0.24.4", "qwen"),
}
CACHE = Path(os.environ.get("REHYDRATE_E2E_CACHE") or Path(__file__).resolve().parent / ".cache")
GOAL = "Ship the e2e parser GOAL-7f3a"
SCHEMA = "create table t (id int);\n"
VENV_BIN = Path(sys.executable).parent
# Variables of a coding client or a model API that must not leak from the developer's shell into a harness run.
_LEAKY = (
    *("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX", "GEMINI_", "GOOGLE_", "VERTEX", "AWS_", "NODE_OPTIONS"),
    *("COPILOT", "GH_", "GITHUB_", "QWEN", "DASHSCOPE"),
)


def install_cli(harness: str) -> Path:
    """The pinned CLI's executable, installed with npm into the cache if it is not there yet. Fails, never skips."""
    package, version, binary = PINNED[harness]
    prefix = CACHE / f"{harness}-{version}"
    exe = prefix / "node_modules" / ".bin" / binary
    manifest = prefix / "node_modules" / Path(package) / "package.json"
    if exe.exists() and manifest.exists() and json.loads(manifest.read_text())["version"] == version:
        return exe
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        pytest.fail(f"the e2e tests need node and npm on PATH to install {package}@{version} (.ci/run installs them)")
    prefix.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "npm_config_cache": str(CACHE / "npm-cache"), "npm_config_update_notifier": "false"}
    proc = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", f"{package}@{version}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0 or not exe.exists():
        pytest.fail(f"npm could not install {package}@{version} into {prefix}:\n{proc.stderr[-3000:]}")
    if harness == "copilot":  # it unpacks itself at its first run: once here, not by two tests at once
        unpack(exe)
    return exe


def unpack(exe: Path) -> None:
    """Copilot CLI's package unpacked into the cache the tests share (copilot_env's COPILOT_CACHE_HOME)."""
    import tempfile

    with tempfile.TemporaryDirectory() as home:
        env = {**harness_env(Path(home)), "COPILOT_CACHE_HOME": str(CACHE / "copilot-unpacked")}
        proc = subprocess.run(
            [str(exe), "--version"], env=env, capture_output=True, text=True, timeout=300, check=False
        )
        if proc.returncode != 0:
            pytest.fail(f"{exe} --version failed:\n{proc.stderr[-3000:]}")


@dataclass
class Harness:
    """One harness's pinned CLI, a real git repository with an initialized state, and a temporary home."""

    exe: Path
    repo: Path
    home: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 120, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.exe), *args],
            cwd=self.repo,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def wal(self) -> list[dict[str, Any]]:
        """Every WAL record of every actor, in order of time."""
        return _records(self.repo)

    def ops(self, op: str) -> list[dict[str, Any]]:
        return [r for r in self.wal() if r["op"] == op]

    def config(self, **values: Any) -> None:
        (self.repo / "state" / "config.json").write_text(json.dumps(values))

    def rejected_ids(self) -> list[str]:
        return [r["data"]["id"] for r in self.ops("reject")]


def harness_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LEAKY)}
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CODEX_HOME=str(home / ".codex"),
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        NO_COLOR="1",
        CI="true",
        LANG="C.UTF-8",
    )
    return env


def init_project(repo: Path) -> None:
    """An initialized state in the git repository: a goal and three rejected approaches, one guarding db/."""
    assert (VENV_BIN / "rehydrate").exists(), f"the hooks call `rehydrate`, which is not in {VENV_BIN}"
    (repo / "db").mkdir()
    (repo / "db" / "schema.sql").write_text(SCHEMA)
    git(repo, "add", "db/schema.sql")
    git(repo, "commit", "-qm", "schema")
    r = rehydrate("init", "--goal", GOAL, "--done-when", "tests pass", cwd=repo)
    assert r.code == 0, r.err
    for text, guard in (
        ("Edit db/schema.sql directly", "db/*"),
        ("Use a regex parser", None),
        ("Vendor the lexer", None),
    ):
        extra = ["--guard", guard] if guard else []
        r = rehydrate("reject", text, "--because", "it failed before", *extra, cwd=repo)
        assert r.code == 0, r.err


def reject_many(repo: Path, count: int = 40) -> list[str]:
    """Record `count` rejected approaches in a non-Latin script (two bytes a character in UTF-8); their ids."""
    from rehydrate.store.state import State

    state = State.open(repo / "state")
    for n in range(count):
        state.reject(
            f"Вариант {n}: переписать синтаксический анализатор на регулярных выражениях без грамматики",
            because="он уже ломался на вложенных скобках и медленный",
        )
    return [r["data"]["id"] for r in _records(repo) if r["op"] == "reject"]


def _records(repo: Path) -> list[dict[str, Any]]:
    """Every WAL record of every actor of the repository's state, and every read its journal logged (the `resume`
    records, store/local/journal.py: in the worktree's git folder), in order of time."""
    logs = sorted((repo / "state" / "wal").glob("*.jsonl"))
    found = [r for log in logs for r in records(repo / "state", log.stem)]
    for journal in sorted((repo / ".git" / "rehydrate" / "state" / "journal").glob("*.jsonl")):
        found += [json.loads(x) for x in journal.read_bytes().splitlines()]
    return sorted(found, key=lambda r: (r["ts"], r["seq"]))


def make_harness(name: str, repo: Path, tmp_path: Path) -> Harness:
    """The pinned CLI, the repository with its state (hooks not installed yet), a temporary home."""
    exe = install_cli(name)
    init_project(repo)
    home = tmp_path / "h-home"
    home.mkdir()
    env = harness_env(home)
    (tmp_path / "t").mkdir()
    env["TMPDIR"] = str(tmp_path / "t")  # the CLIs' own temporary files (Claude Code's /tmp/claude-UID) stay here
    return Harness(exe, repo, home, env)


def brief_ids_in(text: str, ids: list[str]) -> list[str]:
    """The ids missing from text."""
    return [i for i in ids if i not in text]


def codex_config(h: Harness, url: str, model: str, *extra: str) -> None:
    """Codex's config.toml in the temporary home: the mock provider at url, the model, extra top-level lines, and the
    project trusted."""
    (h.home / ".codex").mkdir(exist_ok=True)
    (h.home / ".codex" / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "mock"\n'
        + "".join(line + "\n" for line in extra)
        + "\n[model_providers.mock]\n"
        'name = "mock"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "MOCK_API_KEY"\n'
        f"\n[projects.{json.dumps(str(h.repo))}]\n"
        'trust_level = "trusted"\n'
    )


def codex_exec(h: Harness, url: str, model: str, prompt: str, *config: str) -> None:
    """One `codex exec` run against the mock model at url (codex_config with the extra config lines), the sandbox,
    approvals and hook trust off: only the hooks can stop a call."""
    codex_config(h, url, model, *config)
    p = h.run(
        "exec",
        "--dangerously-bypass-hook-trust",
        "--dangerously-bypass-approvals-and-sandbox",
        "--skip-git-repo-check",
        "--json",
        prompt,
    )
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])


def copilot_env(h: Harness, url: str, model: str = "gpt-4.1") -> None:
    """Copilot CLI against the mock model at url (Chat Completions, a custom provider: no GitHub sign-in), offline,
    its home in the temporary one; the package it unpacks on first run is kept in the cache, not in each home."""
    h.env.update(
        COPILOT_HOME=str(h.home / ".copilot"),
        COPILOT_CACHE_HOME=str(CACHE / "copilot-unpacked"),
        COPILOT_OFFLINE="true",
        COPILOT_PROVIDER_BASE_URL=f"{url}/v1",
        COPILOT_PROVIDER_API_KEY="dummy",
        COPILOT_MODEL=model,
    )
    config = h.home / ".copilot" / "config.json"  # the folder trusted, as `copilot` does when you trust it
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"trustedFolders": [str(h.repo)]}))


def copilot_run(h: Harness, prompt: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One `copilot -p` run in the repository, tools allowed (the folder is trusted by copilot_env: else Copilot
    skips the repository's hooks in -p mode without a word)."""
    p = h.run("--no-auto-update", "-p", prompt, "--allow-all-tools", *args, timeout=180)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    return p


def gemini_settings(h: Harness) -> None:
    """Gemini CLI's settings in the temporary home: the API key auth, no updates, no telemetry, the folder trusted
    (else `-p` exits 55)."""
    gemini = h.home / ".gemini"
    gemini.mkdir(exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (gemini / "settings.json").write_text(json.dumps(settings))
    (gemini / "trustedFolders.json").write_text(json.dumps({str(h.repo): "TRUST_FOLDER"}))
    h.env["GEMINI_API_KEY"] = "dummy"


class Terminal:
    """A CLI run in a pseudo-terminal, as a user runs it: what it prints is read all along (so that it never blocks
    on a full terminal) and can be waited for; keys are typed into it."""

    def __init__(self, h: Harness, *args: str) -> None:
        import pty
        import threading

        self.output = ""
        self._seen = threading.Condition()
        import fcntl
        import struct
        import termios

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))  # 50 rows, 200 columns
        env = {k: v for k, v in h.env.items() if k != "CI"}  # CI makes a CLI give up its interactive interface
        env.update(TERM="xterm-256color", COLUMNS="200", LINES="50")
        self.proc = subprocess.Popen(
            [str(h.exe), *args], cwd=h.repo, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
        )
        os.close(slave)
        self._master = master
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:
                chunk = b""
            with self._seen:
                if not chunk:
                    self._seen.notify_all()
                    return
                self.output += chunk.decode("utf-8", "replace")
                self._seen.notify_all()

    def mark(self) -> int:
        """Where the output is now: wait_text(..., since=mark()) waits for what comes after it."""
        with self._seen:
            return len(self.output)

    def shows(self, text: str, timeout: float, since: int = 0) -> bool:
        """Whether the output (after `since`) holds text within timeout seconds, waiting for it until then."""
        with self._seen:
            return self._seen.wait_for(lambda: text in self.output[since:], timeout)

    def wait_text(self, text: str, timeout: float = 60, since: int = 0) -> None:
        """Until the output (after `since`) holds text; AssertionError with the output's end if it does not within
        timeout seconds."""
        with self._seen:
            if not self._seen.wait_for(lambda: text in self.output[since:], timeout):
                raise AssertionError(f"{text!r} never appeared; the terminal's last output:\n{self.screen()[-3000:]}")

    def screen(self) -> str:
        """The output without its terminal control sequences (colours, cursor moves), for reading in a failure."""
        import re

        return re.sub(r"\x1b(\[[0-9;?>]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])", "", self.output)

    def type(self, text: str) -> None:
        os.write(self._master, text.encode())

    def close(self) -> None:
        import signal

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._reader.join(10)
        os.close(self._master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
