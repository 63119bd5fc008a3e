"""`rehydrate install` (cli/install.py): a refusal comes before any write; the flags the library's errors are about."""

from __future__ import annotations

from pathlib import Path

from conftest import rehydrate


def test_install_all_refused_by_one_harness_writes_nothing_for_the_others(repo: Path, tmp_path: Path) -> None:
    assert rehydrate("init", "--goal", "Ship it", cwd=repo).code == 0
    outside = tmp_path / "gemini-elsewhere"
    outside.mkdir()
    (repo / ".gemini").symlink_to(outside)
    r = rehydrate("install", "all", cwd=repo)
    assert r.code == 3, r
    assert ".gemini" in r.err
    assert not (repo / ".claude").exists()
    assert not (repo / ".codex").exists()
    assert list(outside.iterdir()) == []


def test_a_user_wide_install_of_mcp_names_the_flag(repo: Path) -> None:
    r = rehydrate("install", "mcp", "--user", cwd=repo)
    assert r.code == 2 and r.err.startswith("rehydrate: --user"), r.err
    assert not (repo / ".mcp.json").exists()


def test_install_from_a_subfolder_writes_at_the_repository_root_and_says_there_is_no_state(repo: Path) -> None:
    """install finds the project as init does (the repository's root, where the harness looks), and, before init,
    says that the hooks have nothing to read yet."""
    (repo / "sub" / "deeper").mkdir(parents=True)
    r = rehydrate("install", "claude", cwd=repo / "sub" / "deeper")
    assert r.code == 0, r
    assert (repo / ".claude" / "settings.json").is_file() and not (repo / "sub" / ".claude").exists()
    assert "no state in state/ yet" in r.out and "rehydrate init" in r.out
    assert rehydrate("init", "--goal", "Ship it", cwd=repo / "sub").code == 0
    assert (repo / "state" / "wal").is_dir()
    r = rehydrate("install", "claude", cwd=repo / "sub")
    assert r.code == 0 and "no state" not in r.out and "already as it should be" in r.out, r


def test_install_claude_writes_the_boot_rule_in_claude_md_and_uninstall_takes_it_out(repo: Path) -> None:
    """The boot rule is install's too (after an init without --rules): CLAUDE.md is created if needed, a user's
    own CLAUDE.md keeps every line, and --uninstall gives both back as they were."""
    assert rehydrate("init", "--goal", "Ship it", cwd=repo).code == 0
    assert not (repo / "CLAUDE.md").exists()
    assert rehydrate("install", "claude", cwd=repo).code == 0
    text = (repo / "CLAUDE.md").read_text()
    assert "rehydrate resume" in text and "rehydrate checkpoint" in text
    assert rehydrate("install", "claude", "--uninstall", cwd=repo).code == 0
    assert not (repo / "CLAUDE.md").exists()
    mine = "# My rules\n\nTabs, never spaces.\n"
    (repo / "CLAUDE.md").write_text(mine)
    assert rehydrate("install", "claude", cwd=repo).code == 0
    assert (repo / "CLAUDE.md").read_text().startswith(mine) and "rehydrate resume" in (repo / "CLAUDE.md").read_text()
    assert rehydrate("install", "claude", "--uninstall", cwd=repo).code == 0
    assert (repo / "CLAUDE.md").read_text() == mine


def test_init_prints_the_next_steps_and_the_demo_ends_with_them(repo: Path) -> None:
    from rehydrate.harness.setup import NEXT_STEPS

    r = rehydrate("init", "--goal", "Ship it", cwd=repo)
    assert r.code == 0
    assert all(step in r.out for step in NEXT_STEPS[1:]), r.out
    assert "rehydrate install claude" in r.out and "rehydrate install --check claude" in r.out


def test_uninstall_takes_everything_out_byte_for_byte_and_again_changes_nothing(repo: Path) -> None:
    """A user's own CLAUDE.md, AGENTS.md and Claude Code settings, committed; init, then install for every harness;
    `uninstall` leaves every user file as it was and no rehydrate file but the state; a second run changes nothing;
    the state goes only with --state, confirmed."""
    from conftest import git

    mine = {
        "CLAUDE.md": "# House rules\n\nTabs, never spaces.\n",
        "AGENTS.md": "# Agents\n",
        ".claude/settings.json": '{\n  "permissions": {"allow": ["Bash(make test)"]}\n}\n',
    }
    for name, text in mine.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "My project")
    assert rehydrate("init", "--goal", "Ship it", cwd=repo).code == 0
    assert rehydrate("install", "all", cwd=repo).code == 0
    assert (repo / ".codex" / "hooks.json").exists() and "rehydrate" in (repo / "AGENTS.md").read_text()
    r = rehydrate("uninstall", cwd=repo)
    assert r.code == 0 and "kept state/" in r.out, r
    assert {name: (repo / name).read_text() for name in mine} == mine
    assert git(repo, "status", "--porcelain", "--untracked-files=all").split("\n")[0].startswith("?? state/")
    assert all(line.startswith("?? state/") for line in git(repo, "status", "--porcelain", "-uall").splitlines())
    again = rehydrate("uninstall", cwd=repo)
    assert again.code == 0 and "nothing changed" in again.out, again
    refused = rehydrate("uninstall", "--state", cwd=repo)  # no terminal to confirm at
    assert refused.code == 2 and "--yes" in refused.err and (repo / "state" / "wal").is_dir()
    gone = rehydrate("uninstall", "--state", "--yes", cwd=repo)
    assert gone.code == 0 and "removed" in gone.out, gone
    assert not (repo / "state").exists() and not (repo / ".git" / "rehydrate").exists()
    assert git(repo, "status", "--porcelain", "-uall") == ""
