"""What a transcript says, as every format returns it: a whole file read for the audit (Session, with its Turns,
ToolCalls and Compactions) and a tail read since a time (Recent, with its Msgs, Todos and Failed commands); the
stamps and project paths the formats write into them; and, for the type checker, the sides each format provides
(Tail, Whole).

Every string here is the transcript's text, untrusted: raw, cleaned and bounded by whoever shows it. Standard library
only at import (the hook path fills a Recent).
"""

from __future__ import annotations

import os
import posixpath

from rehydrate.transcripts.jsonl import canonical, json_parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal, Protocol

    class Tail(Protocol):
        """One format's tail since a time, as transcripts.recent.read_since reads it (each format's TAIL)."""

        TODO_MARKS: tuple[bytes, ...]  # a block of the file holding none of these holds no task list

        def refused(self, raw: bytes) -> bool:
            """Whether a line cannot be a record the tail uses, from its bytes (it is not parsed)."""

        def stamp(self, rec: dict[str, Any]) -> Any:
            """When a record was written, as the file says it (ends the window when at or before since)."""

        def names_other(self, head: list[dict[str, Any]], roots: tuple[str, ...]) -> bool:
            """Whether the file's first records name another project than roots."""

        def version(self, head: list[dict[str, Any]]) -> str | None:
            """The harness version the file's first records name."""

        def may_hold_todos(self, raw: bytes) -> bool:
            """Whether a line may hold or change the task list, from its bytes."""

        def holds_todos(self, rec: dict[str, Any]) -> bool:
            """Whether a record holds or changes the task list."""

        def todos_whole(self, rec: dict[str, Any]) -> bool:
            """Whether a record holds the whole task list (nothing older can change what it says)."""

        def extract(
            self,
            recent: Recent,
            window: list[tuple[int, dict[str, Any]]],
            before: list[tuple[int | None, dict[str, Any]]],
            roots: tuple[str, ...],
            loads: Callable[[str | bytes], Any],
            since: str | None,
        ) -> None:
            """What the window's records (and the task list's records before it) say, written into recent."""

    class Whole(Protocol):
        """One format's whole file, as transcripts.reader reads it for the audit (a module: claude.read, codex)."""

        def read(self, path: str, audit: bool, prefilter: bool) -> Session:
            """The whole file as a Session; audit: only what the audit uses; prefilter: lines it cannot use
            unparsed."""

        def starts_turn(self, rec: dict[str, Any]) -> bool:
            """Whether a record starts a turn (a user's own message)."""


# --- a whole file, read for the audit ---------------------------------------------------------------------------------


class Compaction:
    """One compaction: what triggered it, the context's size before and after it (tokens), and where it is."""

    def __init__(self, trigger: str | None, tokens_before: int | None, line: int, time: str | None) -> None:
        self.trigger = trigger
        self.tokens_before = tokens_before
        self.tokens_after: int | None = None  # the next usage after the compaction
        self.line = line
        self.time = time

    def as_dict(self) -> dict[str, Any]:
        return {
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "line": self.line,
            "time": self.time,
        }


class ToolCall:
    """One tool call: its name, the files it touched, whether it failed, and where it is.

    key: its name and input as canonical JSON (identical calls have the same key). same: equal for identical calls
    and only for them: the key itself, or a cheaper token from same_input (the key is made from it when asked); made
    from tool_input when first asked for (the audit asks only for calls that may repeat one: audit.symptoms)."""

    def __init__(
        self,
        ident: str | None,
        name: str,
        files: list[str],
        key: str | None,
        line: int,
        time: str | None,
        same: tuple[str, bytes] | str | None = None,
        tool_input: Any = None,
    ) -> None:
        self.ident = ident
        self.name = name
        self.files = files
        self._key = key
        self._same = same if key is None else key
        self._input = tool_input if self._same is None else None
        self.failed = False
        self.line = line
        self.time = time

    @property
    def same(self) -> tuple[str, bytes] | str | None:
        if self._same is None and self._input is not None:
            self._same, self._input = same_input(self.name, self._input), None
        return self._same

    @property
    def key(self) -> str:
        if self._key is None:  # made from `same`: the key itself, or (name, the input as orjson wrote it, sorted)
            same = self.same
            if isinstance(same, str):
                self._key = same
            else:
                assert isinstance(same, tuple)
                self._key = same[0] + " " + canonical(json_parser()(same[1]))
        return self._key


_sorted: Callable[[Any], bytes] | Literal[False] | None = None  # orjson's dumps with sorted keys, once loaded


def same_input(name: str, value: Any) -> tuple[str, bytes] | str:
    """A token equal for identical calls (name and input) and only for them, cheaper than the canonical key: the input
    as orjson writes it with sorted keys (as one-to-one as json.dumps's text: the same calls are equal); the key
    itself when orjson is missing or cannot write the input (nested too deeply: the key says so, as before)."""
    global _sorted
    if _sorted is None:  # imported here: the hook path fills a Recent from this module without orjson or functools
        try:
            from orjson import OPT_SORT_KEYS, dumps
        except ImportError:  # pragma: no cover - depends on the environment
            _sorted = False
        else:
            from functools import partial

            _sorted = partial(dumps, option=OPT_SORT_KEYS)
    if _sorted:
        try:
            return name, _sorted(value)
        except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError; deeper than orjson writes
            pass
    return name + " " + canonical(value)


class Turn:
    """One model turn with its context size (input plus cache tokens of its usage)."""

    def __init__(self, line: int, time: str | None, context: int | None) -> None:
        self.line = line
        self.time = time
        self.context = context


class Session:
    """What one transcript file says."""

    def __init__(self, path: str, harness: str) -> None:
        self.path = path
        self.harness = harness
        self.lines = 0
        self.bad_lines = 0
        self.user_turns = 0
        self.turns: list[Turn] = []
        self.tool_calls: list[ToolCall] = []
        self.compactions: list[Compaction] = []
        self.types: dict[str, int] = {}  # every record type seen, known or not, with its count

    def count(self, kind: str) -> None:
        self.types[kind] = self.types.get(kind, 0) + 1

    def usage(self, line: int, time: str | None, context: int | None) -> None:
        """A model turn's usage: a turn, and the size after any compaction still waiting for one."""
        self.turns.append(Turn(line, time, context))
        if context is not None:
            for c in self.compactions:
                if c.tokens_after is None and c.line < line:
                    c.tokens_after = context


# --- a tail since a time ---------------------------------------------------------------------------------------------


# What a user's message is: typed as a prompt, a slash command or skill ("/name args"), typed while the agent worked
# (queued), or the words the user gave when rejecting a tool call.
PROMPT, COMMAND, QUEUED, REJECTED = "prompt", "command", "queued", "rejected"
KINDS = (PROMPT, COMMAND, QUEUED, REJECTED)


class Msg:
    """A user or assistant message: its stamp (None: unstamped), its 1-based line in the file, its text, and for a
    user's message its kind (KINDS)."""

    __slots__ = ("kind", "line", "text", "ts")

    def __init__(self, ts: str | None, line: int, text: str, kind: str = PROMPT) -> None:
        self.ts = ts
        self.line = line
        self.text = text
        self.kind = kind


class Todos:
    """The agent's task list as the harness held it last: the tool that wrote it (TodoWrite, "task tools" for
    Claude Code's TaskCreate/TaskUpdate/TaskList folded, update_plan, write_todos, or "prompt" for a user record's
    `todos` field), the line of its last change (None: before the lines read), whether that change came before
    since_ts, and its items as (text, status) pairs in order."""

    __slots__ = ("before_checkpoint", "items", "line", "tool")

    def __init__(self, tool: str, line: int | None, before_checkpoint: bool, items: list[tuple[str, str]]) -> None:
        self.tool = tool
        self.line = line
        self.before_checkpoint = before_checkpoint
        self.items = items


class Failed:
    """A command that failed: the tool (Bash, exec_command, shell, run_shell_command), the command, its exit code
    (None: not told), the lines of its output that say what failed (telling()), its line, and whether a later run of
    the same command succeeded."""

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
    task list writes); user (user messages of every kind, oldest first); assistant (the last assistant text); todos;
    edited (paths of successful edits, relative to the project when inside it, in order of first edit); failed
    (failed commands, oldest first); compacted_at (stamps of compactions the file records in the window); line_base:
    the number of lines before read_from when known (0 when reading reached the file's start; with `numbered`, counted
    when cheap), every `line` then being the file's own; else None: lines are then counted from read_from (line 1 is
    the first line after it); unknown: what the reader met and does not know, by "type:NAME", "subtype:NAME" or
    "tool:NAME", with its count; version: the harness version the window's records name last."""

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
        self.line_base: int | None = 0  # lines are the file's when 0; else counted from read_from (line 1 after it)
        self.unknown: dict[str, int] = {}
        self.version: str | None = None

    def unknown_one(self, what: str) -> None:
        self.unknown[what] = self.unknown.get(what, 0) + 1


def stamp(value: object) -> str | None:
    """An ISO 8601 UTC stamp as YYYY-MM-DDTHH:MM:SS.mmmZ (fractions cut or padded to milliseconds, "+00:00" read as
    "Z"), so that stamps of different writers compare as strings; another offset or a non-string: as it is / None."""
    if not isinstance(value, str) or len(value) < 19 or value[10:11] != "T":
        return None
    text = value
    if text.endswith("Z"):
        text = text[:-1]
    elif text.endswith("+00:00"):
        text = text[:-6]
    else:
        return value
    whole, _, frac = text.partition(".")
    if len(whole) != 19 or (not frac.isdigit() and frac):
        return value
    return whole + "." + (frac + "000")[:3] + "Z"


def inside(path: str, roots: tuple[str, ...]) -> str:
    """path relative to the first of roots that holds it, else path as it is."""
    for root in roots:
        if path == root:
            return "."
        if root and path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1 :]
    if path.startswith("/"):
        norm = posixpath.normpath(path)
        if norm != path:
            return inside(norm, roots)
    return path


def roots_of(project: str | None) -> tuple[str, ...]:
    """The spellings of a project's root that a transcript may use: as given (normalised) and its real path."""
    if not project:
        return ()
    norm = os.path.normpath(os.path.abspath(project))
    real = os.path.realpath(norm)
    return (norm,) if real == norm else (norm, real)


def named(path: str, roots: tuple[str, ...]) -> bool:
    """Whether path is one of roots or inside one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def add_edit(recent: Recent, path: str, roots: tuple[str, ...]) -> None:
    rel = inside(path, roots)
    if rel not in recent.edited:
        recent.edited.append(rel)
