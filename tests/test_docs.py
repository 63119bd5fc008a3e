"""The README and the documentation site: the README stays a page a newcomer reads (at most 250 lines, the install
and test commands first), the site builds with `mkdocs build --strict` (every page in the nav, no broken link or
anchor), and the README's quickstart, run literally in a fresh repository with a user's own CLAUDE.md, gives a
first session that opens `recovered`, before and after the set-up is committed."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_LINES = 250


def test_the_readme_is_short_and_starts_with_install_and_test() -> None:
    lines = README.splitlines()
    assert len(lines) <= MAX_LINES, f"the README has {len(lines)} lines; the reference belongs in docs/"
    first = README[: README.index("\n## ")]
    assert "pip install . && rehydrate demo" in first and "python -m pytest -n auto" in first
    assert "minutes" in first and "shared/fixtures" in first and "-m e2e" in first
    for page in re.findall(r"\]\((docs/[a-z_-]+\.md)\)", README):  # every page the README links exists
        assert (ROOT / page).is_file(), page


def test_every_page_is_in_the_nav_and_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = pytest.importorskip("mkdocs", reason="the docs extra (pip install '.[docs]') builds the site")
    assert mkdocs
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == set(re.findall(r":\s+([a-z_-]+\.md)$", nav, re.M)), "a page is missing from mkdocs.yml's nav"
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "site" / "commands" / "index.html").is_file()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")  # the reference, from docstrings
    assert "One state folder, written by one actor" in api and "Record a rejected approach" in api


def _block(heading: str) -> list[str]:
    """The commands of the first shell block under a README heading, in order, without their comments."""
    section = README[README.index(heading) :]
    block = section[section.index("```sh\n") + 6 :]
    return [line.split("  #")[0].strip() for line in block[: block.index("```")].splitlines() if line.strip()]


def _quickstart() -> list[str]:
    return _block("## Quickstart in your own project")


def _brief(repo: Path, env: dict[str, str]) -> str:
    event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo), "session_id": "s"})
    r = subprocess.run(
        [sys.executable, "-m", "rehydrate", "hook", "claude"],
        cwd=repo,
        input=event,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return str(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"])


def test_the_quickstart_run_literally_gives_a_first_session_that_opens_recovered(repo: Path, tmp_path: Path) -> None:
    """A newcomer's project: their own CLAUDE.md and Claude Code settings, committed; then the README's quickstart,
    each line as the README writes it; the first brief is `recovered`, and so is the one after the commit; then the
    README's uninstall, as written, leaves every user file as it was and nothing of rehydrate behind."""
    mine = "# House rules\n\nTabs, never spaces.\n"
    (repo / "CLAUDE.md").write_text(mine)
    (repo / ".claude").mkdir()
    settings_text = '{\n  "permissions": {"allow": ["Bash(make test)"]}\n}\n'
    (repo / ".claude" / "settings.json").write_text(settings_text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "My project")
    commands = _quickstart()
    assert [c.split()[:2] for c in commands] == [
        ["rehydrate", "init"],
        ["rehydrate", "install"],
        ["rehydrate", "install"],
        ["git", "add"],
    ], commands
    bin_dir = Path(sys.executable).parent  # the rehydrate this interpreter runs, by name
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    for n, command in enumerate(commands):
        if n == len(commands) - 1:  # before the commit: the set-up alone changed since init, and it is ours
            before = _brief(repo, env)
            assert "confidence: recovered" in before, before[-1500:]
        r = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True, env=env, check=False)
        # --check says whether Claude Code will run the hooks: here it is not installed, so it may say no (exit 1)
        allowed = (0, 1) if "--check" in shlex.split(command) else (0,)
        assert r.returncode in allowed, (command, r.stdout, r.stderr)
    assert (repo / "CLAUDE.md").read_text().startswith(mine)
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(make test)"]} and "SessionStart" in settings["hooks"]
    assert git(repo, "status", "--porcelain") == ""  # the quickstart's commit took the whole set-up
    brief = _brief(repo, env)
    assert "confidence: recovered" in brief, brief[-1500:]
    assert "rehydrate checkpoint --done" in brief.splitlines()[-1]  # the brief ends with how to record
    for command in _block("## Uninstall"):  # the README's uninstall, as written: every user file as it was
        r = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True, env=env, check=False)
        assert r.returncode == 0, (command, r.stdout, r.stderr)
    assert (repo / "CLAUDE.md").read_text() == mine
    assert (repo / ".claude" / "settings.json").read_text() == settings_text
    left = git(repo, "status", "--porcelain", "-uall").splitlines()
    # against the commit of the set-up: the user's two files changed back, the state deleted, nothing else
    assert left and all(
        line.startswith(" D state/") or line in (" M CLAUDE.md", " M .claude/settings.json") for line in left
    ), left
    assert not (repo / "state").exists() and not (repo / ".git" / "rehydrate").exists()


def test_the_test_command_says_that_the_e2e_tests_were_left_out_with_or_without_workers() -> None:
    """The README's test command (`pytest -n auto`) deselects the end-to-end tests: the summary says so, under
    pytest-xdist too (where the workers deselect and the summary's process collects nothing)."""

    def pytest(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
        return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)

    spread = pytest("-n", "2", "tests/test_text.py")
    assert spread.returncode == 0 and "the e2e tests were deselected (-m 'not e2e')" in spread.stdout, spread.stdout
    alone = pytest("tests/e2e/test_e2e_claude.py")
    assert re.search(r"^\d+ e2e tests deselected: .*`python -m pytest -m e2e`", alone.stdout, re.M), alone.stdout
