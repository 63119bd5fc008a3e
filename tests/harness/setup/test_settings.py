"""Install reads each settings file as its harness does and leaves one that the harness can load.

Gemini CLI reads settings.json with comments; Codex's config.toml may hold `mcp_servers` as an inline table, where
an appended `[mcp_servers.rehydrate]` is invalid TOML. Every result is parsed before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import rehydrate
from rehydrate.harness.setup import settings

try:  # the reader Codex's format is checked with: the standard one where there is one, not the library that wrote it
    import tomllib
except ImportError:  # Python 3.10
    import tomlkit as tomllib  # type: ignore[no-redef]

GEMINI_WITH_COMMENTS = b"""{
  // my model
  "model": {"name": "gemini-2.5-pro"}, /* keep this */
  "ui": {"theme": "GitHub"}
}
"""


def _gemini_reads(data: bytes) -> dict[str, object]:
    """As Gemini CLI loads it: comments stripped, then JSON."""
    return dict(json.loads(settings.strip_comments(data.decode())))


def test_gemini_settings_with_comments_are_merged_and_keep_their_comments(repo: Path) -> None:
    path = repo / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(GEMINI_WITH_COMMENTS)
    r = rehydrate("install", "gemini")
    assert r.code == 0, r.err
    new = path.read_bytes()
    loaded = _gemini_reads(new)
    assert loaded["model"] == {"name": "gemini-2.5-pro"} and loaded["ui"] == {"theme": "GitHub"}
    assert set(loaded["hooks"]) == {"SessionStart", "PreCompress", "BeforeModel", "BeforeTool", "AfterTool"}  # type: ignore[arg-type]
    assert b"// my model" in new and b"/* keep this */" in new
    assert rehydrate("install", "gemini").code == 0 and path.read_bytes() == new  # twice changes nothing
    assert rehydrate("install", "gemini", "--uninstall").code == 0
    assert path.read_bytes() == GEMINI_WITH_COMMENTS


def test_gemini_settings_with_comments_and_hooks_of_their_own(repo: Path) -> None:
    path = repo / ".gemini" / "settings.json"
    path.parent.mkdir()
    own = b'{\n  // lint first\n  "hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "./lint"}]}]}\n}\n'
    path.write_bytes(own)
    r = rehydrate("install", "gemini", "mcp")
    assert r.code == 0, r.err
    loaded = _gemini_reads(path.read_bytes())
    assert loaded["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./lint"  # type: ignore[index]
    assert "rehydrate" in loaded["mcpServers"]  # type: ignore[operator]
    assert "comments could not be kept" in r.out  # said, not silent
    assert rehydrate("install", "gemini", "mcp", "--uninstall").code == 0
    assert path.read_bytes() == own


def test_a_comment_is_not_allowed_where_the_harness_does_not_allow_it(repo: Path) -> None:
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'{\n  // no\n  "model": "opus"\n}\n')
    r = rehydrate("install", "claude")
    assert r.code == 3 and "not valid JSON" in r.err
    assert path.read_bytes() == b'{\n  // no\n  "model": "opus"\n}\n'


INLINE = b"""model = "gpt-5-codex"
mcp_servers = { docs = { command = "docs-server", args = ["--stdio"] } }

[tui]
notifications = true  # keep me
"""


def test_codex_inline_mcp_servers_stay_valid_toml(repo: Path) -> None:
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(INLINE)
    r = rehydrate("install", "mcp")
    assert r.code == 0, r.err
    new = path.read_bytes()
    loaded = tomllib.loads(new.decode())  # Codex could load it
    assert loaded["mcp_servers"]["docs"] == {"command": "docs-server", "args": ["--stdio"]}
    assert loaded["mcp_servers"]["rehydrate"]["args"] == ["mcp"]
    assert loaded["tui"] == {"notifications": True} and b"# keep me" in new
    assert rehydrate("install", "mcp").code == 0 and path.read_bytes() == new
    assert rehydrate("install", "mcp", "--uninstall").code == 0
    assert path.read_bytes() == INLINE


def test_codex_toml_changed_after_install_loses_only_our_server(repo: Path) -> None:
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(INLINE)
    assert rehydrate("install", "mcp").code == 0
    path.write_bytes(path.read_bytes() + b'\n[profiles.fast]\nmodel = "gpt-5-mini"\n')
    assert rehydrate("install", "mcp", "--uninstall").code == 0
    loaded = tomllib.loads(path.read_text())
    assert loaded["mcp_servers"] == {"docs": {"command": "docs-server", "args": ["--stdio"]}}
    assert loaded["profiles"] == {"fast": {"model": "gpt-5-mini"}}


def test_a_users_own_rehydrate_server_is_refused_untouched(repo: Path) -> None:
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    mine = b'[mcp_servers.rehydrate]\ncommand = "rehydrate"\nargs = ["mcp"]\nenv = { REHYDRATE_ACTOR = "bot" }\n'
    path.write_bytes(mine)
    r = rehydrate("install", "mcp")
    assert r.code == 3 and "defines [mcp_servers.rehydrate] already" in r.err
    assert path.read_bytes() == mine and not (repo / ".mcp.json").exists()


def test_invalid_toml_is_refused_untouched(repo: Path) -> None:
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_bytes(b"model = \n")
    r = rehydrate("install", "mcp")
    assert r.code == 3 and "not valid TOML" in r.err and "Traceback" not in r.err
    assert path.read_bytes() == b"model = \n"


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ('{"a": "// not a comment", "b": "/* nor this */"}', '{"a": "// not a comment", "b": "/* nor this */"}'),
        ('{"a": 1 // c\n}', '{"a": 1     \n}'),
        ('{/* x\ny */"a": "\\" // still a string"}', '{    \n    "a": "\\" // still a string"}'),
    ],
)
def test_strip_comments_leaves_strings_alone(text: str, plain: str) -> None:
    assert settings.strip_comments(text) == plain


def test_a_block_written_by_an_older_install_is_taken_over(repo: Path) -> None:
    path = repo / ".codex" / "config.toml"
    path.parent.mkdir()
    legacy = (
        b'model = "x"\n\n# rehydrate:begin (managed by rehydrate; edits inside this block are replaced)\n'
        b'[mcp_servers.rehydrate]\ncommand = "rehydrate"\nargs = ["mcp"]\n# rehydrate:end\n'
    )
    path.write_bytes(legacy)
    assert rehydrate("install", "mcp", "--uninstall").code == 0
    assert path.read_bytes() == b'model = "x"\n'
