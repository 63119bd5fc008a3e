"""checks.git.config: user.email read from git's config files says what `git config user.email` says, or UNKNOWN
(then git is asked). Each case is checked against the real git in the same environment."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from rehydrate.checks.git import config as gitconfig


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))}
    return {**keep, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", **extra}


def _git_says(repo: Path, env: dict[str, str]) -> str | None:
    done = subprocess.run(
        ["git", "config", "user.email"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True, env=_env(tmp_path))
    return path


CASES = {
    "none": ("", ""),
    "repo": ("", "[user]\n\temail = me@repo.example\n"),
    "global then repo": ("[user]\n\temail = me@home.example\n", "[user]\n\temail = me@repo.example\n"),
    "global only": ("[User]\n\tEmail = me@home.example ; a comment\n", ""),
    "quoted": ("", '[user]\n\temail = "me @ repo.example"\n'),
    "another section": ("", '[core]\n\temail = no@x\n[user "work"]\n\temail = no@y\n'),
    "comments": ("# [user]\n# email = no@x\n[user]\n  email=me@x.example # mine\n", ""),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_files_say_what_git_says(repo: Path, tmp_path: Path, name: str) -> None:
    home_text, repo_text = CASES[name]
    env = _env(tmp_path)
    (Path(env["HOME"]) / ".gitconfig").write_text(home_text)
    with (repo / ".git" / "config").open("a") as f:
        f.write(repo_text)
    said = gitconfig.user_email(str(repo / ".git"), str(repo / ".git"), env)
    assert said is not gitconfig.UNKNOWN and said == _git_says(repo, env)


def test_the_xdg_file_and_git_config_global(repo: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "config").write_text("[user]\n\temail = me@xdg.example\n")
    env = _env(tmp_path, XDG_CONFIG_HOME=str(xdg))
    said = gitconfig.user_email(str(repo / ".git"), str(repo / ".git"), env)
    assert said == _git_says(repo, env) == "me@xdg.example"
    other = tmp_path / "other.gitconfig"
    other.write_text("[user]\n\temail = me@other.example\n")
    env = _env(tmp_path, XDG_CONFIG_HOME=str(xdg), GIT_CONFIG_GLOBAL=str(other))
    said = gitconfig.user_email(str(repo / ".git"), str(repo / ".git"), env)
    assert said == _git_says(repo, env) == "me@other.example"


@pytest.mark.parametrize(
    ("text", "extra"),
    [
        ("[include]\n\tpath = other\n", {}),
        ('[includeIf "gitdir:~/"]\n\tpath = other\n', {}),
        ("[user]\n\temail = a\\\n b\n", {}),
        ("[user]\n", {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.email", "GIT_CONFIG_VALUE_0": "e@x"}),
    ],
)
def test_what_the_files_cannot_settle_is_left_to_git(
    repo: Path, tmp_path: Path, text: str, extra: dict[str, str]
) -> None:
    env = _env(tmp_path, **extra)
    (Path(env["HOME"]) / ".gitconfig").write_text(text)
    assert gitconfig.user_email(str(repo / ".git"), str(repo / ".git"), env) is gitconfig.UNKNOWN
