"""Symbolic links on the way to a harness file: followed inside the project, refused out of it, modes kept.

Every case runs the real CLI (`rehydrate init --rules ...`, `rehydrate install ...`) on real files and real links,
and compares the bytes and modes of everything the link points at before and after.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate.harness.setup import rules

Snapshot = dict[str, tuple[str, bytes, int]]


def snapshot(root: Path) -> Snapshot:
    """Every entry under root: its kind, its bytes (or link target) and its mode."""
    seen: Snapshot = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                seen[rel] = ("link", os.readlink(path).encode(), 0)
            elif stat.S_ISDIR(st.st_mode):
                seen[rel] = ("dir", b"", stat.S_IMODE(st.st_mode))
            else:
                seen[rel] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
    return seen


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project, holding a private file and a private settings folder."""
    out = tmp_path / "outside"
    (out / "folder").mkdir(parents=True)
    secret = out / "notes.md"
    secret.write_bytes(b"my private notes\n")
    secret.chmod(0o600)
    settings = out / "folder" / "settings.json"
    settings.write_bytes(b'{"model": "mine"}\n')
    settings.chmod(0o600)
    return out


# ------------------------------------------------------------------------------------------------ init --rules


def test_init_rules_refuses_claude_md_linked_out_of_the_project(repo: Path, outside: Path) -> None:
    os.symlink(outside / "notes.md", repo / "CLAUDE.md")
    before = snapshot(outside)
    r = rehydrate("init", "--goal", "g", "--rules", "claude")
    assert r.code == 3, (r.out, r.err)
    assert f"{repo / 'CLAUDE.md'} is a symbolic link to {outside / 'notes.md'}" in r.err
    assert "outside the project" in r.err and "replace the link" in r.err and "Traceback" not in r.err
    assert snapshot(outside) == before  # the bytes and the 0600 mode


def test_init_rules_writes_through_a_link_inside_the_project_keeping_the_mode(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Team rules\n")
    (repo / "AGENTS.md").chmod(0o640)
    os.symlink("AGENTS.md", repo / "CLAUDE.md")
    r = rehydrate("init", "--goal", "g", "--rules", "claude")
    assert r.code == 0, r.err
    assert "AGENTS.md updated" in r.out and "CLAUDE.md unchanged" in r.out
    assert os.readlink(repo / "CLAUDE.md") == "AGENTS.md"
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith("# Team rules\n") and text.count(rules.BEGIN) == 1
    assert mode(repo / "AGENTS.md") == 0o640


def test_init_rules_keeps_a_plain_files_mode(repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("# Mine\n")
    (repo / "CLAUDE.md").chmod(0o600)
    assert rehydrate("init", "--goal", "g", "--rules", "claude").code == 0
    assert rules.BEGIN in (repo / "CLAUDE.md").read_text() and mode(repo / "CLAUDE.md") == 0o600


def test_init_rules_never_writes_into_git_or_the_state_folder(repo: Path) -> None:
    config = (repo / ".git" / "config").read_bytes()
    os.symlink(".git/config", repo / "GEMINI.md")
    os.symlink("state/00_goal.md", repo / "CLAUDE.md")  # dangling until init makes the goal
    r = rehydrate("init", "--goal", "g", "--rules", "claude,gemini")
    assert r.code == 3 and "symbolic link" in r.err and "Traceback" not in r.err
    assert (repo / ".git" / "config").read_bytes() == config
    assert not (repo / "state").exists()  # refused before the state was created: nothing half-done
    os.unlink(repo / "GEMINI.md")
    r = rehydrate("init", "--goal", "g", "--rules", "claude")  # the link into the state folder alone
    assert r.code == 3 and "symbolic link" in r.err and "Traceback" not in r.err
    assert not (repo / "state").exists()


# ------------------------------------------------------------------------------------------------ install

# (harness, the link's path in the project, what it points at in `outside`, a file install would write under it)
OUT_OF_PROJECT = [
    ("claude", ".claude", "folder", ".claude/settings.json"),
    ("claude", ".claude/settings.json", "folder/settings.json", ".claude/settings.json"),
    ("codex", ".codex", "folder", ".codex/hooks.json"),
    ("codex", "AGENTS.md", "notes.md", "AGENTS.md"),
    ("gemini", ".gemini", "folder", ".gemini/settings.json"),
    ("gemini", "GEMINI.md", "notes.md", "GEMINI.md"),
    ("cursor", ".cursor", "folder", ".cursor/rules/rehydrate.mdc"),
    ("cursor", ".cursor/rules", "folder", ".cursor/rules/rehydrate.mdc"),
    ("copilot", ".github", "folder", ".github/copilot-instructions.md"),
    ("copilot", ".github/copilot-instructions.md", "notes.md", ".github/copilot-instructions.md"),
    ("mcp", ".mcp.json", "folder/settings.json", ".mcp.json"),
    ("mcp", ".codex", "folder", ".codex/config.toml"),
    ("mcp", ".gemini", "folder", ".gemini/settings.json"),
]


@pytest.mark.parametrize(("harness", "link", "target", "written"), OUT_OF_PROJECT)
def test_install_refuses_a_link_out_of_the_project(
    repo: Path, outside: Path, harness: str, link: str, target: str, written: str
) -> None:
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / target, repo / link)
    before = snapshot(outside)
    project_before = snapshot(repo)
    r = rehydrate("install", harness)
    assert r.code == 3, (r.out, r.err)
    assert f"{repo / link} is a symbolic link to {outside / target}" in r.err, r.err
    assert "outside the project" in r.err and "nothing was written" in r.err
    assert "replace the link" in r.err and "verify --repair" not in r.err and "Traceback" not in r.err
    assert snapshot(outside) == before
    assert snapshot(repo) == project_before
    assert not (Path(os.environ["XDG_STATE_HOME"]) / "rehydrate").exists()


def test_uninstall_refuses_a_link_out_of_the_project_too(repo: Path, outside: Path) -> None:
    assert rehydrate("install", "claude").code == 0
    (outside / "folder" / "settings.json").write_bytes((repo / ".claude" / "settings.json").read_bytes())
    (repo / ".claude" / "settings.json").unlink()
    (repo / ".claude").rmdir()
    os.symlink(outside / "folder", repo / ".claude")
    before = snapshot(outside)
    r = rehydrate("install", "claude", "--uninstall")
    assert r.code == 3 and "outside the project" in r.err
    assert snapshot(outside) == before


def test_install_follows_a_folder_link_inside_the_project(repo: Path) -> None:
    (repo / "config" / "claude").mkdir(parents=True)
    users = b'{"permissions": {"allow": ["Bash(make)"]}}\n'
    settings = repo / "config" / "claude" / "settings.json"
    settings.write_bytes(users)
    settings.chmod(0o600)
    os.symlink("config/claude", repo / ".claude")
    r = rehydrate("install", "claude")
    assert r.code == 0, r.err
    assert f"through the link {repo / '.claude'}, to {settings}" in r.out
    assert os.path.islink(repo / ".claude")
    assert "rehydrate hook claude" in settings.read_text() and mode(settings) == 0o600
    assert rehydrate("install", "claude", "--uninstall").code == 0
    assert settings.read_bytes() == users and mode(settings) == 0o600 and os.path.islink(repo / ".claude")


def test_install_keeps_the_mode_of_every_file_it_writes(repo: Path) -> None:
    (repo / ".claude").mkdir()
    settings = repo / ".claude" / "settings.json"
    settings.write_bytes(b'{"env": {"TOKEN": "secret"}}\n')
    settings.chmod(0o600)
    (repo / "AGENTS.md").write_text("# Rules\n")
    (repo / "AGENTS.md").chmod(0o664)
    assert rehydrate("install", "claude", "codex").code == 0
    assert mode(settings) == 0o600 and mode(repo / "AGENTS.md") == 0o664
    assert rehydrate("install", "claude", "codex", "--uninstall").code == 0
    assert mode(settings) == 0o600 and mode(repo / "AGENTS.md") == 0o664
    # the record keeps copies of the settings (secrets included): only its owner may read it
    record = Path(os.environ["XDG_STATE_HOME"]) / "rehydrate" / "installs.json"
    assert mode(record) == 0o600


def test_a_link_loop_or_a_file_in_place_of_a_folder_is_a_message(repo: Path) -> None:
    os.symlink(".claude", repo / ".claude")
    r = rehydrate("install", "claude")
    assert r.code == 3 and "loops" in r.err and "Traceback" not in r.err
    (repo / ".claude").unlink()
    (repo / ".claude").write_text("not a folder\n")
    r = rehydrate("install", "claude")
    assert r.code == 3 and "is not a folder" in r.err and "Traceback" not in r.err
    assert (repo / ".claude").read_text() == "not a folder\n"


# ------------------------------------------------------------------------------------------------ install --user


def test_user_install_follows_a_dotfiles_link_keeping_the_mode(repo: Path, isolated_home: Path) -> None:
    dotfiles = isolated_home / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    settings = dotfiles / "settings.json"
    settings.write_bytes(b'{"model": "opus"}\n')
    settings.chmod(0o600)
    os.symlink(dotfiles, isolated_home / ".claude")
    r = rehydrate("install", "claude", "--user")
    assert r.code == 0, r.err
    assert os.path.islink(isolated_home / ".claude") and mode(settings) == 0o600
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and "SessionStart" in data["hooks"]
    assert rehydrate("install", "claude", "--user", "--uninstall").code == 0
    assert settings.read_bytes() == b'{"model": "opus"}\n' and mode(settings) == 0o600


def _foreign_folder(tmp_path: Path) -> Path:
    """A folder that belongs to another user (as root: one given to nobody; otherwise one under `/`)."""
    if os.geteuid() == 0:
        folder = tmp_path / "someone-else" / ".claude"
        folder.mkdir(parents=True)
        (folder / "settings.json").write_bytes(b'{"theirs": true}\n')
        (folder / "settings.json").chmod(0o600)
        for path in (folder / "settings.json", folder, folder.parent):
            os.chown(path, 65534, 65534)
        return folder
    if os.stat("/").st_uid == os.geteuid():
        pytest.skip("needs a folder that belongs to another user")
    return Path("/rehydrate-test-absent") / ".claude"


def test_user_install_never_follows_a_link_into_another_users_folder(
    repo: Path, isolated_home: Path, tmp_path: Path
) -> None:
    theirs = _foreign_folder(tmp_path)
    os.symlink(theirs, isolated_home / ".claude")
    before = snapshot(theirs.parent) if theirs.exists() else {}
    r = rehydrate("install", "claude", "--user")
    assert r.code == 3, (r.out, r.err)
    assert f"{isolated_home / '.claude'} is a symbolic link to {theirs}" in r.err
    assert "belongs to" in r.err and "not to you" in r.err and "Traceback" not in r.err
    assert (snapshot(theirs.parent) if theirs.exists() else {}) == before


def test_user_install_never_follows_a_file_link_to_another_users_file(
    repo: Path, isolated_home: Path, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a file that belongs to another user needs root")
    theirs = _foreign_folder(tmp_path)
    (isolated_home / ".claude").mkdir()
    os.symlink(theirs / "settings.json", isolated_home / ".claude" / "settings.json")
    before = snapshot(theirs)
    r = rehydrate("install", "claude", "--user")
    assert r.code == 3 and "uid 65534" in r.err and "not to you" in r.err, r.err
    assert snapshot(theirs) == before
