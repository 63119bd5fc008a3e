"""Claude Code session files: ~/.claude/projects/<project>/<session>.jsonl (and subagents' files); its home folder
and the tools that edit files (the harness's module holds a copy, kept equal by its tests), and the names its readers
know.

- read.py: a whole session file for the audit (compactions, usage, turns, tool calls and their failures);
- tail.py: the tail since a checkpoint (transcripts.recent.read_since), this format's FORMAT;
- tasks.py: the task list the task tools keep on disk, and how a task tool's call changes it.

Importing this folder's names (and its two content helpers) loads nothing else: the guard reads EDIT_TOOLS on every
tool call, and the tail reads no whole file.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

FILE_KEYS = ("file_path", "notebook_path", "path")
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")  # a tool input's file_path or notebook_path


def home(env: Mapping[str, str] | None = None) -> str:
    """Claude Code's user folder: $CLAUDE_CONFIG_DIR, else ~/.claude. env: the environment to read it
    from (None: this process's; a given one without HOME gives a relative path, which its caller refuses)."""
    if env is None:
        return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME") or "", ".claude")


# The transcript's tail since a checkpoint (transcripts.recent.read_since): what a Claude Code file holds of it.
READ_ONLY = ("Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "NotebookRead", "BashOutput", "TodoWrite")
TASK_TOOLS = ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet")  # the task list since 2.1.17, one task a call
NOT_PROMPTS: tuple[str, ...] = ("<command-name>", "<command-message>", "<local-command-", "<system-reminder>")
NOT_PROMPTS += ("Caveat:", "[Request interrupted by user", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
# The names the reader knows: anything else is counted in Recent.unknown (MCP tools, mcp__*, are the user's own).
KNOWN_TYPES: tuple[str, ...] = ("user", "assistant", "system", "summary", "progress", "attachment", "tag")
KNOWN_TYPES += ("file-history-snapshot", "queue-operation", "custom-title", "pr-link", "agent-name", "last-prompt")
KNOWN_SUBTYPES: tuple[str, ...] = ("compact_boundary", "microcompact_boundary", "stop_hook_summary", "turn_duration")
KNOWN_SUBTYPES += ("api_error", "local_command", "informational", "hook_error", "away_summary", "bridge_status")
KNOWN_TOOLS: tuple[str, ...] = (*READ_ONLY, *TASK_TOOLS, *EDIT_TOOLS, "Bash", "KillShell", "KillBash", "TodoRead")
KNOWN_TOOLS += ("TaskStop", "TaskOutput", "Task", "Agent", "Skill", "SlashCommand", "EnterPlanMode", "ExitPlanMode")
KNOWN_TOOLS += ("LSP", "AskUserQuestion", "ToolSearch", "ListMcpResourcesTool", "ReadMcpResourceTool")
KNOWN_TOOLS += ("EnterWorktree",)
# Built-in slash commands that act on the CLI itself, not requests to the model (/init, /review and a skill are).
_LOCAL: tuple[str, ...] = ("exit", "quit", "model", "mcp", "clear", "compact", "config", "settings", "status", "cost")
_LOCAL += ("usage", "help", "ide", "login", "logout", "resume", "context", "permissions", "allowed-tools", "hooks")
_LOCAL += ("doctor", "memory", "vim", "theme", "terminal-setup", "export", "agents", "add-dir", "bashes", "rewind")
_LOCAL += ("statusline", "privacy-settings", "release-notes", "upgrade", "plugin", "plugins", "output-style")
_LOCAL += ("sandbox", "bug", "feedback", "tasks", "copy", "fast", "stats", "keybindings", "rename", "todos")
LOCAL_COMMANDS = frozenset(_LOCAL)
REJECTED = "The user doesn't want to proceed with this tool use"
USER_SAID = "the user said:"


def error_text(content: Any) -> bool:
    """Whether a tool result's content is Claude Code's own error (<tool_use_error>...)."""
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):
        text = "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return text.lstrip().startswith("<tool_use_error>")


def content_text(content: Any) -> str:
    """A message's or tool result's content as text: the string, or its parts' texts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
