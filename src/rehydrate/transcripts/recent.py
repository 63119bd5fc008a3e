"""What a transcript says happened since a time: the tail a recovery reads, never the whole file.

Contract of `read_since(path, since_ts, *, loads, max_bytes, harness=None, project=None, todos_back=TODOS_BACK)
-> Recent` (WP-B builds it, with the extractors in claude.py, codex.py and gemini.py; until then it raises
NotImplementedError and nothing calls it):
- path: opened with `open_regular` (a FIFO, a device or a folder is refused with OSError; so is a missing file).
- Reads backwards from the end to the first *stamped* record at or before since_ts (stamps compared as
  YYYY-MM-DDTHH:MM:SS.mmmZ strings, normalised without datetime; unstamped records inside the window are kept);
  since_ts None reads back to max_bytes. Lines that cannot hold a used record are refused by a byte test before
  parsing (Claude's progress and file-history-snapshot lines).
- max_bytes: the most bytes read back (4 MiB in hook scope, 64 MiB in recover, 16 MiB for the PreCompact capture).
  When it stops before since_ts, `cut` is True and `read_from` says where it stopped.
- loads: the JSON parser, from the caller (safejson.loads on the hook path), so that neither json nor re is imported
  here at run time. Nothing here imports the rest of rehydrate.
- harness: "claude", "codex" or "gemini"; None: detected from the file's first records.
- project: the project's root; when given, the file's records must name it (Claude `cwd`, Codex
  `session_meta.payload.cwd`, Gemini `projectHash`), else `foreign` is True and nothing else is extracted.
- todos_back: for the task list only, reading goes on past since_ts for at most this many bytes
  (`Todos.before_checkpoint` then True).
- Every string in a Recent is the transcript's text, untrusted: raw here, cleaned and bounded by the caller (the
  capture, the checks), fenced by the brief. Our own brief echoed back (`<system-reminder>`, `<hook_context>`) is
  never taken for a user message.
- Never raises for the file's content: bad lines are counted in `bad_lines`; only opening the file raises (OSError).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

TODOS_BACK = 1 << 20


class Msg:
    """A user or assistant message: its stamp (None: unstamped), its 1-based line in the file, its text."""

    __slots__ = ("line", "text", "ts")

    def __init__(self, ts: str | None, line: int, text: str) -> None:
        self.ts = ts
        self.line = line
        self.text = text


class Todos:
    """The agent's task list as the harness held it last: the tool that wrote it (TodoWrite, TaskCreate/TaskUpdate
    folded, update_plan, write_todos, or "prompt" for a user record's `todos` field), its line, whether it was
    written before since_ts, and its items as (text, status) pairs in order."""

    __slots__ = ("before_checkpoint", "items", "line", "tool")

    def __init__(self, tool: str, line: int, before_checkpoint: bool, items: list[tuple[str, str]]) -> None:
        self.tool = tool
        self.line = line
        self.before_checkpoint = before_checkpoint
        self.items = items


class Failed:
    """A command that failed: the tool (Bash, exec_command, shell, run_shell_command), the command, its exit code
    (None: not told), the first line of its error, its line, and whether a later run of the same command succeeded."""

    __slots__ = ("command", "error", "exit", "later_ok", "line", "tool")

    def __init__(
        self, tool: str, command: str, exit: int | None, error: str, line: int, later_ok: bool = False
    ) -> None:
        self.tool = tool
        self.command = command
        self.exit = exit
        self.error = error
        self.line = line
        self.later_ok = later_ok


class Recent:
    """What read_since found (see the module's docstring). harness, path, size (bytes when read); read_from (the byte
    offset reading went back to), cut, foreign; bad_lines, lines (lines read); first_ts, last_ts (the window's first
    and last stamps); tool_calls, changing_calls (edits, shell and patch calls, unknown tools; not reads, searches or
    todo writes); user (user messages, oldest first); assistant (the last assistant text); todos; edited (paths of
    successful edits, relative to the project when inside it, in order of first edit); failed (failed commands,
    oldest first); compacted_at (stamps of compactions the file records in the window)."""

    def __init__(self, harness: str, path: str, size: int) -> None:
        self.harness = harness
        self.path = path
        self.size = size
        self.read_from = size
        self.cut = False
        self.foreign = False
        self.bad_lines = 0
        self.lines = 0
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        self.tool_calls = 0
        self.changing_calls = 0
        self.user: list[Msg] = []
        self.assistant: Msg | None = None
        self.todos: Todos | None = None
        self.edited: list[str] = []
        self.failed: list[Failed] = []
        self.compacted_at: list[str] = []


def read_since(
    path: str,
    since_ts: str | None,
    *,
    loads: Callable[[str | bytes], Any],
    max_bytes: int,
    harness: str | None = None,
    project: str | None = None,
    todos_back: int = TODOS_BACK,
) -> Recent:
    """What the transcript at path says happened since since_ts (see the module's docstring)."""
    raise NotImplementedError("the transcript tail reader comes with WP-B")
