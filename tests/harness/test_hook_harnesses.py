"""Every harness's documented hook input (tests/fixtures/hooks/, sources in SOURCES.md), fed to the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import rehydrate
from conftest import run_hook as _run_hook
from rehydrate.store.state import State

FIXTURES = Path(__file__).parent.parent / "fixtures" / "hooks"


def event(repo: Path, harness: str, name: str, **changes: object) -> bytes:
    """A fixture with its made-up project folder replaced by the test's repository."""
    text = (FIXTURES / harness / f"{name}.json").read_text().replace("/home/user/project", str(repo))
    data = json.loads(text)
    data.update(changes)
    return json.dumps(data).encode()


def hook(harness: str, stdin: bytes, cwd: Path) -> tuple[int, dict | None, str]:  # type: ignore[type-arg]
    code, out, err = _run_hook(harness, stdin, cwd)
    return code, (json.loads(out) if out.strip() else None), err


def last(state: State) -> dict:  # type: ignore[type-arg]
    return json.loads(Path(state.wal_path).read_text().splitlines()[-1])


@pytest.fixture
def guarded(state: State) -> State:
    state.reject("Patch src/auth by hand", because="the auth code is generated", guard="src/auth*")
    return state


@pytest.mark.parametrize("name", sorted(p.stem for p in (FIXTURES / "claude").glob("SessionStart-*.json")))
def test_claude_session_start_fixtures(repo: Path, state: State, name: str) -> None:
    code, out, err = hook("claude", event(repo, "claude", name), repo)
    assert code == 0 and out is not None, err
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "Ship the parser" in context and len(context) <= 9000
    assert context.startswith("A context compaction just happened") == name.endswith("compact")


def test_codex_session_start_compact_and_pre_compact(repo: Path, state: State) -> None:
    code, out, _ = hook("codex", event(repo, "codex", "SessionStart-compact"), repo)
    assert code == 0 and out is not None
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("A context compaction just happened")
    code, out, _ = hook("codex", event(repo, "codex", "PreCompact"), repo)
    assert (code, out) == (0, None)
    assert last(state)["data"]["trigger"] == "auto" and last(state)["op"] == "compaction"


def test_codex_apply_patch_on_a_guarded_path_is_warned(repo: Path, guarded: State) -> None:
    code, out, _ = hook("codex", event(repo, "codex", "PreToolUse-apply_patch"), repo)
    assert code == 0 and out is not None
    assert "Patch src/auth by hand" in out["systemMessage"]  # Codex has no `ask`: a warning to model and user
    assert out["hookSpecificOutput"]["additionalContext"] == out["systemMessage"]
    Path(guarded.path("config.json")).write_text('{"guard": "deny"}')
    code, out, _ = hook("codex", event(repo, "codex", "PreToolUse-apply_patch"), repo)
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_gemini_compression_then_before_agent_injects_once(repo: Path, state: State) -> None:
    code, out, _ = hook("gemini", event(repo, "gemini", "SessionStart-startup"), repo)
    assert code == 0 and out is not None and out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)[1] is None  # no compression yet
    assert hook("gemini", event(repo, "gemini", "PreCompress-auto"), repo)[:2] == (0, None)
    assert last(state)["op"] == "precompress"  # Gemini fires it on every request: not a compaction
    assert hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)[1] is None
    session = json.loads(event(repo, "gemini", "BeforeAgent"))["session_id"]
    state.record("compaction", {"phase": "post", "session_id": session})  # a compaction that is confirmed
    code, out, _ = hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)
    assert out is not None and out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("A context compaction just happened")
    assert hook("gemini", event(repo, "gemini", "BeforeAgent"), repo)[1] is None  # once
    assert state.verify().ok


def test_gemini_write_on_a_guarded_path(repo: Path, guarded: State) -> None:
    code, out, _ = hook("gemini", event(repo, "gemini", "BeforeTool-write_file"), repo)
    assert code == 0 and out is not None and "Patch src/auth by hand" in out["systemMessage"]
    Path(guarded.path("config.json")).write_text('{"guard": "deny"}')
    out = hook("gemini", event(repo, "gemini", "BeforeTool-write_file"), repo)[1]
    assert out is not None and out["decision"] == "deny" and "generated" in out["reason"]


def test_install_all_writes_every_harness_and_uninstall_restores(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Agents\n\nBe brief.\n")
    assert rehydrate("init", "--goal", "g").code == 0
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    r = rehydrate("install", "all")
    assert r.code == 0, r.err
    claude = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    codex = json.loads((repo / ".codex" / "hooks.json").read_text())["hooks"]
    gemini = json.loads((repo / ".gemini" / "settings.json").read_text())["hooks"]
    # `rehydrate`, or this installation's full path where a harness started outside the venv would not find it
    program = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["rehydrate"]["command"]
    assert program == "rehydrate" or (Path(program).is_absolute() and Path(program).name == "rehydrate")
    assert codex["SessionStart"][0]["hooks"][0]["command"] == f"{program} hook codex"
    assert "matcher" not in gemini["SessionStart"][0] and gemini["BeforeTool"][0]["hooks"][0]["timeout"] == 10000
    assert claude["PreToolUse"][0]["hooks"][0]["command"] == f"{program} hook claude"
    assert "alwaysApply: true" in (repo / ".cursor" / "rules" / "rehydrate.mdc").read_text()
    server = {"command": program, "args": ["mcp"]}
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"rehydrate": server}}
    assert json.loads((repo / ".gemini" / "settings.json").read_text())["mcpServers"] == {"rehydrate": server}
    assert (
        f'[mcp_servers.rehydrate]\ncommand = "{program}"\nargs = ["mcp"]'
        in (repo / ".codex" / "config.toml").read_text()
    )
    for name in ("AGENTS.md", "GEMINI.md", ".github/copilot-instructions.md"):
        assert (repo / name).read_text().count("rehydrate resume") == 1, name
    assert (repo / "AGENTS.md").read_text().startswith("# Agents\n\nBe brief.\n")
    again = rehydrate("install", "all", "--json")
    assert again.code == 0 and not any(f["changed"] for f in json.loads(again.out)["files"])
    assert rehydrate("install", "all", "--uninstall").code == 0
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    after = {p: b for p, b in after.items() if p.parent.name != "state" and "wal" not in p.parts}
    assert after == {p: b for p, b in before.items() if p.parent.name != "state" and "wal" not in p.parts}
    for folder in (".claude", ".codex", ".gemini", ".cursor", ".github"):  # what the install made, it took back
        assert not (repo / folder).exists(), folder
