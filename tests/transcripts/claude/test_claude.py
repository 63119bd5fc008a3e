"""transcripts.claude: Claude Code's home folder, and a tool result's content as its readers take it."""

from __future__ import annotations

from rehydrate.transcripts import claude


def test_the_home_folder_is_claude_config_dir_else_dot_claude_in_home() -> None:
    assert claude.home({"CLAUDE_CONFIG_DIR": "/etc/cc", "HOME": "/home/u"}) == "/etc/cc"
    assert claude.home({"HOME": "/home/u"}) == "/home/u/.claude"
    assert claude.home({}) == ".claude"  # relative: its caller refuses it


def test_content_is_the_string_or_its_text_parts_joined() -> None:
    parts = [{"type": "text", "text": "one"}, {"type": "image"}, {"text": 7}, "loose", {"text": "two"}]
    assert claude.content_text("plain") == "plain"
    assert claude.content_text(parts) == "one\ntwo"
    assert claude.content_text({"text": "not a list"}) == "" and claude.content_text(None) == ""


def test_an_error_is_claude_code_s_own_tool_use_error_only() -> None:
    assert claude.error_text("  <tool_use_error>File has not been read yet</tool_use_error>")
    assert claude.error_text([{"type": "text", "text": "<tool_use_error>"}, {"text": "String not found"}])
    assert not claude.error_text("Exit code 1\n<tool_use_error>")
    assert not claude.error_text([{"type": "text", "text": "fine"}]) and not claude.error_text(None)
